import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client.ts";
import { errorResponse } from "../http/responses.ts";
import { MAX_DISPLAY_NAME_LENGTH, MAX_EXPORT_PREFIX_LENGTH, MAX_ID_LENGTH } from "../core/limits.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { secured } from "../auth/secured.ts";
import { isoTime } from "../tracing/schemas.ts";
import { EXPORT_FIELDS } from "./columns.ts";
import { createDestination, getDestination, listDestinations, updateDestinationCredentials } from "./destinations.ts";
import { cancelExport, createExport, exportRow, getExportRun, listExportRuns, listExports, runsOfSpawnedExports, toBulkExport } from "./service.ts";

/** `/api/v1/bulk-exports`: destinations, exports and their runs (reference §4). */

const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute(config));
const uuid = z.uuid().transform((id) => id.toLowerCase());

const badRequest = { 400: errorResponse("The destination failed its write check, or the filter does not parse") } as const;
/** Credentials are sealed with EXPORT_ENCRYPTION_KEY; without that secret they cannot be stored. */
const noEncryptionKey = { 503: errorResponse("Credentials sent, but the deployment has no EXPORT_ENCRYPTION_KEY secret") } as const;

// ---- destinations ----

const DestinationConfigSchema = z
  .object({
    // S3's bucket naming rules: the name also becomes a host name with virtual-hosted addressing.
    bucket_name: z
      .string()
      .min(3)
      .max(63)
      .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, "bucket_name may hold lowercase letters, digits, '.' and '-', and must start and end with a letter or digit")
      .refine((name) => !name.includes(".."), "bucket_name may not contain '..'"),
    prefix: z.string().max(MAX_EXPORT_PREFIX_LENGTH).default(""),
    region: z.string().min(1).max(MAX_ID_LENGTH).nullish().transform((v) => v ?? null),
    endpoint_url: z
      .url({ protocol: /^https?$/, error: "endpoint_url must be an http(s) URL" })
      .max(2048)
      .nullish()
      .transform((v) => v ?? null),
    include_bucket_in_prefix: z.boolean().default(false).describe("Put the bucket name at the start of every object key"),
    config_kwargs_s3: z
      .object({ addressing_style: z.enum(["auto", "virtual", "path"]).optional() })
      .nullish()
      .transform((v) => v ?? null),
    r2_binding: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "r2_binding must be the name of a Worker binding")
      .nullish()
      .transform((v) => v ?? null)
      .describe("Write through this Worker R2 binding of the deployment instead of S3 over HTTP; no credentials"),
  })
  .superRefine((config, ctx) => {
    if (!config.endpoint_url && !config.region && !config.r2_binding) ctx.addIssue({ code: "custom", path: ["region"], message: "region is required for AWS (a destination without endpoint_url)" });
  });

const CredentialsSchema = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  session_token: z.string().max(2048).nullish(),
});

const DestinationCreate = z
  .object({
    destination_type: z.literal("s3").default("s3"),
    display_name: z
      .string()
      .min(1)
      .max(MAX_DISPLAY_NAME_LENGTH)
      .regex(/^[a-zA-Z0-9\-_ ']+$/, "display_name may hold letters, digits, spaces, '-', '_' and \"'\" only"),
    config: DestinationConfigSchema,
    credentials: CredentialsSchema.nullish().describe("Omit to use the deployment's default bucket credentials"),
  })
  .openapi("BulkExportDestinationCreate");

const DestinationSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    destination_type: z.literal("s3"),
    display_name: z.string(),
    config: z.record(z.string(), z.unknown()),
    credentials_keys: z.array(z.string()).describe("Names of the stored credential fields; secrets are never returned"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("BulkExportDestination");

const DestinationId = z.object({ destination_id: uuid });

// ---- exports ----

const ExportCreate = z
  .object({
    bulk_export_destination_id: uuid,
    session_id: uuid,
    start_time: isoTime,
    end_time: isoTime.nullish(),
    filter: z.string().max(10_000).nullish(),
    export_fields: z.array(z.string().max(MAX_ID_LENGTH)).nullish().describe(`Columns to write, of: ${EXPORT_FIELDS.join(", ")}`),
    interval_hours: z.number().int().min(1).max(168).nullish().describe("Makes the export scheduled: one export per interval"),
    format: z.literal("Parquet").default("Parquet"),
    format_version: z.enum(["v1", "v2_beta"]).default("v1"),
    compression: z.enum(["none", "gzip", "snappy", "zstandard"]).default("zstandard"),
  })
  .openapi("BulkExportCreate");

const ExportSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    bulk_export_destination_id: z.string(),
    session_id: z.string(),
    start_time: z.string(),
    end_time: z.string().nullable(),
    filter: z.string().nullable(),
    export_fields: z.array(z.string()).nullable(),
    format: z.literal("Parquet"),
    format_version: z.enum(["v1", "v2_beta"]),
    compression: z.enum(["none", "gzip", "snappy", "zstandard"]),
    interval_hours: z.number().nullable(),
    status: z.enum(["Created", "Running", "Completed", "Failed", "Cancelled", "TimedOut", "IntervalScheduled"]),
    error: z.string().nullable().describe("Why the export failed or timed out"),
    source_bulk_export_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("BulkExport");

const ExportRunSchema = z
  .object({
    id: z.string(),
    bulk_export_id: z.string(),
    session_id: z.string(),
    status: z.enum(["Created", "Running", "Completed", "Failed", "Cancelled", "TimedOut"]),
    retry_number: z.number(),
    errors: z.record(z.string(), z.string()).describe("One message per failed attempt: retry_0, retry_1, ..."),
    start_time: z.string(),
    end_time: z.string(),
    rows_written: z.number(),
    exported_files: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
    metadata: z.object({
      prefix: z.string(),
      start_time: z.string(),
      end_time: z.string(),
      result: z.object({
        rows_written: z.number(),
        bytes_written: z.number(),
        exported_files: z.array(z.string()),
        export_path: z.string(),
        latest_cursor: z.string().nullable(),
      }),
    }),
  })
  .openapi("BulkExportRun");

const ExportId = z.object({ bulk_export_id: uuid });

const tags = { destinations: ["Bulk export destinations"], exports: ["Bulk exports"] };

const routes = {
  createDestination: route({
    tags: tags.destinations,
    method: "post",
    path: "/api/v1/bulk-exports/destinations",
    summary: "Create a destination; a test object proves write access first",
    request: { body: jsonBody(DestinationCreate) },
    responses: { 200: jsonContent(DestinationSchema, "The destination"), ...badRequest, ...noEncryptionKey },
  }),
  listDestinations: route({
    tags: tags.destinations,
    method: "get",
    path: "/api/v1/bulk-exports/destinations",
    summary: "List the workspace's destinations",
    responses: { 200: jsonContent(z.array(DestinationSchema), "Destinations, newest first") },
  }),
  getDestination: route({
    tags: tags.destinations,
    method: "get",
    path: "/api/v1/bulk-exports/destinations/{destination_id}",
    summary: "Get a destination",
    request: { params: DestinationId },
    responses: { 200: jsonContent(DestinationSchema, "The destination"), ...notFoundError },
  }),
  updateDestination: route({
    tags: tags.destinations,
    method: "patch",
    path: "/api/v1/bulk-exports/destinations/{destination_id}",
    summary: "Rotate a destination's credentials (null: use the deployment's defaults); re-checks write access",
    request: { params: DestinationId, body: jsonBody(z.object({ credentials: CredentialsSchema.nullable() }).openapi("BulkExportDestinationUpdate")) },
    responses: { 200: jsonContent(DestinationSchema, "The destination"), ...badRequest, ...notFoundError, ...noEncryptionKey },
  }),
  createExport: route({
    tags: tags.exports,
    method: "post",
    path: "/api/v1/bulk-exports",
    summary: "Create a one-off export (start_time, end_time) or a scheduled one (interval_hours)",
    request: { body: jsonBody(ExportCreate) },
    responses: { 200: jsonContent(ExportSchema, "The export"), ...badRequest, ...notFoundError },
  }),
  listExports: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports",
    summary: "List the workspace's exports, newest first",
    responses: { 200: jsonContent(z.array(ExportSchema), "Exports") },
  }),
  spawnedRuns: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/runs",
    summary: "The export runs of every export a scheduled export spawned",
    request: { query: z.object({ source_bulk_export_id: uuid }) },
    responses: { 200: jsonContent(z.array(ExportRunSchema), "Export runs"), ...notFoundError },
  }),
  getExport: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}",
    summary: "Get an export and its status",
    request: { params: ExportId },
    responses: { 200: jsonContent(ExportSchema, "The export"), ...notFoundError },
  }),
  cancelExport: route({
    tags: tags.exports,
    method: "patch",
    path: "/api/v1/bulk-exports/{bulk_export_id}",
    summary: "Cancel an export (the only change allowed); a cancelled export cannot be restarted",
    request: { params: ExportId, body: jsonBody(z.object({ status: z.literal("Cancelled") }).openapi("BulkExportUpdate")) },
    responses: { 200: jsonContent(ExportSchema, "The export"), ...notFoundError, ...conflictError },
  }),
  listRuns: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}/runs",
    summary: "An export's runs: one per (project, UTC day)",
    request: { params: ExportId },
    responses: { 200: jsonContent(z.array(ExportRunSchema), "Export runs"), ...notFoundError },
  }),
  getRun: route({
    tags: tags.exports,
    method: "get",
    path: "/api/v1/bulk-exports/{bulk_export_id}/runs/{run_id}",
    summary: "One export run",
    request: { params: z.object({ bulk_export_id: uuid, run_id: uuid }) },
    responses: { 200: jsonContent(ExportRunSchema, "The export run"), ...notFoundError },
  }),
};

export const bulkExportRoutes = createRouter()
  .openapi(routes.createDestination, async (c) => {
    const { display_name, config, credentials } = c.req.valid("json");
    return c.json(await createDestination(database(c.env), c.env, c.get("principal").workspaceId, { display_name, config, credentials }), 200);
  })
  .openapi(routes.listDestinations, async (c) => c.json(await listDestinations(database(c.env), c.get("principal").workspaceId), 200))
  .openapi(routes.getDestination, async (c) => c.json(await getDestination(database(c.env), c.get("principal").workspaceId, c.req.valid("param").destination_id), 200))
  .openapi(routes.updateDestination, async (c) => {
    const { credentials } = c.req.valid("json");
    const destination = await updateDestinationCredentials(database(c.env), c.env, c.get("principal").workspaceId, c.req.valid("param").destination_id, credentials);
    return c.json(destination, 200);
  })
  .openapi(routes.createExport, async (c) => {
    const { format: _format, ...input } = c.req.valid("json");
    return c.json(await createExport(database(c.env), c.get("principal").workspaceId, input), 200);
  })
  .openapi(routes.listExports, async (c) => c.json(await listExports(database(c.env), c.get("principal").workspaceId), 200))
  .openapi(routes.spawnedRuns, async (c) => {
    const runs = await runsOfSpawnedExports(database(c.env), c.get("principal").workspaceId, c.req.valid("query").source_bulk_export_id);
    return c.json(runs, 200);
  })
  .openapi(routes.getExport, async (c) => c.json(toBulkExport(await exportRow(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id)), 200))
  .openapi(routes.cancelExport, async (c) => c.json(await cancelExport(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id), 200))
  .openapi(routes.listRuns, async (c) => c.json(await listExportRuns(database(c.env), c.get("principal").workspaceId, c.req.valid("param").bulk_export_id), 200))
  .openapi(routes.getRun, async (c) => {
    const { bulk_export_id, run_id } = c.req.valid("param");
    return c.json(await getExportRun(database(c.env), c.get("principal").workspaceId, bulk_export_id, run_id), 200);
  });
