import { z } from "@hono/zod-openapi";
import { authFilter, authorizerOf } from "../auth/guards.ts";
import { filterAsContainment } from "../core/auth-filter.ts";
import { BoolQuery } from "../core/schemas.ts";
import type { AssistantRow, AssistantVersionRow } from "../db/schema.ts";
import { graphs } from "../deployment/index.ts";
import { page } from "../http/pagination.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import { deleteAssistantThreads } from "../threads/service.ts";
import { drawGraph, graphSchemas, subgraphSchemas } from "./graph-info.ts";
import {
  type Assistant,
  AssistantCountSchema,
  AssistantCreateSchema,
  AssistantIdParam,
  AssistantPatchSchema,
  AssistantSchema,
  AssistantSearchSchema,
  type AssistantVersion,
  AssistantVersionSchema,
  LatestRequestSchema,
  RecurseQuery,
  SubgraphSchemasSchema,
  VersionsRequestSchema,
  XrayQuery,
} from "./schemas.ts";
import {
  assistantGraph,
  assistantVersions,
  countVisibleAssistants,
  createAssistant,
  deletableAssistant,
  patchAssistant,
  removeAssistant,
  searchVisibleAssistants,
  setLatestVersion,
  visibleAssistant,
} from "./service.ts";

const tags = ["Assistants"];
const errors = { ...notFoundError };
const route = securedRoutes(tags);

/** Namespaces are node names, joined with `|` below the first level when recursing. */
const SubgraphsByNamespace = z.record(z.string(), SubgraphSchemasSchema);

const routes = {
  create: route({
    method: "post",
    path: "/assistants",
    summary: "Create an assistant (version 1)",
    request: { body: jsonBody(AssistantCreateSchema) },
    responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors, ...conflictError },
  }),
  search: route({
    method: "post",
    path: "/assistants/search",
    summary: "Search assistants",
    request: { body: jsonBody(AssistantSearchSchema) },
    responses: {
      200: jsonContent(
        z.array(AssistantSchema.partial()),
        "Assistants; X-Pagination-Total and X-Pagination-Next headers",
      ),
      ...errors,
    },
  }),
  count: route({
    method: "post",
    path: "/assistants/count",
    summary: "Count assistants",
    request: { body: jsonBody(AssistantCountSchema) },
    responses: { 200: jsonContent(z.number().int(), "Number of matching assistants"), ...errors },
  }),
  get: route({
    method: "get",
    path: "/assistants/{assistant_id}",
    summary: "Get an assistant (by id, or a graph id for its system assistant)",
    request: { params: AssistantIdParam },
    responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors },
  }),
  patch: route({
    method: "patch",
    path: "/assistants/{assistant_id}",
    summary: "Update an assistant: a new version, made current",
    request: { params: AssistantIdParam, body: jsonBody(AssistantPatchSchema) },
    responses: { 200: jsonContent(AssistantSchema, "The assistant at its new version"), ...errors },
  }),
  delete: route({
    method: "delete",
    path: "/assistants/{assistant_id}",
    summary: "Delete an assistant and its versions (a graph's system assistant cannot be deleted: 409)",
    request: { params: AssistantIdParam, query: z.object({ delete_threads: BoolQuery }) },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors, ...conflictError },
  }),
  versions: route({
    method: "post",
    path: "/assistants/{assistant_id}/versions",
    summary: "List an assistant's versions, newest first",
    request: { params: AssistantIdParam, body: jsonBody(VersionsRequestSchema) },
    responses: { 200: jsonContent(z.array(AssistantVersionSchema), "Versions"), ...errors },
  }),
  latest: route({
    method: "post",
    path: "/assistants/{assistant_id}/latest",
    summary: "Make a version current (body {version}, or ?version=)",
    request: {
      params: AssistantIdParam,
      query: z.object({ version: z.coerce.number().int().min(1).optional() }),
      body: jsonBody(LatestRequestSchema),
    },
    responses: { 200: jsonContent(AssistantSchema, "The assistant"), ...errors },
  }),
  graph: route({
    method: "get",
    path: "/assistants/{assistant_id}/graph",
    summary: "The assistant's graph: nodes and edges",
    request: { params: AssistantIdParam, query: XrayQuery },
    responses: { 200: jsonContent(z.record(z.string(), z.unknown()), "{nodes, edges}"), ...errors },
  }),
  schemas: route({
    method: "get",
    path: "/assistants/{assistant_id}/schemas",
    summary: "JSON schemas of the assistant's graph",
    request: { params: AssistantIdParam },
    responses: {
      200: jsonContent(
        z.record(z.string(), z.unknown()),
        "{graph_id, input_schema, output_schema, state_schema, config_schema, context_schema}",
      ),
      ...errors,
    },
  }),
  subgraphs: route({
    method: "get",
    path: "/assistants/{assistant_id}/subgraphs",
    summary: "Schemas of the graph's subgraphs",
    request: { params: AssistantIdParam, query: RecurseQuery },
    responses: { 200: jsonContent(SubgraphsByNamespace, "Each subgraph's schemas by namespace"), ...errors },
  }),
  subgraphsAt: route({
    method: "get",
    path: "/assistants/{assistant_id}/subgraphs/{namespace}",
    summary: "Schemas of the subgraphs under a namespace",
    request: { params: AssistantIdParam.extend({ namespace: z.string().min(1) }), query: RecurseQuery },
    responses: { 200: jsonContent(SubgraphsByNamespace, "Each subgraph's schemas by namespace"), ...errors },
  }),
};

function versionJson(row: AssistantVersionRow): AssistantVersion {
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

/** The subgraphs of an assistant's graph (under `namespace`), with their static schemas when the build found them. */
const subgraphsOf = async (row: AssistantRow, namespace: string | undefined, recurse: boolean) =>
  subgraphSchemas(await assistantGraph(row), row.graphId, namespace, recurse, graphs.entry(row.graphId)?.staticSchemas);

export const assistantRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const row = await createAssistant(c.env, c.get("principal").workspaceId, c.req.valid("json"), authorizerOf(c));
    return c.json(assistantJson(row), 200);
  })
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const { rows, total } = await searchVisibleAssistants(c.env, c.get("principal").workspaceId, body, authorizerOf(c));
    return c.json(page(c, rows.map(assistantJson), total, body.offset, body.select), 200);
  })
  .openapi(routes.count, async (c) =>
    c.json(
      await countVisibleAssistants(c.env, c.get("principal").workspaceId, c.req.valid("json"), authorizerOf(c)),
      200,
    ),
  )
  .openapi(routes.get, async (c) => {
    const row = await visibleAssistant(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      authorizerOf(c),
    );
    return c.json(assistantJson(row), 200);
  })
  .openapi(routes.patch, async (c) => {
    const row = await patchAssistant(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      c.req.valid("json"),
      authorizerOf(c),
    );
    return c.json(assistantJson(row), 200);
  })
  .openapi(routes.delete, async (c) => {
    const { workspaceId } = c.get("principal");
    const row = await deletableAssistant(c.env, workspaceId, c.req.valid("param").assistant_id, authorizerOf(c));
    if (c.req.valid("query").delete_threads) {
      // Only the threads the threads:delete filter lets this user delete.
      const authMetadata = filterAsContainment(
        await authFilter(c, "threads:delete", { assistant_id: row.assistantId }),
      );
      await deleteAssistantThreads(c.env, workspaceId, row.assistantId, authMetadata);
    }
    await removeAssistant(c.env, workspaceId, row);
    return c.json({}, 200);
  })
  .openapi(routes.versions, async (c) => {
    const versions = await assistantVersions(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      c.req.valid("json"),
      authorizerOf(c),
    );
    return c.json(versions.map(versionJson), 200);
  })
  .openapi(routes.latest, async (c) => {
    const version = c.req.valid("json").version ?? c.req.valid("query").version;
    const row = await setLatestVersion(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      version,
      authorizerOf(c),
    );
    return c.json(assistantJson(row), 200);
  })
  .openapi(routes.graph, async (c) => {
    const row = await visibleAssistant(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      authorizerOf(c),
    );
    return c.json(await drawGraph(await assistantGraph(row), c.req.valid("query").xray), 200);
  })
  .openapi(routes.schemas, async (c) => {
    const row = await visibleAssistant(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      authorizerOf(c),
    );
    const statics = graphs.entry(row.graphId)?.staticSchemas?.root;
    return c.json({ graph_id: row.graphId, ...graphSchemas(await assistantGraph(row), row.graphId, statics) }, 200);
  })
  .openapi(routes.subgraphs, async (c) => {
    const row = await visibleAssistant(
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").assistant_id,
      authorizerOf(c),
    );
    return c.json(await subgraphsOf(row, undefined, c.req.valid("query").recurse), 200);
  })
  .openapi(routes.subgraphsAt, async (c) => {
    const { assistant_id, namespace } = c.req.valid("param");
    const row = await visibleAssistant(c.env, c.get("principal").workspaceId, assistant_id, authorizerOf(c));
    return c.json(await subgraphsOf(row, namespace, c.req.valid("query").recurse), 200);
  });
