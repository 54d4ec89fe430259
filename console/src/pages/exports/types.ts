import type { BulkExportDestination, BulkExportRun, DestinationConfig } from "../../../../src/export/schemas.ts";
import type { TracerSession } from "../../../../src/tracing/projects/schemas.ts";

/**
 * The wire shapes of /api/v1/bulk-exports: the server's own types (src/export/schemas.ts), inferred
 * from its zod schemas, so a server change that breaks this section fails the console's type check.
 * Type-only imports: esbuild erases them, no server code reaches the bundle.
 */
export type { BulkExport, DestinationConfig, ExportStatus } from "../../../../src/export/schemas.ts";
export type Destination = BulkExportDestination;
export type ExportRun = BulkExportRun;
export type Project = Pick<TracerSession, "id" | "name">;

/** Export states that will not change any more. */
export const FINISHED = new Set<string>(["Completed", "Failed", "Cancelled", "TimedOut"]);

export interface Progress {
  planned: number;
  done: number;
  rows: number;
  files: number;
  bytes: number;
  retries: number;
}

export function progressOf(runs: ExportRun[]): Progress {
  return {
    planned: runs.length,
    done: runs.filter((run) => FINISHED.has(run.status)).length,
    rows: runs.reduce((sum, run) => sum + run.rows_written, 0),
    files: runs.reduce((sum, run) => sum + run.exported_files.length, 0),
    bytes: runs.reduce((sum, run) => sum + (run.metadata?.result?.bytes_written ?? 0), 0),
    retries: runs.reduce((sum, run) => sum + run.retry_number, 0),
  };
}

/** An object key under a destination, as the server builds it (src/export/destinations.ts objectKey). */
export function objectKey(config: DestinationConfig, path: string): string {
  return [
    config.include_bucket_in_prefix ? config.bucket_name : "",
    config.workspace_root ?? "",
    config.prefix.replace(/^\/+|\/+$/g, ""),
    path,
  ]
    .filter(Boolean)
    .join("/");
}

/** Where an export's manifest is written, beside its folder: the API does not serve it, the bucket does. */
export function manifestLocation(config: DestinationConfig, exportId: string): string {
  const key = objectKey(config, `_manifest.export_id=${exportId}.json`);
  if (config.r2_binding) return `R2 binding ${config.r2_binding}: ${key}`;
  const base = config.endpoint_url ? `${config.endpoint_url.replace(/\/+$/, "")} ` : "";
  return `${base}s3://${config.bucket_name}/${key}`;
}

/** Where a destination writes, for a person: the bucket and prefix, through what. */
export function destinationWhere(config: DestinationConfig): string {
  const prefix = config.prefix ? `/${config.prefix.replace(/^\/+/, "")}` : "";
  if (config.r2_binding) return `R2 binding ${config.r2_binding} (${config.bucket_name}${prefix})`;
  return `${config.endpoint_url ?? `AWS ${config.region ?? ""}`} · ${config.bucket_name}${prefix}`;
}
