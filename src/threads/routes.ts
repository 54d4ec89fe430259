import { z } from "@hono/zod-openapi";
import { authFilter, authorizerOf, guardThread } from "../auth/guards.ts";
import { filterAsContainment } from "../core/auth-filter.ts";
import { conflict, isDomainError } from "../core/errors.ts";
import { BoolQuery } from "../core/schemas.ts";
import { page } from "../http/pagination.ts";
import { jsonBytes } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import { threadStub, unwrap } from "./client.ts";
import {
  CheckpointIdParam,
  HistoryQuerySchema,
  HistoryRequestSchema,
  StateCheckpointSchema,
  StateUpdateSchema,
  ThreadCountSchema,
  ThreadCreateSchema,
  ThreadIdParam,
  ThreadPatchSchema,
  ThreadPruneSchema,
  ThreadSchema,
  ThreadSearchSchema,
  ThreadStateSchema,
} from "./schemas.ts";
import { copyThread, countThreads, createThread, pruneThreads, searchThreads, THREAD_NOT_FOUND } from "./service.ts";

const tags = ["Threads"];
const errors = { ...notFoundError };

const route = securedRoutes(tags);

const ThreadHistorySchema = z.array(ThreadStateSchema);

const routes = {
  create: route({
    method: "post",
    path: "/threads",
    summary: "Create a thread, optionally prepopulated by supersteps",
    request: { body: jsonBody(ThreadCreateSchema) },
    responses: { 200: jsonContent(ThreadSchema, "The thread"), ...errors, ...conflictError },
  }),
  search: route({
    method: "post",
    path: "/threads/search",
    summary: "Search threads",
    request: { body: jsonBody(ThreadSearchSchema) },
    responses: {
      200: jsonContent(
        z.array(ThreadSchema.partial()),
        "Matching threads; X-Pagination-Total and X-Pagination-Next headers",
      ),
      ...errors,
    },
  }),
  count: route({
    method: "post",
    path: "/threads/count",
    summary: "Count threads",
    request: { body: jsonBody(ThreadCountSchema) },
    responses: { 200: jsonContent(z.number().int(), "Number of matching threads"), ...errors },
  }),
  prune: route({
    method: "post",
    path: "/threads/prune",
    summary: "Delete threads, or compact them to their latest checkpoint",
    request: { body: jsonBody(ThreadPruneSchema) },
    responses: {
      200: jsonContent(
        z.object({
          pruned_count: z.number().int().describe("Threads pruned by this request"),
          queued_count: z
            .number()
            .int()
            .optional()
            .describe(
              "Present when the threads were more than one request's subrequest budget: how many more the background queue prunes",
            ),
        }),
        "How many threads were pruned",
      ),
      ...errors,
    },
  }),
  get: route({
    method: "get",
    path: "/threads/{thread_id}",
    summary: "Get a thread",
    request: {
      params: ThreadIdParam,
      query: z.object({ include: z.union([z.string(), z.array(z.string())]).optional() }),
    },
    responses: { 200: jsonContent(ThreadSchema, "The thread"), ...errors },
  }),
  patch: route({
    method: "patch",
    path: "/threads/{thread_id}",
    summary: "Update a thread's metadata (merged) or TTL",
    request: { params: ThreadIdParam, body: jsonBody(ThreadPatchSchema) },
    responses: { 200: jsonContent(ThreadSchema, "The thread"), ...errors },
  }),
  delete: route({
    method: "delete",
    path: "/threads/{thread_id}",
    summary: "Delete a thread and all its checkpoints",
    request: { params: ThreadIdParam },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors },
  }),
  copy: route({
    method: "post",
    path: "/threads/{thread_id}/copy",
    summary: "Copy a thread with its whole history",
    request: { params: ThreadIdParam },
    responses: { 200: jsonContent(ThreadSchema, "The new thread"), ...errors, ...conflictError },
  }),
  getState: route({
    method: "get",
    path: "/threads/{thread_id}/state",
    summary: "Latest state of a thread",
    request: { params: ThreadIdParam, query: z.object({ subgraphs: BoolQuery }) },
    responses: { 200: jsonContent(ThreadStateSchema, "The state"), ...errors },
  }),
  updateState: route({
    method: "post",
    path: "/threads/{thread_id}/state",
    summary: "Update a thread's state (a new checkpoint with source `update`)",
    request: { params: ThreadIdParam, body: jsonBody(StateUpdateSchema) },
    responses: {
      200: jsonContent(z.object({ checkpoint: z.record(z.string(), z.unknown()).nullable() }), "The new checkpoint"),
      ...errors,
      ...conflictError,
    },
  }),
  getStateAt: route({
    method: "get",
    path: "/threads/{thread_id}/state/{checkpoint_id}",
    summary: "State of a thread at a checkpoint",
    request: { params: CheckpointIdParam, query: z.object({ subgraphs: BoolQuery }) },
    responses: { 200: jsonContent(ThreadStateSchema, "The state"), ...errors },
  }),
  getStateAtCheckpoint: route({
    method: "post",
    path: "/threads/{thread_id}/state/checkpoint",
    summary: "State of a thread at a checkpoint (namespace, id, map)",
    request: { params: ThreadIdParam, body: jsonBody(StateCheckpointSchema) },
    responses: { 200: jsonContent(ThreadStateSchema, "The state"), ...errors },
  }),
  historyGet: route({
    method: "get",
    path: "/threads/{thread_id}/history",
    summary: "State history, most recent first",
    request: { params: ThreadIdParam, query: HistoryQuerySchema },
    responses: { 200: jsonContent(ThreadHistorySchema, "States"), ...errors },
  }),
  history: route({
    method: "post",
    path: "/threads/{thread_id}/history",
    summary: "State history with filters, most recent first",
    request: { params: ThreadIdParam, body: jsonBody(HistoryRequestSchema) },
    responses: { 200: jsonContent(ThreadHistorySchema, "States"), ...errors },
  }),
};

export const threadRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const { workspaceId } = c.get("principal");
    const threadId = body.thread_id ?? crypto.randomUUID();
    const value = { thread_id: threadId, metadata: body.metadata, if_exists: body.if_exists };
    const filter = await authFilter(c, "threads:create", value);
    const thread = await createThread(
      c.env,
      {
        threadId,
        workspaceId,
        metadata: value.metadata,
        ifExists: body.if_exists,
        graphId: body.graph_id,
        supersteps: body.supersteps?.map((s) => ({
          updates: s.updates.map((u) => ({ ...u, command: u.command ?? undefined })),
        })),
        ttl: body.ttl,
      },
      filter,
    );
    return c.json(thread, 200);
  })
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const filter = await authFilter(c, "threads:search", { ...body });
    const { threads, total } = await searchThreads(c.env, c.get("principal").workspaceId, {
      authMetadata: filterAsContainment(filter),
      metadata: body.metadata,
      values: body.values,
      status: body.status,
      ids: body.ids,
      limit: body.limit,
      offset: body.offset,
      sortBy: body.sort_by,
      sortOrder: body.sort_order,
    });
    return c.json(page(c, threads, total, body.offset, body.select), 200);
  })
  .openapi(routes.count, async (c) => {
    const body = c.req.valid("json");
    const filter = await authFilter(c, "threads:search", { ...body });
    const total = await countThreads(c.env, c.get("principal").workspaceId, {
      ...body,
      authMetadata: filterAsContainment(filter),
    });
    return c.json(total, 200);
  })
  .openapi(routes.prune, async (c) => {
    const { thread_ids, strategy } = c.req.valid("json");
    const filter = await authFilter(c, "threads:delete", { thread_ids, strategy });
    const { pruned, queued } = await pruneThreads(
      c.env,
      c.get("principal").workspaceId,
      thread_ids,
      strategy,
      filterAsContainment(filter),
    );
    return c.json({ pruned_count: pruned, ...(queued ? { queued_count: queued } : {}) }, 200);
  })
  .openapi(routes.get, async (c) => {
    const { thread_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:read");
    const include = [c.req.valid("query").include ?? []].flat().flatMap((v) => v.split(","));
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).getBody({
      includeTtl: include.includes("ttl"),
    });
    return jsonBytes<typeof ThreadSchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.patch, async (c) => {
    const { thread_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const value = await guardThread(c, thread_id, "threads:update", { metadata: body.metadata });
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).patch({
      ...body,
      metadata: value.metadata,
    });
    return jsonBytes<typeof ThreadSchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.delete, async (c) => {
    const { thread_id } = c.req.valid("param");
    await guardThread(c, thread_id, "threads:delete");
    unwrap(await threadStub(c.env, c.get("principal").workspaceId, thread_id).delete(), thread_id);
    return c.json({}, 200);
  })
  .openapi(routes.copy, async (c) => {
    const { thread_id } = c.req.valid("param");
    // The official API answers a copy of a missing or hidden thread with 409 "Thread not found".
    await guardThread(c, thread_id, "threads:read").catch((error: unknown) => {
      throw isDomainError(error, "not_found") ? conflict(THREAD_NOT_FOUND) : error;
    });
    const copy = await copyThread(c.env, c.get("principal").workspaceId, thread_id, authorizerOf(c));
    return jsonBytes<typeof ThreadSchema>(c, copy);
  })
  .openapi(routes.getState, async (c) => {
    const { thread_id } = c.req.valid("param");
    const { subgraphs } = c.req.valid("query");
    await guardThread(c, thread_id, "threads:read");
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).getState({ subgraphs });
    return jsonBytes<typeof ThreadStateSchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.updateState, async (c) => {
    const { thread_id } = c.req.valid("param");
    const body = c.req.valid("json");
    await guardThread(c, thread_id, "threads:update", { values: body.values, as_node: body.as_node });
    const checkpoint = body.checkpoint_id ? { ...body.checkpoint, checkpoint_id: body.checkpoint_id } : body.checkpoint;
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).updateState({
      values: body.values ?? null,
      asNode: body.as_node,
      checkpoint,
    });
    return c.json(unwrap(outcome, thread_id), 200);
  })
  .openapi(routes.getStateAt, async (c) => {
    const { thread_id, checkpoint_id } = c.req.valid("param");
    const { subgraphs } = c.req.valid("query");
    await guardThread(c, thread_id, "threads:read");
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).getState({
      checkpoint: { checkpoint_id },
      subgraphs,
    });
    return jsonBytes<typeof ThreadStateSchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.getStateAtCheckpoint, async (c) => {
    const { thread_id } = c.req.valid("param");
    const { checkpoint, subgraphs } = c.req.valid("json");
    await guardThread(c, thread_id, "threads:read");
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).getState({
      checkpoint,
      subgraphs,
    });
    return jsonBytes<typeof ThreadStateSchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.historyGet, async (c) => {
    const { thread_id } = c.req.valid("param");
    const { limit, before } = c.req.valid("query");
    await guardThread(c, thread_id, "threads:read");
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).history({ limit, before });
    return jsonBytes<typeof ThreadHistorySchema>(c, unwrap(outcome, thread_id));
  })
  .openapi(routes.history, async (c) => {
    const { thread_id } = c.req.valid("param");
    const body = c.req.valid("json");
    await guardThread(c, thread_id, "threads:read");
    const outcome = await threadStub(c.env, c.get("principal").workspaceId, thread_id).history({
      limit: body.limit,
      before: body.before ?? undefined,
      metadata: body.metadata ?? undefined,
      checkpoint: body.checkpoint ?? undefined,
    });
    return jsonBytes<typeof ThreadHistorySchema>(c, unwrap(outcome, thread_id));
  });
