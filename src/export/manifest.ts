import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { type BulkExportRow, type BulkExportRunRow, bulkExportRuns, bulkExports } from "../db/schema.ts";
import { columnTypes, EXPORT_FIELDS, type FormatVersion } from "./columns.ts";
import { destinationTarget, objectKey } from "./destinations.ts";
import type { DestinationConfig } from "./schemas.ts";
import { FINISHED } from "./service.ts";

/**
 * The commit marker of an export: `_manifest.json` under the export's folder, written after the
 * last partition. Readers that see it know the listed files are complete and final. The leading `_`
 * is the `_SUCCESS` convention: pyarrow datasets, polars, Spark and Hive skip files whose name starts
 * with `_` or `.`, so a directory reader pointed at the folder sees only Parquet.
 */

/** The manifest's name inside the export folder. */
export const MANIFEST_NAME = "_manifest.json";

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
 * status only moves from Running.
 */
export async function finishExportIfDone(
  db: Database,
  env: ManifestEnv,
  exportId: string,
  fetcher?: typeof fetch,
): Promise<void> {
  const exported = await db.select().from(bulkExports).where(eq(bulkExports.id, exportId)).get();
  if (exported?.status !== "Running") return;
  const runs = await db
    .select()
    .from(bulkExportRuns)
    .where(eq(bulkExportRuns.exportId, exportId))
    .orderBy(asc(bulkExportRuns.day))
    .all();
  if (runs.some((run) => !FINISHED.has(run.status))) return;
  const now = new Date().toISOString();
  const failed = runs.find((run) => run.status !== "Completed");
  if (failed) {
    await db
      .update(bulkExports)
      .set({
        status: "Failed",
        error: `export run ${failed.id} (${failed.day}) ended ${failed.status}`,
        updatedAt: now,
        finishedAt: now,
      })
      .where(and(eq(bulkExports.id, exportId), eq(bulkExports.status, "Running")));
    return;
  }
  const { config, bucket } = await destinationTarget(db, env, exported.workspaceId, exported.destinationId, fetcher);
  const manifest = manifestOf(exported, runs, now);
  await bucket.putObject(
    `${exportFolder(config, exportId)}/${MANIFEST_NAME}`,
    JSON.stringify(manifest, null, 2),
    "application/json",
  );
  await db
    .update(bulkExports)
    .set({ status: "Completed", updatedAt: now, finishedAt: now })
    .where(and(eq(bulkExports.id, exportId), eq(bulkExports.status, "Running")));
}
