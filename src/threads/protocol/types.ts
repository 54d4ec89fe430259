/**
 * Protocol v2 (thread-centric streaming): error codes, channels and events. Commands, responses and
 * event filters are zod schemas (schemas.ts), their types inferred there.
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

const BASE_CHANNELS = new Set<string>(CHANNELS);

/** One of the base channels (not `custom:<name>`). */
export const isBaseChannel = (value: string): value is Channel => BASE_CHANNELS.has(value);

/** A channel a subscription may name: a base channel, or `custom:<name>`. */
export function isChannel(value: string): boolean {
  return isBaseChannel(value) || (value.startsWith("custom:") && value.length > "custom:".length);
}

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

/** A root lifecycle state, as `lifecycle` events and `agent.getTree` report it. */
export type LifecycleStatus = "running" | "completed" | "failed" | "interrupted";
