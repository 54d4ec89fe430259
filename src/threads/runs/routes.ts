import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authFilter, authorizedRunRequest, guardThread } from "../../auth/guards.ts";
import { filterAsContainment } from "../../core/auth-filter.ts";
import { mapInBatches } from "../../core/batches.ts";
import { isDomainError } from "../../core/errors.ts";
import { WORKER_CONNECTIONS } from "../../core/limits.ts";
import type { AppEnv } from "../../http/app-env.ts";
import { jsonBytes, noContent, sse } from "../../http/responses.ts";
import { createRouter } from "../../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../../http/schemas.ts";
import { securedRoute } from "../../http/secured.ts";
import { threadStub, unwrap } from "../client.ts";
import { ThreadIdParam } from "../schemas.ts";
import {
  BulkCancelSchema,
  CancelQuery,
  JoinStreamQuery,
  type RunCreate,
  RunCreateSchema,
  RunIdParams,
  RunListQuery,
  RunSchema,
  StatelessRunIdParams,
} from "./schemas.ts";
import {
  cancelRun,
  cancelWorkspaceRuns,
  createRun,
  createRunStream,
  createRunWait,
  joinRunBody,
  prepareRun,
  startRun,
} from "./service.ts";
import { singleEventStream } from "./streams.ts";
import { RUN_NOT_FOUND } from "./types.ts";

const tags = ["Thread Runs"];
const statelessTags = ["Stateless Runs"];
const errors = { ...notFoundError };
const sseContent = {
  description: "Server-sent events (see the streaming reference)",
  content: { "text/event-stream": { schema: z.string() } },
};
const WaitedSchema = z.unknown();
const waited = jsonContent(WaitedSchema, "The run's final values, or {__error__: {error, message}}");
const RunListSchema = z.array(RunSchema);

const route = securedRoute;
const threadRunRequest = { params: ThreadIdParam, body: jsonBody(RunCreateSchema) };
const statelessRunRequest = { body: jsonBody(RunCreateSchema) };

/**
 * `Last-Event-ID`: the SSE id of the last event the client saw, in digits; `-1` (or `-`) replays
 * from the start, and empty is absent. Anything else is refused: `parseInt` read `1e3` as 1 and
 * `abc` as nothing, replaying the wrong events without a word.
 */
const LastEventIdHeader = z.object({
  "last-event-id": z
    .string()
    .regex(
      /^(\d{1,15}|-1|-|)$/,
      "Last-Event-ID must be an event id in digits (at most 15), or -1 to replay from the start",
    )
    .optional(),
});

const routes = {
  create: route({
    method: "post",
    path: "/threads/{thread_id}/runs",
    tags,
    summary: "Create a background run",
    request: threadRunRequest,
    responses: {
      200: jsonContent(RunSchema, "The pending run; Content-Location names it"),
      ...errors,
      ...conflictError,
    },
  }),
  stream: route({
    method: "post",
    path: "/threads/{thread_id}/runs/stream",
    tags,
    summary: "Create a run and stream its output",
    request: threadRunRequest,
    responses: { 200: sseContent, ...errors, ...conflictError },
  }),
  wait: route({
    method: "post",
    path: "/threads/{thread_id}/runs/wait",
    tags,
    summary: "Create a run and wait for its final values",
    request: threadRunRequest,
    responses: { 200: waited, ...errors, ...conflictError },
  }),
  list: route({
    method: "get",
    path: "/threads/{thread_id}/runs",
    tags,
    summary: "List a thread's runs, newest first",
    request: { params: ThreadIdParam, query: RunListQuery },
    responses: { 200: jsonContent(z.array(RunSchema), "Runs"), ...errors },
  }),
  get: route({
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}",
    tags,
    summary: "Get a run",
    request: { params: RunIdParams },
    responses: { 200: jsonContent(RunSchema, "The run"), ...errors },
  }),
  delete: route({
    method: "delete",
    path: "/threads/{thread_id}/runs/{run_id}",
    tags,
    summary: "Delete a run (an active one is cancelled first)",
    request: { params: RunIdParams },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors },
  }),
  cancel: route({
    method: "post",
    path: "/threads/{thread_id}/runs/{run_id}/cancel",
    tags,
    summary: "Cancel a run",
    request: { params: RunIdParams, query: CancelQuery },
    responses: { 200: jsonContent(RunSchema, "The run after cancellation"), ...errors },
  }),
  join: route({
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}/join",
    tags,
    summary: "Wait for a run and return its final values",
    request: { params: RunIdParams },
    responses: { 200: waited, ...errors },
  }),
  joinStream: route({
    method: "get",
    path: "/threads/{thread_id}/runs/{run_id}/stream",
    tags,
    summary: "Join a run's event stream (Last-Event-ID replays a resumable run)",
    request: { params: RunIdParams, query: JoinStreamQuery, headers: LastEventIdHeader },
    responses: { 200: sseContent, ...errors },
  }),
  threadStream: route({
    method: "get",
    path: "/threads/{thread_id}/stream",
    tags,
    summary: "Stream the events of every run of a thread",
    request: {
      params: ThreadIdParam,
      query: z.object({
        stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
        stream_modes: z.union([z.string(), z.array(z.string())]).optional(),
      }),
      headers: LastEventIdHeader,
    },
    responses: { 200: sseContent, ...errors },
  }),
  statelessCreate: route({
    method: "post",
    path: "/runs",
    tags: statelessTags,
    summary: "Create a background run without a thread",
    request: statelessRunRequest,
    responses: { 200: jsonContent(RunSchema, "The pending run"), ...errors },
  }),
  statelessStream: route({
    method: "post",
    path: "/runs/stream",
    tags: statelessTags,
    summary: "Run without a thread and stream its output",
    request: statelessRunRequest,
    responses: { 200: sseContent, ...errors },
  }),
  statelessWait: route({
    method: "post",
    path: "/runs/wait",
    tags: statelessTags,
    summary: "Run without a thread and wait for its final values",
    request: statelessRunRequest,
    responses: { 200: waited, ...errors },
  }),
  batch: route({
    method: "post",
    path: "/runs/batch",
    tags: statelessTags,
    summary: "Create many background runs without threads",
    request: { body: jsonBody(z.array(RunCreateSchema).min(1).max(100)) },
    responses: { 200: jsonContent(z.array(RunSchema), "The pending runs"), ...errors },
  }),
  bulkCancel: route({
    method: "post",
    path: "/runs/cancel",
    tags: statelessTags,
    summary: "Cancel runs: of a thread, stateless runs by id, or every run of the workspace with a status",
    request: {
      query: z.object({ action: z.enum(["interrupt", "rollback"]).default("interrupt") }),
      body: jsonBody(BulkCancelSchema),
    },
    responses: { 204: { description: "Cancelled" }, ...errors },
  }),
  statelessJoinStream: route({
    method: "get",
    path: "/runs/{run_id}/stream",
    tags: statelessTags,
    summary: "Join the event stream of a stateless run",
    request: { params: StatelessRunIdParams, query: JoinStreamQuery, headers: LastEventIdHeader },
    responses: { 200: sseContent, ...errors },
  }),
};

type Ctx = Context<AppEnv>;
const threadLocation = (threadId: string, runId: string) => `/threads/${threadId}/runs/${runId}`;
const statelessLocation = (runId: string) => `/runs/${runId}`;

/** A run stream's headers besides the SSE ones; `Location` lets the SDK reconnect with Last-Event-ID. */
function sseHeaders(location?: string, contentLocation?: string): Record<string, string> {
  return {
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    ...(location ? { Location: location } : {}),
    ...(contentLocation ? { "Content-Location": contentLocation } : {}),
  };
}

/** `Last-Event-ID`: a run event sequence number, as validated by `LastEventIdHeader`. */
function lastEventId(header: string | undefined): number | undefined {
  if (header === undefined || header === "") return undefined;
  if (header === "-") return -1;
  return Number(header);
}

/**
 * A join that cannot follow its run still opens its stream, as the official server's joins do: a
 * hidden or unknown run or thread becomes one `error` event whose message names the 404 (the SDK's
 * `joinStream` yields it). `detail` replaces the error's own text (stateless runs have no thread to
 * name).
 */
async function joinedOrNotFoundEvent(
  open: () => Promise<ReadableStream<Uint8Array>>,
  detail?: string,
): Promise<ReadableStream<Uint8Array>> {
  try {
    return await open();
  } catch (error) {
    if (!isDomainError(error, "not_found")) throw error;
    return singleEventStream("error", { error: "HTTPException", message: `404: ${detail ?? error.message}` });
  }
}

async function createAndStream(c: Ctx, body: RunCreate, threadId?: string) {
  const request = await authorizedRunRequest(c, body, threadId);
  const { run, stream } = await createRunStream(c.env, request, {
    cancelOnDisconnect: body.on_disconnect === "cancel",
  });
  const location = threadId ? threadLocation(threadId, run.run_id) : statelessLocation(run.run_id);
  return sse(c, stream, sseHeaders(`${location}/stream`, location));
}

async function createAndWait(c: Ctx, body: RunCreate, threadId?: string) {
  const { run, body: result } = await createRunWait(c.env, await authorizedRunRequest(c, body, threadId));
  const location = threadId ? threadLocation(threadId, run.run_id) : statelessLocation(run.run_id);
  return jsonBytes<typeof WaitedSchema>(c, result, { "Content-Location": location });
}

export const runRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const { thread_id } = c.req.valid("param");
    const run = await createRun(c.env, await authorizedRunRequest(c, c.req.valid("json"), thread_id));
    c.header("Content-Location", threadLocation(thread_id, run.run_id));
    return c.json(run, 200);
  })
  .openapi(routes.stream, (c) => createAndStream(c, c.req.valid("json"), c.req.valid("param").thread_id))
  .openapi(routes.wait, (c) => createAndWait(c, c.req.valid("json"), c.req.valid("param").thread_id))
  .openapi(routes.list, async (c) => {
    const { thread_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:read");
    // The page arrives as JSON bytes: several multi-MB runs outgrow one RPC result.
    const runs = unwrap(
      await threadStub(c.env, c.get("principal").workspaceId, thread_id).listRuns(c.req.valid("query")),
      thread_id,
    );
    return jsonBytes<typeof RunListSchema>(c, runs);
  })
  .openapi(routes.get, async (c) => {
    const { thread_id, run_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:read");
    const run = unwrap(await threadStub(c.env, c.get("principal").workspaceId, thread_id).getRun(run_id), thread_id);
    return c.json(run, 200);
  })
  .openapi(routes.delete, async (c) => {
    const { thread_id, run_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:delete", { run_id });
    unwrap(await threadStub(c.env, c.get("principal").workspaceId, thread_id).deleteRun(run_id), thread_id);
    return c.json({}, 200);
  })
  .openapi(routes.cancel, async (c) => {
    const { thread_id, run_id } = c.req.valid("param");
    const { wait, action } = c.req.valid("query");
    await guardThread(c, thread_id, "threads:update", { action, run_ids: [run_id] });
    return c.json(await cancelRun(c.env, c.get("principal").workspaceId, thread_id, run_id, { action, wait }), 200);
  })
  .openapi(routes.join, async (c) => {
    const { thread_id, run_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:read");
    // The 200 is sent before the run ends, so a run that vanishes meanwhile is reported in the body.
    return jsonBytes<typeof WaitedSchema>(
      c,
      await joinRunBody(c.env, c.get("principal").workspaceId, thread_id, run_id),
    );
  })
  .openapi(routes.joinStream, async (c) => {
    const { thread_id, run_id } = c.req.valid("param");
    const { cancel_on_disconnect } = c.req.valid("query");
    const stream = await joinedOrNotFoundEvent(async () => {
      await guardThread(c, thread_id, "threads:read");
      const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).streamRun(run_id, {
        lastEventId: lastEventId(c.req.valid("header")["last-event-id"]),
        cancelOnDisconnect: cancel_on_disconnect,
      });
      return unwrap(outcome, thread_id);
    });
    return sse(c, stream, sseHeaders());
  })
  .openapi(routes.threadStream, async (c) => {
    const { thread_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:read");
    const stream = unwrap(
      await threadStub(c.env, c.get("principal").workspaceId, thread_id).streamThread(
        lastEventId(c.req.valid("header")["last-event-id"]),
      ),
      thread_id,
    );
    return sse(c, stream, sseHeaders());
  })
  .openapi(routes.statelessCreate, async (c) => {
    const run = await createRun(c.env, await authorizedRunRequest(c, c.req.valid("json")));
    c.header("Content-Location", statelessLocation(run.run_id));
    return c.json(run, 200);
  })
  .openapi(routes.statelessStream, (c) => createAndStream(c, c.req.valid("json")))
  .openapi(routes.statelessWait, (c) => createAndWait(c, c.req.valid("json")))
  .openapi(routes.batch, async (c) => {
    // Every body is checked (auth, assistant, limits) before any run starts, so a refused batch
    // leaves nothing behind. Each run is its own thread; they start a few at a time.
    const prepared = await mapInBatches(c.req.valid("json"), WORKER_CONNECTIONS, async (body) =>
      prepareRun(c.env, await authorizedRunRequest(c, body)),
    );
    const runs = await mapInBatches(prepared, WORKER_CONNECTIONS, (input) => startRun(c.env, input));
    return c.json(runs, 200);
  })
  .openapi(routes.bulkCancel, async (c) => {
    const { action } = c.req.valid("query");
    const body = c.req.valid("json");
    const workspaceId = c.get("principal").workspaceId;
    if (body.thread_id) {
      await guardThread(c, body.thread_id, "threads:update", { action, run_ids: body.run_ids ?? null });
      unwrap(
        await threadStub(c.env, workspaceId, body.thread_id).cancelRuns({
          runIds: body.run_ids ?? undefined,
          status: body.status ?? "all",
          action,
        }),
        body.thread_id,
      );
    } else if (!body.run_ids) {
      const status = body.status ?? "all";
      const authMetadata = filterAsContainment(await authFilter(c, "threads:update", { action, status }));
      await cancelWorkspaceRuns(c.env, workspaceId, { status, action, authMetadata });
    } else {
      // A stateless run lives in the thread named by its own id.
      for (const runId of body.run_ids) {
        await guardThread(c, runId, "threads:update", { action, run_ids: [runId] });
        const outcome = await threadStub(c.env, workspaceId, runId).cancelRuns({ runIds: [runId], action });
        if (!outcome.ok) unwrap({ ok: false, kind: "not_found", detail: `Run ${runId} not found` }, runId);
      }
    }
    return noContent(c);
  })
  .openapi(routes.statelessJoinStream, async (c) => {
    const { run_id } = c.req.valid("param");
    const { cancel_on_disconnect } = c.req.valid("query");
    // A stateless run lives in the thread named by its id; that thread is gone once the run ended
    // (on_completion delete), so a finished run is as unknown as one that never was.
    const stream = await joinedOrNotFoundEvent(async () => {
      await guardThread(c, run_id, "threads:read");
      const outcome = await threadStub(c.env, c.get("principal").workspaceId, run_id).streamRun(run_id, {
        lastEventId: lastEventId(c.req.valid("header")["last-event-id"]),
        cancelOnDisconnect: cancel_on_disconnect,
      });
      return unwrap(outcome, run_id);
    }, RUN_NOT_FOUND);
    return sse(c, stream, sseHeaders(undefined, statelessLocation(run_id)));
  });
