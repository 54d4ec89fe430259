/**
 * What the ThreadDO and its callers share: the wire shapes (defined once, in schemas.ts) and the
 * outcomes a thread's RPC methods answer with.
 */

import type { ErrorKind } from "../core/errors.ts";

export type {
  CheckpointRef,
  CheckpointSelector,
  ThreadJson,
  ThreadStateJson,
  ThreadStatus,
  ThreadTaskJson,
  TtlSetting,
  TtlStrategy,
} from "./schemas.ts";

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
