/** Wire shapes shared by the ThreadDO (which produces them) and the thread routes (which send them). */

import type { ErrorKind } from "../core/errors.ts";

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type TtlStrategy = "delete" | "keep_latest";

export interface TtlSetting {
  /** Minutes after the last update. */
  ttl: number;
  strategy: TtlStrategy;
}

export interface ThreadJson {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  config: Record<string, unknown>;
  values: Record<string, unknown>;
  interrupts: Record<string, unknown[]>;
  error: string | null;
  ttl?: { strategy: TtlStrategy; ttl_minutes: number; expires_at: string } | null;
}

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}

export interface ThreadTaskJson {
  id: string;
  name: string;
  path: unknown[];
  error: string | null;
  interrupts: unknown[];
  checkpoint: Record<string, unknown> | null;
  state: ThreadStateJson | null;
  result: unknown;
}

export interface ThreadStateJson {
  values: unknown;
  next: string[];
  tasks: ThreadTaskJson[];
  metadata: Record<string, unknown>;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  interrupts: unknown[];
}

/** Which checkpoint an operation targets: the latest when `checkpoint_id` is absent. */
export interface CheckpointSelector {
  checkpoint_id?: string | null;
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, unknown> | null;
}

/** The failures a thread answers with, in the domain's words: the Worker maps them to DomainErrors. */
export type FailureKind = Extract<ErrorKind, "not_found" | "conflict" | "invalid">;

export interface Success<T> {
  ok: true;
  value: T;
}

export interface Failure {
  ok: false;
  kind: FailureKind;
  detail: string;
}

/**
 * The thread does not exist. It carries no text: the Durable Object cannot name a thread it does not
 * hold, and the caller knows which id it asked for (see `unwrap` in client.ts).
 */
export interface ThreadMissing {
  ok: false;
  kind: "thread_not_found";
}

/**
 * Durable Object RPC drops error classes, so thread operations return their failures as values and
 * the Worker turns them into DomainErrors. No HTTP status crosses the RPC boundary.
 */
export type Outcome<T> = Success<T> | Failure | ThreadMissing;

/** An outcome whose failure always has its text: what the run manager answers. */
export type Result<T> = Success<T> | Failure;

export const ok = <T>(value: T): Success<T> => ({ ok: true, value });
export const fail = (kind: FailureKind, detail: string): Failure => ({ ok: false, kind, detail });
export const THREAD_MISSING: ThreadMissing = { ok: false, kind: "thread_not_found" };
