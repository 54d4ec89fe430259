import type { z } from "@hono/zod-openapi";
import { type Authorizer, filterAsContainment, matchesFilter } from "../core/auth-filter.ts";
import { conflict, invalid, notFound } from "../core/errors.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import { checkJsonSizes, rowBound } from "../core/json-size.ts";
import { MAX_JSON_FIELD_BYTES } from "../core/limits.ts";
import { database, sessionDatabase } from "../db/client.ts";
import type { AssistantRow, AssistantVersionRow } from "../db/schema.ts";
import { deployment, graphs } from "../deployment/index.ts";
import { ensureWorkspaceAssistants, findAssistant, forgetAssistant, systemAssistantGraph } from "./resolve.ts";
import type {
  AssistantCountSchema,
  AssistantCreateSchema,
  AssistantPatchSchema,
  AssistantSearchSchema,
  VersionsRequestSchema,
} from "./schemas.ts";
import { clientConfig } from "./server-config.ts";
import {
  addVersion,
  countAssistants,
  deleteAssistant,
  getVersion,
  insertAssistant,
  listVersions,
  searchAssistants,
  setCurrentVersion,
  VersionConflictError,
} from "./store.ts";

/** The assistant operations of the API, free of HTTP: `authorize` is the caller's authorization handler. */

function requireGraph(graphId: string): void {
  if (!graphs.has(graphId)) {
    throw notFound(
      `Graph "${graphId}" not found: this deployment has ${deployment.graphs.map((g) => g.id).join(", ")}`,
    );
  }
}

/** The assistant, if it exists and the `event` handler's filter lets this caller see it; else not found. */
export async function visibleAssistant(
  env: Env,
  workspaceId: string,
  id: string,
  authorize: Authorizer,
  event = "assistants:read",
  value: Record<string, unknown> = {},
): Promise<AssistantRow> {
  const row = await findAssistant(env, workspaceId, id);
  if (!row) throw notFound(`Assistant ${id} not found`);
  const filter = await authorize(event, Object.assign(value, { assistant_id: row.assistantId }));
  if (!matchesFilter(row.metadata, filter)) throw notFound(`Assistant ${id} not found`);
  return row;
}

export async function createAssistant(
  env: Env,
  workspaceId: string,
  body: z.output<typeof AssistantCreateSchema>,
  authorize: Authorizer,
): Promise<AssistantRow> {
  requireGraph(body.graph_id);
  await ensureWorkspaceAssistants(env, workspaceId);
  const assistantId = body.assistant_id ?? crypto.randomUUID();
  const value = { ...body, assistant_id: assistantId };
  const filter = await authorize("assistants:create", value);
  const limit = rowBound(env, MAX_JSON_FIELD_BYTES);
  checkJsonSizes({ config: body.config, context: body.context, metadata: value.metadata }, limit);
  // Writes go through the request's D1 session: the bookmark it answers with covers them.
  const created = await insertAssistant(
    sessionDatabase(env),
    workspaceId,
    assistantId,
    {
      graphId: body.graph_id,
      config: body.config,
      context: body.context ?? {},
      metadata: value.metadata,
      name: body.name ?? "Untitled",
      description: body.description ?? null,
    },
    new Date().toISOString(),
  );
  if (!created && body.if_exists === "raise") throw conflict(`Assistant ${assistantId} already exists`);
  const assistant = await findAssistant(env, workspaceId, assistantId);
  // `do_nothing` answers with the existing assistant only when this user may see it.
  if (!assistant || (!created && !matchesFilter(assistant.metadata, filter)))
    throw conflict(`Assistant ${assistantId} already exists`);
  return assistant;
}

export async function searchVisibleAssistants(
  env: Env,
  workspaceId: string,
  body: z.output<typeof AssistantSearchSchema>,
  authorize: Authorizer,
): Promise<{ rows: AssistantRow[]; total: number }> {
  await ensureWorkspaceAssistants(env, workspaceId);
  const filter = filterAsContainment(await authorize("assistants:search", { ...body }));
  return withFilterLimit(() =>
    searchAssistants(database(env), workspaceId, {
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
}

export async function countVisibleAssistants(
  env: Env,
  workspaceId: string,
  body: z.output<typeof AssistantCountSchema>,
  authorize: Authorizer,
): Promise<number> {
  await ensureWorkspaceAssistants(env, workspaceId);
  const filter = filterAsContainment(await authorize("assistants:search", { ...body }));
  return withFilterLimit(() =>
    countAssistants(database(env), workspaceId, {
      metadata: body.metadata,
      authMetadata: filter,
      graphId: body.graph_id,
      name: body.name,
    }),
  );
}

/** A new version made current: the patch's fields over the latest version's, metadata merged. */
export async function patchAssistant(
  env: Env,
  workspaceId: string,
  id: string,
  body: z.output<typeof AssistantPatchSchema>,
  authorize: Authorizer,
): Promise<AssistantRow> {
  const value = { ...body, metadata: body.metadata };
  const current = await visibleAssistant(env, workspaceId, id, authorize, "assistants:update", value);
  if (body.graph_id) requireGraph(body.graph_id);
  const limit = rowBound(env, MAX_JSON_FIELD_BYTES);
  checkJsonSizes({ config: body.config, context: body.context }, limit);
  const updated = await addVersion(
    sessionDatabase(env),
    workspaceId,
    current,
    (latest) => {
      const metadata = { ...latest.metadata, ...(value.metadata ?? {}) };
      // The merged metadata is what the row holds.
      checkJsonSizes({ metadata }, limit);
      return {
        graphId: body.graph_id ?? latest.graphId,
        config: body.config ?? latest.config,
        // null, like absent, keeps the context (as LangGraph's servers do): the column holds JSON, never SQL NULL.
        context: body.context ?? latest.context,
        metadata,
        name: body.name ?? latest.name,
        description: body.description === undefined ? latest.description : body.description,
      };
    },
    new Date().toISOString(),
  ).catch((error: unknown) => {
    if (error instanceof VersionConflictError) throw conflict(error.message);
    throw error;
  });
  forgetAssistant(workspaceId, current.assistantId);
  if (!updated) throw notFound(`Assistant ${current.assistantId} not found`);
  return updated;
}

/** The assistant the caller may delete; a graph's system assistant never may be (the graph id keeps naming it). */
export async function deletableAssistant(
  env: Env,
  workspaceId: string,
  id: string,
  authorize: Authorizer,
): Promise<AssistantRow> {
  const row = await visibleAssistant(env, workspaceId, id, authorize, "assistants:delete");
  const graphId = systemAssistantGraph(row.assistantId);
  if (graphId)
    throw conflict(`Assistant ${row.assistantId} is the system assistant of graph "${graphId}" and cannot be deleted`);
  return row;
}

export async function removeAssistant(env: Env, workspaceId: string, row: AssistantRow): Promise<void> {
  await deleteAssistant(sessionDatabase(env), workspaceId, row.assistantId);
  forgetAssistant(workspaceId, row.assistantId);
}

export async function assistantVersions(
  env: Env,
  workspaceId: string,
  id: string,
  body: z.output<typeof VersionsRequestSchema>,
  authorize: Authorizer,
): Promise<AssistantVersionRow[]> {
  const row = await visibleAssistant(env, workspaceId, id, authorize);
  return withFilterLimit(() => listVersions(database(env), workspaceId, row.assistantId, body));
}

/** Makes an existing version current again. */
export async function setLatestVersion(
  env: Env,
  workspaceId: string,
  id: string,
  version: number | undefined,
  authorize: Authorizer,
): Promise<AssistantRow> {
  if (version === undefined)
    throw invalid([{ type: "missing", loc: ["body", "version"], msg: "Give the version to make current" }]);
  const row = await visibleAssistant(env, workspaceId, id, authorize, "assistants:update", { version });
  const found = await getVersion(database(env), workspaceId, row.assistantId, version);
  if (!found) throw notFound(`Assistant ${row.assistantId} has no version ${version}`);
  const current = await setCurrentVersion(sessionDatabase(env), workspaceId, found, new Date().toISOString());
  forgetAssistant(workspaceId, row.assistantId);
  return current ?? row;
}

/** The assistant's graph, built with the assistant's config (graph factories receive it). */
export async function assistantGraph(row: AssistantRow) {
  const graph = await graphs.load(row.graphId, clientConfig({ configurable: {}, ...row.config }));
  if (!graph) throw notFound(`Graph "${row.graphId}" of assistant ${row.assistantId} is not deployed`);
  return graph;
}
