import type { Database } from "../db/client.ts";
import type { BulkExportRow, BulkExportRunRow } from "../db/schema.ts";
import { log } from "../observability/log.ts";
import { columnTypes, EXPORT_FIELDS, type FormatVersion } from "./columns.ts";
import { destinationErrorMessage, isPermanentDestinationError } from "./destination-errors.ts";
import { destinationTarget, objectKey } from "./destinations.ts";
import type { DestinationConfig } from "./schemas.ts";
import { FINISHED } from "./service.ts";
import { completeRunningExport, countManifestFailure, exportById, exportRunRows, failRunningExport } from "./store.ts";

/**
 * The commit marker of an export: a JSON manifest written after the last partition, beside the
 * export's folder (`<prefix>/_manifest.export_id=<id>.json`), never in it. Readers that see it know
 * the listed files are complete and final. The export folder then holds Parquet only: polars'
 * `scan_parquet(folder, hive_partitioning=True)` refuses a folder holding any other extension,
 * even under a `_` name. The leading `_` still makes pyarrow datasets, Spark and Hive skip the
 * manifest when pointed at the prefix above the export folders.
 */

/** The object key of an export's manifest: beside its folder, named after it. */
export const manifestKey = (config: DestinationConfig, exportId: string) =>
  objectKey(config, `_manifest.export_id=${exportId}.json`);

type ManifestEnv = Pick<
  Env,
  | "EXPORT_ENCRYPTION_KEY"
  | "EXPORT_DEFAULT_ACCESS_KEY_ID"
  | "EXPORT_DEFAULT_SECRET_ACCESS_KEY"
  | "EXPORT_DEFAULT_SESSION_TOKEN"
>;

/** The folder of one export: `[bucket/]<prefix>/export_id=<id>`. */
export const exportFolder = (config: DestinationConfig, exportId: string) => objectKey(config, `export_id=${exportId}`);

/** The Hive partition folder of one (project, UTC day) of an export. */
export function partitionFolder(
  config: DestinationConfig,
  exported: Pick<BulkExportRow, "id" | "workspaceId" | "sessionId">,
  day: string,
): string {
  const [year, month, date] = day.split("-");
  return `${exportFolder(config, exported.id)}/tenant_id=${exported.workspaceId}/session_id=${exported.sessionId}/runs/year=${year}/month=${month}/day=${date}`;
}

export function manifestOf(exported: BulkExportRow, runs: BulkExportRunRow[], completedAt: string) {
  const fields = exported.exportFields ?? EXPORT_FIELDS;
  const files = runs.flatMap((run) =>
    run.files.map((file) => ({ key: file.key, day: run.day, rows: file.rows, bytes: file.bytes })),
  );
  return {
    export_id: exported.id,
    tenant_id: exported.workspaceId,
    session_id: exported.sessionId,
    source_bulk_export_id: exported.sourceBulkExportId,
    window: { start_time: exported.startTime, end_time: exported.endTime },
    filter: exported.filter,
    format: "Parquet",
    format_version: exported.formatVersion,
    compression: exported.compression,
    columns: columnTypes(fields, exported.formatVersion as FormatVersion),
    files,
    total_rows: files.reduce((sum, file) => sum + file.rows, 0),
    total_bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    completed_at: completedAt,
  };
}

/**
 * Ends a Running export whose runs have all finished: Failed if one failed, else the manifest is
 * written and the export is Completed. Safe to call twice: the manifest is the same object and the
 * status only moves from Running. A manifest that cannot be written is counted, as export runs count
 * their attempts: the next tick retries it until `maxRetries` retries have failed (or at once for a
 * bucket or credential error), then the export fails with the error and frees its slot.
 */
export async function finishExportIfDone(
  db: Database,
  env: ManifestEnv,
  exportId: string,
  maxRetries: number,
  fetcher?: typeof fetch,
): Promise<void> {
  const exported = await exportById(db, exportId);
  if (exported?.status !== "Running") return;
  const runs = await exportRunRows(db, exportId);
  if (runs.some((run) => !FINISHED.has(run.status))) return;
  const now = new Date().toISOString();
  const failed = runs.find((run) => run.status !== "Completed");
  if (failed) {
    await failRunningExport(db, exportId, `export run ${failed.id} (${failed.day}) ended ${failed.status}`, now);
    return;
  }
  try {
    const { config, bucket } = await destinationTarget(db, env, exported.workspaceId, exported.destinationId, fetcher);
    const manifest = manifestOf(exported, runs, now);
    await bucket.putObject(manifestKey(config, exportId), JSON.stringify(manifest, null, 2), "application/json");
  } catch (error) {
    await recordManifestFailure(db, exported, error, maxRetries, now);
    return;
  }
  await completeRunningExport(db, exportId, now);
}

/** Counts a failed manifest write; the last allowed one fails the export with its error. */
async function recordManifestFailure(
  db: Database,
  exported: BulkExportRow,
  error: unknown,
  maxRetries: number,
  now: string,
): Promise<void> {
  const message = destinationErrorMessage(error) ?? (error instanceof Error ? error.message : String(error));
  const attempt = exported.manifestAttempts;
  // `maxRetries` retries after the first attempt, as for export runs.
  const exhausted = isPermanentDestinationError(error) || attempt + 1 > maxRetries;
  log.warn("writing an export's manifest failed", {
    export_id: exported.id,
    attempt,
    error: message,
    final: exhausted,
  });
  if (exhausted) {
    await failRunningExport(
      db,
      exported.id,
      `writing the manifest failed after ${attempt + 1} attempt${attempt ? "s" : ""}: ${message}`,
      now,
    );
    return;
  }
  // Compare-and-set on the count: two ticks failing together count once.
  await countManifestFailure(db, exported.id, attempt, now);
}
