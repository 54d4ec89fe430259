import { z } from "@hono/zod-openapi";
import { MAX_DISPLAY_NAME_LENGTH, MAX_EXPORT_PREFIX_LENGTH, MAX_ID_LENGTH } from "../core/limits.ts";
import { isoTime } from "../tracing/schemas.ts";
import { EXPORT_FIELDS } from "./columns.ts";

/** The wire shapes of bulk export (`/api/v1/bulk-exports`, as LangSmith defines it): destinations, exports and their runs. */

const uuid = z.uuid().transform((id) => id.toLowerCase());

// ---- destinations ----

export const DestinationConfigSchema = z
  .object({
    // S3's bucket naming rules: the name also becomes a host name with virtual-hosted addressing.
    bucket_name: z
      .string()
      .min(3)
      .max(63)
      .regex(
        /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/,
        "bucket_name may hold lowercase letters, digits, '.' and '-', and must start and end with a letter or digit",
      )
      .refine((name) => !name.includes(".."), "bucket_name may not contain '..'"),
    prefix: z.string().max(MAX_EXPORT_PREFIX_LENGTH).default(""),
    region: z
      .string()
      .min(1)
      .max(MAX_ID_LENGTH)
      .nullish()
      .transform((v) => v ?? null),
    endpoint_url: z
      .url({ protocol: /^https?$/, error: "endpoint_url must be an http(s) URL" })
      .max(2048)
      .nullish()
      .transform((v) => v ?? null),
    include_bucket_in_prefix: z
      .boolean()
      .default(false)
      .describe("Put the bucket name at the start of every object key"),
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
    if (!config.endpoint_url && !config.region && !config.r2_binding)
      ctx.addIssue({
        code: "custom",
        path: ["region"],
        message: "region is required for AWS (a destination without endpoint_url)",
      });
  });

export const CredentialsSchema = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  session_token: z.string().max(2048).nullish(),
});

export const DestinationCreateSchema = z
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

export const BulkExportDestinationSchema = z
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

export const DestinationIdParams = z.object({ destination_id: uuid });

/** A destination's config as stored: the request's, plus what the server sets. */
export type DestinationConfig = Omit<z.output<typeof DestinationConfigSchema>, "r2_binding"> & {
  /** A Worker R2 binding of this deployment to write through instead of S3 over HTTP (no credentials). */
  r2_binding?: string | null;
  /**
   * Set by the server for destinations that use the deployment's own bucket (its default credentials
   * or an R2 binding): every key starts with `workspaces/<workspace id>`, so no workspace can
   * write into another's files there.
   */
  workspace_root?: string | null;
};

export type DestinationCredentials = z.output<typeof CredentialsSchema>;

/** What creating a destination takes. */
export type DestinationInput = {
  display_name: string;
  config: DestinationConfig;
  credentials?: DestinationCredentials | null;
};

/** A destination as the API returns it; its config is the stored one. */
export type BulkExportDestination = Omit<z.infer<typeof BulkExportDestinationSchema>, "config"> & {
  config: DestinationConfig;
};

export const DestinationUpdateSchema = z
  .object({ credentials: CredentialsSchema.nullable() })
  .openapi("BulkExportDestinationUpdate");

// ---- exports ----

export const BulkExportCreateSchema = z
  .object({
    bulk_export_destination_id: uuid,
    session_id: uuid,
    start_time: isoTime,
    end_time: isoTime.nullish(),
    filter: z.string().max(10_000).nullish(),
    export_fields: z
      .array(z.string().max(MAX_ID_LENGTH))
      .nullish()
      .describe(`Columns to write, of: ${EXPORT_FIELDS.join(", ")}`),
    interval_hours: z
      .number()
      .int()
      .min(1)
      .max(168)
      .nullish()
      .describe("Makes the export scheduled: one export per interval"),
    format: z.literal("Parquet").default("Parquet"),
    format_version: z.enum(["v1", "v2_beta"]).default("v1"),
    compression: z.enum(["none", "gzip", "snappy", "zstandard"]).default("zstandard"),
  })
  .openapi("BulkExportCreate");

export const BulkExportSchema = z
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

export const BulkExportRunSchema = z
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

export const BulkExportIdParams = z.object({ bulk_export_id: uuid });

export type BulkExport = z.infer<typeof BulkExportSchema>;
export type BulkExportRun = z.infer<typeof BulkExportRunSchema>;
export type ExportStatus = BulkExport["status"];
export type ExportRunStatus = BulkExportRun["status"];

/** What creating an export takes: the request body without its one-value `format`. */
export type ExportInput = Omit<z.output<typeof BulkExportCreateSchema>, "format">;

export const BulkExportUpdateSchema = z.object({ status: z.literal("Cancelled") }).openapi("BulkExportUpdate");
export const SpawnedRunsQuery = z.object({ source_bulk_export_id: uuid });
export const ExportRunParams = z.object({ bulk_export_id: uuid, run_id: uuid });
