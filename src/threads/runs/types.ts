/** Run shapes shared by the ThreadDO (which executes runs) and the run routes. */

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
