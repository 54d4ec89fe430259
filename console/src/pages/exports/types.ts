/** The wire shapes of /api/v1/bulk-exports (src/export/schemas.ts), as the console reads them. */

export interface DestinationConfig {
  bucket_name: string;
  prefix: string;
  region: string | null;
  endpoint_url: string | null;
  include_bucket_in_prefix: boolean;
  config_kwargs_s3: { addressing_style?: "auto" | "virtual" | "path" } | null;
  r2_binding?: string | null;
  /** Set by the server for the deployment's own bucket: every key starts with it. */
  workspace_root?: string | null;
}

export interface Destination {
  id: string;
  display_name: string;
  destination_type: "s3";
  config: DestinationConfig;
  /** Names of the stored credential fields only: the API never returns a secret. */
  credentials_keys: string[];
  created_at: string;
  updated_at: string;
}

export type ExportStatus =
  | "Created"
  | "Running"
  | "Completed"
  | "Failed"
  | "Cancelled"
  | "TimedOut"
  | "IntervalScheduled";

export interface BulkExport {
  id: string;
  bulk_export_destination_id: string;
  session_id: string;
  start_time: string;
  end_time: string | null;
  filter: string | null;
  export_fields: string[] | null;
  format: "Parquet";
  format_version: "v1" | "v2_beta";
  compression: "none" | "gzip" | "snappy" | "zstandard";
  interval_hours: number | null;
  status: ExportStatus;
  error: string | null;
  source_bulk_export_id: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface ExportRun {
  id: string;
  bulk_export_id: string;
  status: "Created" | "Running" | "Completed" | "Failed" | "Cancelled" | "TimedOut";
  retry_number: number;
  /** One message per failed attempt: retry_0, retry_1, … */
  errors: Record<string, string>;
  start_time: string;
  end_time: string;
  rows_written: number;
  exported_files: string[];
  created_at: string;
  finished_at: string | null;
  metadata: { prefix: string; result: { bytes_written: number; export_path: string } };
}

export interface Project {
  id: string;
  name: string;
}

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
