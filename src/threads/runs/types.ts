/** Run shapes shared by the ThreadDO (which executes runs) and the run routes. */

export const RUN_STATUSES = ["pending", "running", "error", "success", "timeout", "interrupted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "debug",
  "events",
  "custom",
  "tasks",
  "checkpoints",
  "tools",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

export type MultitaskStrategy = "reject" | "enqueue" | "interrupt" | "rollback";
export type CancelAction = "interrupt" | "rollback";

export interface RunCommand {
  resume?: unknown;
  update?: unknown;
  goto?: unknown;
}

/** Everything the run was created with, as the API reports it in `kwargs`. */
export interface RunKwargs {
  input: unknown;
  command: RunCommand | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  stream_mode: StreamMode[];
  subgraphs: boolean;
  resumable: boolean;
  interrupt_before: string[] | "*" | null;
  interrupt_after: string[] | "*" | null;
  webhook: string | null;
  on_completion: "delete" | "keep" | null;
  durability: "sync" | "async" | "exit" | null;
  /** The SDK's `_langsmithTracer`: which tracing project this run is traced into. */
  langsmith_tracer?: { project_name?: string; example_id?: string } | null;
  /** Copied `x-*` request headers and the user agent, for config.configurable. */
  headers: Record<string, string>;
}

export interface RunJson {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: RunKwargs;
  multitask_strategy: MultitaskStrategy;
}

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
  checkpoint: { checkpoint_id?: string | null; checkpoint_ns?: string; checkpoint_map?: Record<string, unknown> | null } | null;
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
}

