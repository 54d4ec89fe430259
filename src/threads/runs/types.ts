/** Run shapes and failure texts shared by the ThreadDO (which executes runs) and the run routes. */

import type { CheckpointSelector } from "../schemas.ts";
import type { MultitaskStrategy, RunKwargs } from "./schemas.ts";

// The run's wire shapes and constants are defined once, in schemas.ts.
export type {
  CancelAction,
  MultitaskStrategy,
  RunCommand,
  RunJson,
  RunKwargs,
  RunStatus,
  StreamMode,
} from "./schemas.ts";

/** What the Worker hands the thread to create a run. */
export interface CreateRunInput {
  runId: string;
  threadId: string;
  workspaceId: string;
  assistantId: string;
  graphId: string;
  /** Assistant config/context/metadata, merged below thread and request values. */
  assistant: { config: Record<string, unknown>; context: Record<string, unknown>; metadata: Record<string, unknown> };
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  checkpoint: CheckpointSelector | null;
  multitaskStrategy: MultitaskStrategy;
  ifNotExists: "create" | "reject";
  afterSeconds: number;
  userId: string | null;
  /**
   * The custom-auth user the run acts for. Nodes see it in `config.configurable`; it is stored apart
   * from the run's API-visible fields, since it may hold the user's secrets.
   */
  authUser: Record<string, unknown> | null;
  /** A temporary thread for a stateless run (its id is the run id). */
  stateless: boolean;
  /** The run's wall-clock limit (`BG_JOB_TIMEOUT_SECS` when it was created), from its first start. */
  timeoutMs: number;
}

/** Texts of run failures, shared by the run manager (inside the thread) and the run routes and service. */
export const THREAD_BUSY =
  "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.";
export const RUN_NOT_FOUND = "Run not found";

/**
 * What readers and waiters of a run get when its thread is deleted under it: a 404 that arrives
 * after the response began, shaped as the official server reports one inside a stream.
 */
export function threadDeletedError(threadId: string): { error: string; message: string } {
  return { error: "HTTPException", message: `404: Thread ${threadId} was deleted while the run was in progress` };
}
