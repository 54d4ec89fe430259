import { createRoute, z } from "@hono/zod-openapi";
import { requirePlan } from "../auth/require-plan.ts";
import { database } from "../db/client.ts";
import { errorResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import { tracesDatabase } from "../tracing/directory.ts";
import { createDestination, getDestination, listDestinations, updateDestinationCredentials } from "./destinations.ts";
import {
  BulkExportCreateSchema,
  BulkExportDestinationSchema,
  BulkExportIdParams,
  BulkExportRunSchema,
  BulkExportSchema,
  BulkExportUpdateSchema,
  DestinationCreateSchema,
  DestinationIdParams,
  DestinationUpdateSchema,
  ExportRunParams,
  SpawnedRunsQuery,
} from "./schemas.ts";
import {
  cancelExport,
  createExport,
  exportRow,
  getExportRun,
  listExportRuns,
  listExports,
  runsOfSpawnedExports,
  toBulkExport,
} from "./service.ts";

/** `/api/v1/bulk-exports`: destinations, exports and their runs, as LangSmith's bulk-export API has them. */

const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute(config));
/** Creating a destination or an export needs a plan with bulk export (403 otherwise); the rest stays open. */
const gatedRoute = <R extends Parameters<typeof createRoute>[0]>(config: R) =>
  secured(createRoute(config), requirePlan("bulk_export"));

const badRequest = {
  400: errorResponse("The destination failed its write check, or the filter does not parse"),
} as const;
/** Credentials are sealed with EXPORT_ENCRYPTION_KEY; without that secret they cannot be stored. */
const noEncryptionKey = {
  503: errorResponse("Credentials sent, but the deployment has no EXPORT_ENCRYPTION_KEY secret"),
} as const;

const tags = { destinations: ["Bulk export destinations"], exports: ["Bulk exports"] };

const routes = {
  createDestination: gatedRoute({
    tags: tags.destinations,
    method: "post",
    path: "/api/v1/bulk-exports/destinations",
    summary: "Create a destination; a test object proves write access first",
    request: { body: jsonBody(DestinationCreateSchema) },
    responses: { 200: jsonContent(BulkExportDestinationSchema, "The destination"), ...badRequest, ...noEncryptionKey },
  }),
  listDestinations: route({
    tags: tags.destinations,
    method: "get",
    path: "/api/v1/bulk-exports/destinations",
    summary: "List the workspace's destinations",
    responses: { 200: jsonContent(z.array(BulkExportDestinationSchema), "Destinations, newest first") },
  }),
  getDestination: route({
    tags: tags.destinations,
    method: "get",
    path: "/api/v1/bulk-exports/destinations/{destination_id}",
    summary: "Get a destination",
    request: { params: DestinationIdParams },
    responses: { 200: jsonContent(BulkExportDestinationSchema, "The destination"), ...notFoundError },
  }),
  updateDestination: route({
    tags: tags.destinations,
    method: "patch",
    path: "/api/v1/bulk-exports/destinations/{destination_id}",
    summary: "Rotate a destination's credentials (null: use the deployment's defaults); re-checks write access",
    request: { params: DestinationIdParams, body: jsonBody(DestinationUpdateSchema) },
    responses: {
      200: jsonContent(BulkExportDestinationSchema, "The destination"),
      ...badRequest,
      ...notFoundError,
      ...noEncryptionKey,
    },
  }),
  createExport: gatedRoute({
    tags: tags.exports,
    method: "post",
    path: "/api/v1/bulk-exports",
    summary: "Create a one-off export (start_time, end_time) or a scheduled one (interval_hours)",
    request: { body: jsonBody(BulkExportCreateSchema) },
    responses: { 200: jsonContent(BulkExportSchema, "The export"), ...badRequest, ...notFoundError },
  }),
  listExports: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports",
    summary: "List the workspace's exports, newest first",
    responses: { 200: jsonContent(z.array(BulkExportSchema), "Exports") },
  }),
  spawnedRuns: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/runs",
    summary: "The export runs of every export a scheduled export spawned",
    request: { query: SpawnedRunsQuery },
    responses: { 200: jsonContent(z.array(BulkExportRunSchema), "Export runs"), ...notFoundError },
  }),
  getExport: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}",
    summary: "Get an export and its status",
    request: { params: BulkExportIdParams },
    responses: { 200: jsonContent(BulkExportSchema, "The export"), ...notFoundError },
  }),
  cancelExport: route({
    tags: tags.exports,
    method: "patch",
    path: "/api/v1/bulk-exports/{bulk_export_id}",
    summary: "Cancel an export (the only change allowed); a cancelled export cannot be restarted",
    request: { params: BulkExportIdParams, body: jsonBody(BulkExportUpdateSchema) },
    responses: { 200: jsonContent(BulkExportSchema, "The export"), ...notFoundError, ...conflictError },
  }),
  listRuns: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}/runs",
    summary: "An export's runs: one per (project, UTC day)",
    request: { params: BulkExportIdParams },
    responses: { 200: jsonContent(z.array(BulkExportRunSchema), "Export runs"), ...notFoundError },
  }),
  getRun: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}/runs/{run_id}",
    summary: "One export run",
    request: { params: ExportRunParams },
    responses: { 200: jsonContent(BulkExportRunSchema, "The export run"), ...notFoundError },
  }),
};

export const bulkExportRoutes = createRouter()
  .openapi(routes.createDestination, async (c) => {
    const { display_name, config, credentials } = c.req.valid("json");
    return c.json(
      await createDestination(database(c.env), c.env, c.get("principal").workspaceId, {
        display_name,
        config,
        credentials,
      }),
      200,
    );
  })
  .openapi(routes.listDestinations, async (c) =>
    c.json(await listDestinations(database(c.env), c.get("principal").workspaceId), 200),
  )
  .openapi(routes.getDestination, async (c) =>
    c.json(
      await getDestination(database(c.env), c.get("principal").workspaceId, c.req.valid("param").destination_id),
      200,
    ),
  )
  .openapi(routes.updateDestination, async (c) => {
    const { credentials } = c.req.valid("json");
    const destination = await updateDestinationCredentials(
      database(c.env),
      c.env,
      c.get("principal").workspaceId,
      c.req.valid("param").destination_id,
      credentials,
    );
    return c.json(destination, 200);
  })
  .openapi(routes.createExport, async (c) => {
    const { format: _format, ...input } = c.req.valid("json");
    const workspaceId = c.get("principal").workspaceId;
    return c.json(await createExport(database(c.env), tracesDatabase(c.env, workspaceId), workspaceId, input), 200);
  })
  .openapi(routes.listExports, async (c) =>
    c.json(await listExports(database(c.env), c.get("principal").workspaceId), 200),
  )
  .openapi(routes.spawnedRuns, async (c) => {
    const runs = await runsOfSpawnedExports(
      database(c.env),
      c.get("principal").workspaceId,
      c.req.valid("query").source_bulk_export_id,
    );
    return c.json(runs, 200);
  })
  .openapi(routes.getExport, async (c) =>
    c.json(
      toBulkExport(
        await exportRow(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id),
      ),
      200,
    ),
  )
  .openapi(routes.cancelExport, async (c) =>
    c.json(
      await cancelExport(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id),
      200,
    ),
  )
  .openapi(routes.listRuns, async (c) =>
    c.json(
      await listExportRuns(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id),
      200,
    ),
  )
  .openapi(routes.getRun, async (c) => {
    const { bulk_export_id, run_id } = c.req.valid("param");
    return c.json(await getExportRun(database(c.env), c.get("principal").workspaceId, bulk_export_id, run_id), 200);
  });
