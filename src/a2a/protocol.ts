/**
 * The two A2A wire dialects this server speaks on one JSON-RPC endpoint: v1.0 (methods such as
 * `SendMessage`, proto-JSON shapes: `TASK_STATE_*`, `ROLE_*`, parts without `kind`) and v0.3
 * (`message/send`, `kind`-tagged objects). Everything else works on the neutral shapes below.
 */

export type Dialect = "v1" | "v0.3";
export type TaskState = "submitted" | "working" | "completed" | "failed" | "canceled" | "input-required";

export interface NeutralPart {
  text?: string;
  data?: unknown;
}

export interface NeutralTask {
  id: string;
  contextId: string;
  state: TaskState;
  /** A status message from the agent (e.g. the error of a failed task). */
  statusText?: string;
  /** The answer, when there is one. */
  artifactText?: string;
  timestamp: string;
}

export const METHODS = {
  send: ["SendMessage", "message/send"],
  stream: ["SendStreamingMessage", "message/stream"],
  get: ["GetTask", "tasks/get"],
  cancel: ["CancelTask", "tasks/cancel"],
} as const;

export const dialectOf = (method: string): Dialect => (method.includes("/") ? "v0.3" : "v1");

/** JSON-RPC and A2A error codes. */
export const ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
} as const;

export function rpcError(id: unknown, code: number, message: string) {
  return { jsonrpc: "2.0" as const, id: id ?? null, error: { code, message } };
}

export function rpcResult(id: unknown, result: unknown) {
  return { jsonrpc: "2.0" as const, id, result };
}

/** The parts of a request message, whichever dialect sent it. */
export function messageParts(message: unknown): NeutralPart[] | null {
  if (!message || typeof message !== "object") return null;
  const parts = (message as { parts?: unknown }).parts;
  if (!Array.isArray(parts) || parts.length === 0) return null;
  return parts.map((part) => {
    const p = (part ?? {}) as Record<string, unknown>;
    if (typeof p.text === "string") return { text: p.text };
    if ("data" in p) return { data: p.data };
    return {};
  });
}

const V1_STATES: Record<TaskState, string> = {
  submitted: "TASK_STATE_SUBMITTED",
  working: "TASK_STATE_WORKING",
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  "input-required": "TASK_STATE_INPUT_REQUIRED",
};

const textPart = (dialect: Dialect, text: string) => (dialect === "v1" ? { text } : { kind: "text", text });

function statusJson(dialect: Dialect, task: NeutralTask) {
  const message = task.statusText
    ? dialect === "v1"
      ? {
          messageId: crypto.randomUUID(),
          contextId: task.contextId,
          taskId: task.id,
          role: "ROLE_AGENT",
          parts: [textPart(dialect, task.statusText)],
        }
      : {
          kind: "message",
          messageId: crypto.randomUUID(),
          contextId: task.contextId,
          taskId: task.id,
          role: "agent",
          parts: [textPart(dialect, task.statusText)],
        }
    : undefined;
  return {
    state: dialect === "v1" ? V1_STATES[task.state] : task.state,
    timestamp: task.timestamp,
    ...(message ? { message } : {}),
  };
}

export function artifactJson(dialect: Dialect, task: NeutralTask) {
  return { artifactId: `${task.id}-result`, name: "result", parts: [textPart(dialect, task.artifactText ?? "")] };
}

export function taskJson(dialect: Dialect, task: NeutralTask) {
  return {
    ...(dialect === "v0.3" ? { kind: "task" } : {}),
    id: task.id,
    contextId: task.contextId,
    status: statusJson(dialect, task),
    artifacts: task.artifactText === undefined ? [] : [artifactJson(dialect, task)],
  };
}

/** A send result, and a task in a stream: v1.0 wraps it (`{task}`); v0.3 sends the task itself. */
export const sendResult = (dialect: Dialect, task: NeutralTask) =>
  dialect === "v1" ? { task: taskJson(dialect, task) } : taskJson(dialect, task);

export function statusUpdate(dialect: Dialect, task: NeutralTask, final: boolean) {
  const event = { taskId: task.id, contextId: task.contextId, status: statusJson(dialect, task) };
  return dialect === "v1" ? { statusUpdate: event } : { kind: "status-update", ...event, final };
}

export function artifactUpdate(dialect: Dialect, task: NeutralTask) {
  const event = {
    taskId: task.id,
    contextId: task.contextId,
    artifact: artifactJson(dialect, task),
    append: false,
    lastChunk: true,
  };
  return dialect === "v1" ? { artifactUpdate: event } : { kind: "artifact-update", ...event };
}

export const isFinal = (state: TaskState) => state !== "submitted" && state !== "working";
