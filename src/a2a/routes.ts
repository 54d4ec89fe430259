import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { findAssistant } from "../assistants/resolve.ts";
import { authorizedRunRequest, guardMetadata, guardThread } from "../auth/guards.ts";
import { DomainError, notFound } from "../core/errors.ts";
import { sseFrame } from "../core/sse.ts";
import type { AssistantRow } from "../db/schema.ts";
import type { AppEnv } from "../http/app-env.ts";
import { sse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { notFoundError } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import {
  artifactUpdate,
  type Dialect,
  dialectOf,
  ERRORS,
  isFinal,
  METHODS,
  messageParts,
  rpcError,
  rpcResult,
  sendResult,
  statusUpdate,
  taskJson,
} from "./protocol.ts";
import { MessageSchema, RpcRequestSchema, SendConfigurationSchema } from "./schemas.ts";
import {
  agentCard,
  cancelTask,
  currentTask,
  findTask,
  requireA2aEnabled,
  settledTask,
  startTask,
  type TaskRef,
  taskRun,
} from "./service.ts";

/** The Agent-to-Agent protocol for every assistant (see service.ts): an agent card and a JSON-RPC endpoint. */

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
      summary:
        "A2A JSON-RPC: SendMessage / message/send, SendStreamingMessage / message/stream, GetTask / tasks/get, CancelTask / tasks/cancel",
      request: { params: z.object({ assistant_id: z.string().min(1) }) },
      responses: {
        200: {
          description:
            "JSON-RPC response (errors too), or for SendStreamingMessage / message/stream an SSE stream of JSON-RPC responses",
          content: { "application/json": { schema: z.unknown() }, "text/event-stream": { schema: z.string() } },
        },
        ...notFoundError,
      },
    }),
  ),
};

type Ctx = Context<AppEnv>;

async function assistantOr404(c: Ctx, id: string): Promise<AssistantRow> {
  const assistant = await findAssistant(c.env, c.get("principal").workspaceId, id);
  if (!assistant) throw notFound(`Assistant ${id} not found`);
  await guardMetadata(
    c,
    "assistants:read",
    { assistant_id: assistant.assistantId },
    assistant.metadata,
    `Assistant ${id} not found`,
  );
  return assistant;
}

/**
 * The task a JSON-RPC `params.id` names, or undefined (unknown, or hidden from this caller by the
 * `event` handler's filter: `threads:read` to get it, `threads:update` to cancel it).
 */
async function visibleTask(
  c: Ctx,
  taskId: unknown,
  event: "threads:read" | "threads:update",
): Promise<TaskRef | undefined> {
  const task = await findTask(c.env, c.get("principal").workspaceId, taskId);
  if (!task) return undefined;
  try {
    await guardThread(
      c,
      task.threadId,
      event,
      event === "threads:update" ? { action: "interrupt", run_ids: [task.runId] } : {},
    );
  } catch {
    return undefined;
  }
  return task;
}

/** SSE of JSON-RPC responses: the task, `working`, then (when it ends) its artifact and final status. */
function streamTask(c: Ctx, id: unknown, dialect: Dialect, started: TaskRef): Response {
  const frame = (result: unknown) => sseFrame(undefined, JSON.stringify(rpcResult(id, result)));
  const workspaceId = c.get("principal").workspaceId;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        const submitted = await currentTask(c.env, workspaceId, started);
        controller.enqueue(frame(sendResult(dialect, submitted)));
        if (!isFinal(submitted.state))
          controller.enqueue(frame(statusUpdate(dialect, { ...submitted, state: "working" }, false)));
        const done = await settledTask(c.env, workspaceId, started);
        if (done.artifactText !== undefined) controller.enqueue(frame(artifactUpdate(dialect, done)));
        controller.enqueue(frame(statusUpdate(dialect, done, true)));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        controller.enqueue(sseFrame(undefined, JSON.stringify(rpcError(id, ERRORS.internal, message))));
      }
      controller.close();
    },
  });
  return sse(c, body);
}

async function handleRpc(c: Ctx, assistant: AssistantRow): Promise<Response> {
  let envelope: unknown;
  try {
    envelope = await c.req.json();
  } catch {
    return c.json(rpcError(null, ERRORS.parse, "Parse error: the body is not valid JSON"));
  }
  const request = RpcRequestSchema.safeParse(envelope);
  if (!request.success) {
    const id = envelope !== null && typeof envelope === "object" && "id" in envelope ? envelope.id : undefined;
    return c.json(
      rpcError(id, ERRORS.invalidRequest, 'Invalid request: expected {"jsonrpc": "2.0", "method", "params", "id"}'),
    );
  }
  const { id, method } = request.data;
  const params = z.record(z.string(), z.unknown()).safeParse(request.data.params ?? {}).data ?? {};
  const dialect = dialectOf(method);
  const is = (names: readonly string[]) => names.includes(method);
  const workspaceId = c.get("principal").workspaceId;

  if (is(METHODS.send) || is(METHODS.stream)) {
    const message = MessageSchema.safeParse(params.message).data;
    const parts = messageParts(message);
    if (!message || !parts)
      return c.json(
        rpcError(id, ERRORS.invalidParams, "Invalid params: params.message needs at least one text or data part"),
      );
    const { threadId, run } = taskRun(assistant, message, parts);
    const started = await startTask(c.env, { ...(await authorizedRunRequest(c, run, threadId)), threadId });
    if (is(METHODS.stream)) return streamTask(c, id, dialect, started);
    const configuration = SendConfigurationSchema.safeParse(params.configuration).data;
    const blocking = configuration?.blocking !== false && configuration?.returnImmediately !== true;
    const task = blocking
      ? await settledTask(c.env, workspaceId, started)
      : await currentTask(c.env, workspaceId, started);
    return c.json(rpcResult(id, sendResult(dialect, task)));
  }
  if (is(METHODS.get) || is(METHODS.cancel)) {
    const found = await visibleTask(c, params.id, is(METHODS.get) ? "threads:read" : "threads:update");
    if (!found) return c.json(rpcError(id, ERRORS.taskNotFound, `Task not found: ${String(params.id)}`));
    const task = await currentTask(c.env, workspaceId, found);
    if (is(METHODS.get)) return c.json(rpcResult(id, taskJson(dialect, task)));
    if (isFinal(task.state))
      return c.json(rpcError(id, ERRORS.taskNotCancelable, `Task ${task.id} is ${task.state} and cannot be canceled`));
    return c.json(rpcResult(id, taskJson(dialect, await cancelTask(c.env, workspaceId, found))));
  }
  return c.json(rpcError(id, ERRORS.methodNotFound, `Method not found: ${method}`));
}

export const a2aRoutes = createRouter()
  .openapi(routes.card, async (c) => {
    requireA2aEnabled();
    const assistant = await assistantOr404(c, c.req.valid("query").assistant_id);
    return c.json(agentCard(assistant, new URL(`/a2a/${assistant.assistantId}`, c.req.url).toString()), 200);
  })
  .openapi(routes.rpc, async (c) => {
    requireA2aEnabled();
    const assistant = await assistantOr404(c, c.req.valid("param").assistant_id);
    try {
      return await handleRpc(c, assistant);
    } catch (error) {
      // Protocol errors stay JSON-RPC errors; a hidden or missing resource keeps its HTTP status.
      if (error instanceof DomainError && !["not_found", "unauthorized", "forbidden"].includes(error.kind)) {
        return c.json(
          rpcError(null, ERRORS.invalidParams, typeof error.detail === "string" ? error.detail : error.message),
        );
      }
      throw error;
    }
  });
