import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { database } from "../db/client.ts";
import type { AssistantRow, AssistantVersionRow } from "../db/schema.ts";
import { deployment, graphs } from "../deployment/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { notFound, conflict, invalid } from "../core/errors.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import { page } from "../http/pagination.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import { filterAsContainment, matchesFilter } from "../core/auth-filter.ts";
import { authFilter, guardMetadata } from "../auth/guards.ts";
import { BoolQuery } from "../core/schemas.ts";
import { pruneThreads } from "../threads/client.ts";
import { searchThreadIndex } from "../threads/thread-index.ts";
import { drawGraph, graphSchemas, subgraphSchemas } from "./graph-info.ts";
import { ensureWorkspaceAssistants, findAssistant, systemAssistantGraph } from "./resolve.ts";
import {
  AssistantCountSchema,
  AssistantCreateSchema,
  AssistantIdParam,
  AssistantPatchSchema,
  AssistantSchema,
  AssistantSearchSchema,
  AssistantVersionSchema,
  LatestRequestSchema,
  RecurseQuery,
  VersionsRequestSchema,
  XrayQuery,
} from "./schemas.ts";
import {
  addVersion,
  VersionConflictError,
  countAssistants,
  deleteAssistant,
  getVersion,
  insertAssistant,
  listVersions,
  searchAssistants,
  setCurrentVersion,
} from "./store.ts";
import { clientConfig } from "./server-config.ts";

const tags = ["Assistants"];
const errors = { ...notFoundError };
const route = securedRoutes(tags);
type Assistant = z.infer<typeof AssistantSchema>;

const routes = {
  create: route({ method: "post", path: "/assistants", summary: "Create an assistant (version 1)", request: { body: jsonBody(AssistantCreateSchema) }, responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors, ...conflictError } }),
  search: route({ method: "post", path: "/assistants/search", summary: "Search assistants", request: { body: jsonBody(AssistantSearchSchema) }, responses: { 200: jsonContent(z.array(AssistantSchema.partial()), "Assistants; X-Pagination-Total and X-Pagination-Next headers"), ...errors } }),
  count: route({ method: "post", path: "/assistants/count", summary: "Count assistants", request: { body: jsonBody(AssistantCountSchema) }, responses: { 200: jsonContent(z.number().int(), "Number of matching assistants"), ...errors } }),
  get: route({ method: "get", path: "/assistants/{assistant_id}", summary: "Get an assistant (by id, or a graph id for its system assistant)", request: { params: AssistantIdParam }, responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors } }),
  patch: route({ method: "patch", path: "/assistants/{assistant_id}", summary: "Update an assistant: a new version, made current", request: { params: AssistantIdParam, body: jsonBody(AssistantPatchSchema) }, responses: { 200: jsonContent(AssistantSchema, "The assistant at its new version"), ...errors } }),
  delete: route({ method: "delete", path: "/assistants/{assistant_id}", summary: "Delete an assistant and its versions (a graph's system assistant cannot be deleted: 409)", request: { params: AssistantIdParam, query: z.object({ delete_threads: BoolQuery }) }, responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors, ...conflictError } }),
  versions: route({ method: "post", path: "/assistants/{assistant_id}/versions", summary: "List an assistant's versions, newest first", request: { params: AssistantIdParam, body: jsonBody(VersionsRequestSchema) }, responses: { 200: jsonContent(z.array(AssistantVersionSchema), "Versions"), ...errors } }),
  latest: route({ method: "post", path: "/assistants/{assistant_id}/latest", summary: "Make a version current (body {version}, or ?version=)", request: { params: AssistantIdParam, query: z.object({ version: z.coerce.number().int().min(1).optional() }), body: jsonBody(LatestRequestSchema) }, responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors } }),
  graph: route({ method: "get", path: "/assistants/{assistant_id}/graph", summary: "The assistant's graph: nodes and edges", request: { params: AssistantIdParam, query: XrayQuery }, responses: { 200: jsonContent(z.record(z.string(), z.unknown()), "{nodes, edges}"), ...errors } }),
  schemas: route({ method: "get", path: "/assistants/{assistant_id}/schemas", summary: "JSON schemas of the assistant's graph", request: { params: AssistantIdParam }, responses: { 200: jsonContent(z.record(z.string(), z.unknown()), "{graph_id, input_schema, output_schema, state_schema, config_schema, context_schema}"), ...errors } }),
  subgraphs: route({ method: "get", path: "/assistants/{assistant_id}/subgraphs", summary: "Schemas of the graph's subgraphs", request: { params: AssistantIdParam, query: RecurseQuery }, responses: { 200: jsonContent(z.record(z.string(), z.unknown()), "By namespace"), ...errors } }),
  subgraphsAt: route({ method: "get", path: "/assistants/{assistant_id}/subgraphs/{namespace}", summary: "Schemas of the subgraphs under a namespace", request: { params: AssistantIdParam.extend({ namespace: z.string().min(1) }), query: RecurseQuery }, responses: { 200: jsonContent(z.record(z.string(), z.unknown()), "By namespace"), ...errors } }),
};

function versionJson(row: AssistantVersionRow): z.infer<typeof AssistantVersionSchema> {
  return {
    assistant_id: row.assistantId,
    graph_id: row.graphId,
    config: row.config,
    context: row.context ?? {},
    metadata: row.metadata,
    version: row.version,
    name: row.name,
    description: row.description,
    created_at: row.createdAt,
  };
}

/** An assistant is its current version plus when it last changed. */
const assistantJson = (row: AssistantRow): Assistant => ({ ...versionJson(row), updated_at: row.updatedAt });

function requireGraph(graphId: string): void {
  if (!graphs.has(graphId)) {
    throw notFound(`Graph "${graphId}" not found: this deployment has ${deployment.graphs.map((g) => g.id).join(", ")}`);
  }
}

/** The assistant, if it exists and the `event` handler's filter lets this user see it; else 404. */
async function assistantOr404(
  c: Context<AppEnv>,
  id: string,
  event = "assistants:read",
  value: Record<string, unknown> = {},
): Promise<AssistantRow> {
  const row = await findAssistant(c.env, c.get("principal").workspaceId, id);
  if (!row) throw notFound(`Assistant ${id} not found`);
  await guardMetadata(c, event, Object.assign(value, { assistant_id: row.assistantId }), row.metadata, `Assistant ${id} not found`);
  return row;
}

/** The assistant's graph, built with the assistant's config (graph factories receive it). */
async function loadGraph(row: AssistantRow) {
  const graph = await graphs.load(row.graphId, clientConfig({ configurable: {}, ...row.config }));
  if (!graph) throw notFound(`Graph "${row.graphId}" of assistant ${row.assistantId} is not deployed`);
  return graph;
}


export const assistantRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const { workspaceId } = c.get("principal");
    requireGraph(body.graph_id);
    await ensureWorkspaceAssistants(c.env, workspaceId);
    const db = database(c.env);
    const assistantId = body.assistant_id ?? crypto.randomUUID();
    const value = { ...body, assistant_id: assistantId };
    const filter = await authFilter(c, "assistants:create", value);
    const created = await insertAssistant(
      db,
      workspaceId,
      assistantId,
      { graphId: body.graph_id, config: body.config, context: body.context ?? {}, metadata: value.metadata, name: body.name ?? "Untitled", description: body.description ?? null },
      new Date().toISOString(),
    );
    if (!created && body.if_exists === "raise") throw conflict(`Assistant ${assistantId} already exists`);
    const assistant = (await findAssistant(c.env, workspaceId, assistantId))!;
    // `do_nothing` answers with the existing assistant only when this user may see it.
    if (!created && !matchesFilter(assistant.metadata, filter)) throw conflict(`Assistant ${assistantId} already exists`);
    return c.json(assistantJson(assistant), 200);
  })
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const { workspaceId } = c.get("principal");
    await ensureWorkspaceAssistants(c.env, workspaceId);
    const filter = filterAsContainment(await authFilter(c, "assistants:search", { ...body }));
    const { rows, total } = await withFilterLimit(() =>
      searchAssistants(database(c.env), workspaceId, {
        metadata: body.metadata,
        authMetadata: filter,
        graphId: body.graph_id,
        name: body.name,
        limit: body.limit,
        offset: body.offset,
        sortBy: body.sort_by,
        sortOrder: body.sort_order,
      }),
    );
    return c.json(page(c, rows.map(assistantJson), total, body.offset, body.select), 200);
  })
  .openapi(routes.count, async (c) => {
    const body = c.req.valid("json");
    const { workspaceId } = c.get("principal");
    await ensureWorkspaceAssistants(c.env, workspaceId);
    const filter = filterAsContainment(await authFilter(c, "assistants:search", { ...body }));
    const total = await withFilterLimit(() =>
      countAssistants(database(c.env), workspaceId, { metadata: body.metadata, authMetadata: filter, graphId: body.graph_id, name: body.name }),
    );
    return c.json(total, 200);
  })
  .openapi(routes.get, async (c) => c.json(assistantJson(await assistantOr404(c, c.req.valid("param").assistant_id)), 200))
  .openapi(routes.patch, async (c) => {
    const body = c.req.valid("json");
    const value = { ...body, metadata: body.metadata };
    const current = await assistantOr404(c, c.req.valid("param").assistant_id, "assistants:update", value);
    if (body.graph_id) requireGraph(body.graph_id);
    const updated = await addVersion(
      database(c.env),
      c.get("principal").workspaceId,
      current,
      (latest) => ({
        graphId: body.graph_id ?? latest.graphId,
        config: body.config ?? latest.config,
        context: body.context === undefined ? latest.context : body.context,
        metadata: { ...latest.metadata, ...(value.metadata ?? {}) },
        name: body.name ?? latest.name,
        description: body.description === undefined ? latest.description : body.description,
      }),
      new Date().toISOString(),
    ).catch((error: unknown) => {
      if (error instanceof VersionConflictError) throw conflict(error.message);
      throw error;
    });
    if (!updated) throw notFound(`Assistant ${current.assistantId} not found`);
    return c.json(assistantJson(updated), 200);
  })
  .openapi(routes.delete, async (c) => {
    const { workspaceId } = c.get("principal");
    const row = await assistantOr404(c, c.req.valid("param").assistant_id, "assistants:delete");
    // The graph id keeps naming its system assistant, so that assistant stays, in every workspace.
    const graphId = systemAssistantGraph(row.assistantId);
    if (graphId) throw conflict(`Assistant ${row.assistantId} is the system assistant of graph "${graphId}" and cannot be deleted`);
    if (c.req.valid("query").delete_threads) {
      // Threads whose runs used this assistant, found through the index, a page at a time; only
      // those the threads:delete filter lets this user delete.
      const db = database(c.env);
      const authMetadata = filterAsContainment(await authFilter(c, "threads:delete", { assistant_id: row.assistantId }));
      const filter = { metadata: { assistant_id: row.assistantId }, authMetadata };
      for (;;) {
        const { rows } = await searchThreadIndex(db, workspaceId, { ...filter, limit: 100, offset: 0, sortBy: "created_at", sortOrder: "asc" });
        if (!rows.length || (await pruneThreads(c.env, workspaceId, rows.map((r) => r.threadId), "delete")) === 0) break;
      }
    }
    await deleteAssistant(database(c.env), workspaceId, row.assistantId);
    return c.json({}, 200);
  })
  .openapi(routes.versions, async (c) => {
    const body = c.req.valid("json");
    const row = await assistantOr404(c, c.req.valid("param").assistant_id);
    const versions = await withFilterLimit(() => listVersions(database(c.env), c.get("principal").workspaceId, row.assistantId, body));
    return c.json(versions.map(versionJson), 200);
  })
  .openapi(routes.latest, async (c) => {
    const number = c.req.valid("json").version ?? c.req.valid("query").version;
    if (number === undefined) throw invalid([{ type: "missing", loc: ["body", "version"], msg: "Give the version to make current" }]);
    const row = await assistantOr404(c, c.req.valid("param").assistant_id, "assistants:update", { version: number });
    const db = database(c.env);
    const { workspaceId } = c.get("principal");
    const version = await getVersion(db, workspaceId, row.assistantId, number);
    if (!version) throw notFound(`Assistant ${row.assistantId} has no version ${number}`);
    const updated = await setCurrentVersion(db, workspaceId, version, new Date().toISOString());
    return c.json(assistantJson(updated ?? row), 200);
  })
  .openapi(routes.graph, async (c) => {
    const row = await assistantOr404(c, c.req.valid("param").assistant_id);
    return c.json(await drawGraph(await loadGraph(row), c.req.valid("query").xray), 200);
  })
  .openapi(routes.schemas, async (c) => {
    const row = await assistantOr404(c, c.req.valid("param").assistant_id);
    return c.json({ graph_id: row.graphId, ...graphSchemas(await loadGraph(row), row.graphId) }, 200);
  })
  .openapi(routes.subgraphs, async (c) => {
    const row = await assistantOr404(c, c.req.valid("param").assistant_id);
    return c.json(await subgraphSchemas(await loadGraph(row), row.graphId, undefined, c.req.valid("query").recurse), 200);
  })
  .openapi(routes.subgraphsAt, async (c) => {
    const { assistant_id, namespace } = c.req.valid("param");
    const row = await assistantOr404(c, assistant_id);
    return c.json(await subgraphSchemas(await loadGraph(row), row.graphId, namespace, c.req.valid("query").recurse), 200);
  });


