import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import { guardMetadata, guardThread } from "../auth/guards.ts";
import { database } from "../db/client.ts";
import { a2aTasks, type AssistantRow } from "../db/schema.ts";
import { deployment } from "../deployment/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { DomainError, notFound } from "../core/errors.ts";
import { createRouter } from "../http/router.ts";
import { notFoundError } from "../http/schemas.ts";
import { secured } from "../auth/secured.ts";
import type { RunJson } from "../threads/runs/types.ts";
import type { Outcome } from "../threads/types.ts";
import { finalText } from "../assistants/agents.ts";
import { findAssistant } from "../assistants/resolve.ts";
import { runInput } from "../threads/runs/service.ts";
import { threadStub, unwrap } from "../threads/client.ts";
import {
  artifactUpdate,
  dialectOf,
  ERRORS,
  isFinal,
  messageParts,
  METHODS,
  rpcError,
  rpcResult,
  sendResult,
  statusUpdate,
  taskJson,
  type Dialect,
  type NeutralTask,
} from "./protocol.ts";

/**
 * The Agent-to-Agent protocol for every assistant: an agent card and a JSON-RPC endpoint. A context
 * is a thread (a new one when the message names none), a task is a run on it, and the final state's
 * last AI message is the task's artifact.
 */

const tags = ["A2A"];
const json = (description: string) => ({ description, content: { "application/json": { schema: z.unknown() } } });

const routes = {
  card: secured(
    createRoute({
      method: "get",
      path: "/.well-known/agent-card.json",
      tags,
      summary: "The A2A agent card of an assistant",
      request: { query: z.object({ assistant_id: z.string().min(1) }) },
      responses: { 200: json("Agent card (A2A v1.0, with the v0.3 fields)"), ...notFoundError },
    }),
  ),
  rpc: secured(
    createRoute({
      method: "post",
      path: "/a2a/{assistant_id}",
      tags,
      summary: "A2A JSON-RPC: SendMessage / message/send, SendStreamingMessage / message/stream, GetTask / tasks/get, CancelTask / tasks/cancel",
      request: { params: z.object({ assistant_id: z.string().min(1) }) },
      responses: {
        200: {
          description: "JSON-RPC response (errors too), or for SendStreamingMessage / message/stream an SSE stream of JSON-RPC responses",
          content: { "application/json": { schema: z.unknown() }, "text/event-stream": { schema: z.string() } },
        },
        ...notFoundError,
      },
    }),
  ),
};

type Ctx = Context<AppEnv>;

function requireEnabled(): void {
  if (deployment.http.disable_a2a) throw notFound("A2A is disabled for this deployment (http.disable_a2a)");
}

async function assistantOr404(c: Ctx, id: string): Promise<AssistantRow> {
  const assistant = await findAssistant(c.env, c.get("principal").workspaceId, id);
  if (!assistant) throw notFound(`Assistant ${id} not found`);
  await guardMetadata(c, "assistants:read", { assistant_id: assistant.assistantId }, assistant.metadata, `Assistant ${id} not found`);
  return assistant;
}

function agentCard(c: Ctx, assistant: AssistantRow) {
  const url = new URL(`/a2a/${assistant.assistantId}`, c.req.url).toString();
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
    skills: [{ id: assistant.graphId, name: assistant.name, description, tags: [assistant.graphId], inputModes: modes, outputModes: modes }],
  };
}

/**
 * The graph input a message makes: text parts (and data that is not an object, as JSON) become the
 * user message in `messages`; object data parts are merged into the input as state values.
 */
function graphInput(parts: { text?: string; data?: unknown }[]): Record<string, unknown> {
  const isObject = (data: unknown) => data !== null && typeof data === "object" && !Array.isArray(data);
  const values = Object.assign({}, ...parts.filter((part) => isObject(part.data)).map((part) => part.data));
  const text = parts
    .filter((part) => !isObject(part.data))
    .map((part) => part.text ?? JSON.stringify(part.data ?? null))
    .join("\n");
  return { ...values, ...(text ? { messages: [{ role: "user", content: text }] } : {}) };
}

/** Starts the run a message becomes, on the message's context (thread) or a new one. */
async function startTask(c: Ctx, assistant: AssistantRow, message: Record<string, unknown>): Promise<{ threadId: string; runId: string }> {
  const contextId = typeof message.contextId === "string" && message.contextId ? message.contextId.toLowerCase() : undefined;
  const threadId = contextId ?? crypto.randomUUID();
  const body = {
    assistant_id: assistant.assistantId,
    input: graphInput(messageParts(message) ?? []),
    if_not_exists: "create" as const,
    metadata: { a2a_message_id: typeof message.messageId === "string" ? message.messageId : null },
  };
  const value = { ...body, thread_id: threadId };
  await guardThread(c, threadId, "threads:create_run", value, { allowMissing: true });
  const input = await runInput(c.env, c.get("principal"), { ...body, metadata: value.metadata }, { threadId, headers: c.req.raw.headers, user: c.get("user") });
  const created = (await threadStub(c.env, input.workspaceId, threadId).createRun(input)) as Outcome<{ run: RunJson }>;
  const { run } = unwrap(created, threadId);
  await database(c.env)
    .insert(a2aTasks)
    .values({ taskId: run.run_id, workspaceId: input.workspaceId, threadId, assistantId: assistant.assistantId, createdAt: run.created_at })
    .run();
  return { threadId, runId: run.run_id };
}

/** A task as it stands: its run's status, and for a finished run its outcome. */
async function taskOf(c: Ctx, threadId: string, runId: string): Promise<NeutralTask> {
  const stub = threadStub(c.env, c.get("principal").workspaceId, threadId);
  const run = unwrap((await stub.getRun(runId)) as Outcome<RunJson>, threadId);
  const base = { id: runId, contextId: threadId, timestamp: run.updated_at };
  if (run.status === "pending") return { ...base, state: "submitted" };
  if (run.status === "running") return { ...base, state: "working" };
  if (run.status === "interrupted") return { ...base, state: "canceled" };
  const outcome = (await stub.joinRun(runId)) as Outcome<string>;
  const result = outcome.ok ? (JSON.parse(outcome.value) as Record<string, unknown> | null) : null;
  const failure = result?.__error__ as { error: string; message: string } | undefined;
  if (run.status === "error" || failure) return { ...base, state: "failed", statusText: failure ? `${failure.error}: ${failure.message}` : "The run failed" };
  const pending = result?.__interrupt__ as { value?: unknown }[] | undefined;
  if (pending?.length) return { ...base, state: "input-required", statusText: JSON.stringify(pending[0]?.value ?? null), artifactText: finalText(result) };
  return { ...base, state: "completed", artifactText: finalText(result) };
}

/**
 * The task a JSON-RPC `params.id` names, or undefined (unknown, or hidden from this caller by the
 * `event` handler's filter: `threads:read` to get it, `threads:update` to cancel it).
 */
async function findTask(c: Ctx, taskId: unknown, event: "threads:read" | "threads:update"): Promise<{ threadId: string; runId: string } | undefined> {
  if (typeof taskId !== "string") return undefined;
  const { workspaceId } = c.get("principal");
  const row = await database(c.env)
    .select()
    .from(a2aTasks)
    .where(and(eq(a2aTasks.workspaceId, workspaceId), eq(a2aTasks.taskId, taskId.toLowerCase())))
    .get();
  if (!row) return undefined;
  try {
    await guardThread(c, row.threadId, event, event === "threads:update" ? { action: "interrupt", run_ids: [row.taskId] } : {});
  } catch {
    return undefined;
  }
  return { threadId: row.threadId, runId: row.taskId };
}

/** SSE of JSON-RPC responses: the task, `working`, then (when it ends) its artifact and final status. */
function streamTask(c: Ctx, id: unknown, dialect: Dialect, started: { threadId: string; runId: string }): Response {
  const encoder = new TextEncoder();
  const frame = (result: unknown) => encoder.encode(`data: ${JSON.stringify(rpcResult(id, result))}\n\n`);
  const stub = threadStub(c.env, c.get("principal").workspaceId, started.threadId);
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        const submitted = await taskOf(c, started.threadId, started.runId);
        controller.enqueue(frame(sendResult(dialect, submitted)));
        if (!isFinal(submitted.state)) controller.enqueue(frame(statusUpdate(dialect, { ...submitted, state: "working" }, false)));
        await stub.joinRun(started.runId);
        const done = await taskOf(c, started.threadId, started.runId);
        if (done.artifactText !== undefined) controller.enqueue(frame(artifactUpdate(dialect, done)));
        controller.enqueue(frame(statusUpdate(dialect, done, true)));
      } catch (error) {
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(rpcError(id, ERRORS.internal, (error as Error).message))}\n\n`));
      }
      controller.close();
    },
  });
  return new Response(body, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
}

async function handleRpc(c: Ctx, assistant: AssistantRow): Promise<Response> {
  let envelope: unknown;
  try {
    envelope = await c.req.json();
  } catch {
    return c.json(rpcError(null, ERRORS.parse, "Parse error: the body is not valid JSON"));
  }
  const request = envelope as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (!request || typeof request !== "object" || Array.isArray(request) || request.jsonrpc !== "2.0" || typeof request.method !== "string") {
    return c.json(rpcError(request?.id, ERRORS.invalidRequest, 'Invalid request: expected {"jsonrpc": "2.0", "method", "params", "id"}'));
  }
  const { id, method } = request;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const dialect = dialectOf(method);
  const is = (names: readonly string[]) => names.includes(method);

  if (is(METHODS.send) || is(METHODS.stream)) {
    const message = params.message as Record<string, unknown> | undefined;
    if (!messageParts(message)) return c.json(rpcError(id, ERRORS.invalidParams, "Invalid params: params.message needs at least one text or data part"));
    const started = await startTask(c, assistant, message!);
    if (is(METHODS.stream)) return streamTask(c, id, dialect, started);
    const configuration = (params.configuration ?? {}) as { blocking?: boolean; returnImmediately?: boolean };
    const blocking = configuration.blocking !== false && configuration.returnImmediately !== true;
    if (blocking) await threadStub(c.env, c.get("principal").workspaceId, started.threadId).joinRun(started.runId);
    return c.json(rpcResult(id, sendResult(dialect, await taskOf(c, started.threadId, started.runId))));
  }
  if (is(METHODS.get) || is(METHODS.cancel)) {
    const found = await findTask(c, params.id, is(METHODS.get) ? "threads:read" : "threads:update");
    if (!found) return c.json(rpcError(id, ERRORS.taskNotFound, `Task not found: ${String(params.id)}`));
    const task = await taskOf(c, found.threadId, found.runId);
    if (is(METHODS.get)) return c.json(rpcResult(id, taskJson(dialect, task)));
    if (isFinal(task.state)) return c.json(rpcError(id, ERRORS.taskNotCancelable, `Task ${task.id} is ${task.state} and cannot be canceled`));
    await threadStub(c.env, c.get("principal").workspaceId, found.threadId).cancelRuns({ runIds: [found.runId], action: "interrupt", wait: true });
    return c.json(rpcResult(id, taskJson(dialect, await taskOf(c, found.threadId, found.runId))));
  }
  return c.json(rpcError(id, ERRORS.methodNotFound, `Method not found: ${method}`));
}

export const a2aRoutes = createRouter()
  .openapi(routes.card, async (c) => {
    requireEnabled();
    return c.json(agentCard(c, await assistantOr404(c, c.req.valid("query").assistant_id)), 200);
  })
  .openapi(routes.rpc, async (c) => {
    requireEnabled();
    const assistant = await assistantOr404(c, c.req.valid("param").assistant_id);
    try {
      return (await handleRpc(c, assistant)) as never;
    } catch (error) {
      // Protocol errors stay JSON-RPC errors; a hidden or missing resource keeps its HTTP status.
      if (error instanceof DomainError && !["not_found", "unauthorized", "forbidden"].includes(error.kind)) {
        return c.json(rpcError(null, ERRORS.invalidParams, typeof error.detail === "string" ? error.detail : error.message)) as never;
      }
      throw error;
    }
  });
