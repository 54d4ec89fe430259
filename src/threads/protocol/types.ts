/**
 * Protocol v2 (thread-centric streaming) wire shapes: command envelopes in, responses and events out.
 * One thread's events share one sequence (`seq`), which is also each event's `event_id`.
 */

export const ERROR_CODES = [
  "invalid_argument",
  "unknown_command",
  "unknown_error",
  "no_such_run",
  "no_such_subscription",
  "no_such_namespace",
  "no_such_interrupt",
  "no_such_checkpoint",
  "permission_denied",
  "not_supported",
] as const;
export type ProtocolErrorCode = (typeof ERROR_CODES)[number];

export type Namespace = string[];

/** Subscribable channels; `custom:<name>` narrows `custom` to one named stream. */
export const CHANNELS = [
  "values",
  "updates",
  "messages",
  "tools",
  "custom",
  "lifecycle",
  "input",
  "tasks",
  "checkpoints",
] as const;
export type Channel = (typeof CHANNELS)[number];

/** The event method of each channel: only `input` differs. */
export type EventMethod = Exclude<Channel, "input"> | "input.requested";

export interface ProtocolEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: EventMethod;
  params: { namespace: Namespace; timestamp: number; node?: string; data: unknown };
}

/** An event before the thread numbers it. */
export interface EventDraft {
  method: EventMethod;
  namespace: Namespace;
  node?: string;
  data: unknown;
  timestamp?: number;
}

export interface ProtocolCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

export interface ResponseMeta {
  thread_id: string;
  applied_through_seq: number;
}

export interface ProtocolSuccess {
  type: "success";
  id: number;
  result: Record<string, unknown>;
  meta?: ResponseMeta;
}

export interface ProtocolError {
  type: "error";
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  meta?: ResponseMeta;
}

export type ProtocolResponse = ProtocolSuccess | ProtocolError;

/** Which events a connection (an SSE stream, or one WebSocket subscription) receives. */
export interface EventFilter {
  channels: string[];
  namespaces?: Namespace[];
  depth?: number;
  /** Only events after this sequence number. */
  since?: number;
}

/** A root lifecycle state, as `lifecycle` events and `agent.getTree` report it. */
export type LifecycleStatus = "running" | "completed" | "failed" | "interrupted";
