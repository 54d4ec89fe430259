import { and, eq } from "drizzle-orm";
import { finalText } from "../assistants/agents.ts";
import { notFound } from "../core/errors.ts";
import { isObject } from "../core/json.ts";
import { type AssistantRow, a2aTasks } from "../db/schema.ts";
import { deployment } from "../deployment/index.ts";
import { threadStub, unwrap } from "../threads/client.ts";
import type { RunCreate } from "../threads/runs/schemas.ts";
import { createRun, type RunRequest } from "../threads/runs/service.ts";
import type { RunJson } from "../threads/runs/types.ts";
import type { Outcome } from "../threads/types.ts";
import { workspaceDatabase } from "../workspace/database.ts";
import type { NeutralPart, NeutralTask } from "./protocol.ts";

/**
 * The Agent-to-Agent protocol over runs: a context is a thread (a new one when the message names
 * none), a task is a run on it, and the final state's last AI message is the task's artifact.
 */

/** A task: the run, and the thread it runs on. */
export interface TaskRef {
  threadId: string;
  runId: string;
}

export function requireA2aEnabled(): void {
  if (deployment.http.disable_a2a) throw notFound("A2A is disabled for this deployment (http.disable_a2a)");
}

/** The agent card of an assistant, whose JSON-RPC endpoint is `url`. */
export function agentCard(assistant: AssistantRow, url: string) {
  const graph = deployment.graphs.find((g) => g.id === assistant.graphId);
  const description = assistant.description ?? graph?.description ?? `The "${assistant.graphId}" agent`;
  const modes = ["text/plain", "application/json"];
  return {
    name: assistant.name,
    description,
    version: deployment.versions.platform,
    // A2A v1.0
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    // A2A v0.3
    protocolVersion: "0.3.0",
    url,
    preferredTransport: "JSONRPC",
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [
      {
        id: assistant.graphId,
        name: assistant.name,
        description,
        tags: [assistant.graphId],
        inputModes: modes,
        outputModes: modes,
      },
    ],
  };
}

/**
 * The graph input a message makes: text parts (and data that is not an object, as JSON) become the
 * user message in `messages`; object data parts are merged into the input as state values.
 */
function graphInput(parts: NeutralPart[]): Record<string, unknown> {
  const values = Object.assign({}, ...parts.filter((part) => isObject(part.data)).map((part) => part.data));
  const text = parts
    .filter((part) => !isObject(part.data))
    .map((part) => part.text ?? JSON.stringify(part.data ?? null))
    .join("\n");
  return { ...values, ...(text ? { messages: [{ role: "user", content: text }] } : {}) };
}

/** The run a message becomes, and its thread: the message's context, or a new one. */
export function taskRun(
  assistant: AssistantRow,
  message: { contextId?: unknown; messageId?: unknown },
  parts: NeutralPart[],
): { threadId: string; run: RunCreate } {
  const contextId =
    typeof message.contextId === "string" && message.contextId ? message.contextId.toLowerCase() : undefined;
  return {
    threadId: contextId ?? crypto.randomUUID(),
    run: {
      assistant_id: assistant.assistantId,
      input: graphInput(parts),
      if_not_exists: "create",
      metadata: { a2a_message_id: typeof message.messageId === "string" ? message.messageId : null },
    },
  };
}

/** The workspace's A2A partition, where its tasks are recorded. */
const tasksDatabase = (env: Env, workspaceId: string) => workspaceDatabase(env, { workspaceId, kind: "a2a" });

/** Starts a task (the run is authorized already) and records it, so `tasks/get` finds it by its id. */
export async function startTask(env: Env, request: RunRequest & { threadId: string }): Promise<TaskRef> {
  const { threadId, caller } = request;
  const run = await createRun(env, request);
  await tasksDatabase(env, caller.workspaceId)
    .insert(a2aTasks)
    .values({
      taskId: run.run_id,
      workspaceId: caller.workspaceId,
      threadId,
      assistantId: request.run.assistant_id,
      createdAt: run.created_at,
    })
    .run();
  return { threadId, runId: run.run_id };
}

/** The recorded task a JSON-RPC `params.id` names, or undefined. */
export async function findTask(env: Env, workspaceId: string, taskId: unknown): Promise<TaskRef | undefined> {
  if (typeof taskId !== "string") return undefined;
  const row = await tasksDatabase(env, workspaceId)
    .select()
    .from(a2aTasks)
    .where(and(eq(a2aTasks.workspaceId, workspaceId), eq(a2aTasks.taskId, taskId.toLowerCase())))
    .get();
  return row ? { threadId: row.threadId, runId: row.taskId } : undefined;
}

/**
 * A task as its run stands. `result` reads the run's result (the joined JSON text): only asked for
 * once the run has ended.
 */
async function taskFrom(task: TaskRef, run: RunJson, result: () => Promise<Outcome<string>>): Promise<NeutralTask> {
  const base = { id: task.runId, contextId: task.threadId, timestamp: run.updated_at };
  if (run.status === "pending") return { ...base, state: "submitted" };
  if (run.status === "running") return { ...base, state: "working" };
  if (run.status === "interrupted") return { ...base, state: "canceled" };
  const outcome = await result();
  const values = outcome.ok ? (JSON.parse(outcome.value) as Record<string, unknown> | null) : null;
  const failure = values?.__error__ as { error: string; message: string } | undefined;
  if (run.status === "error" || failure)
    return {
      ...base,
      state: "failed",
      statusText: failure ? `${failure.error}: ${failure.message}` : "The run failed",
    };
  const pending = values?.__interrupt__ as { value?: unknown }[] | undefined;
  if (pending?.length)
    return {
      ...base,
      state: "input-required",
      statusText: JSON.stringify(pending[0]?.value ?? null),
      artifactText: finalText(values),
    };
  return { ...base, state: "completed", artifactText: finalText(values) };
}

const readRun = async (env: Env, workspaceId: string, task: TaskRef) =>
  unwrap(await threadStub(env, workspaceId, task.threadId).getRun(task.runId), task.threadId);

/** A task as it stands now: its run's status, and for a finished run its outcome. */
export async function currentTask(env: Env, workspaceId: string, task: TaskRef): Promise<NeutralTask> {
  const stub = threadStub(env, workspaceId, task.threadId);
  const run = await readRun(env, workspaceId, task);
  return taskFrom(task, run, () => stub.joinRun(task.runId));
}

/** Waits for the task's run to end (once), then the task as it ended. */
export async function settledTask(env: Env, workspaceId: string, task: TaskRef): Promise<NeutralTask> {
  const joined = await threadStub(env, workspaceId, task.threadId).joinRun(task.runId);
  const run = await readRun(env, workspaceId, task);
  return taskFrom(task, run, async () => joined);
}

/** Interrupts the task's run, waits for it to stop, and answers the task as it now stands. */
export async function cancelTask(env: Env, workspaceId: string, task: TaskRef): Promise<NeutralTask> {
  await threadStub(env, workspaceId, task.threadId).cancelRuns({
    runIds: [task.runId],
    action: "interrupt",
    wait: true,
  });
  return currentTask(env, workspaceId, task);
}
