import { and, asc, desc, eq, inArray, notInArray } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import { badRequest, conflict, invalid, notFound } from "../core/errors.ts";
import type { Database } from "../db/client.ts";
import { type BulkExportRow, type BulkExportRunRow, bulkExportRuns, bulkExports } from "../db/schema.ts";
import { IDS_PER_STATEMENT } from "../db/sql-batch.ts";
import type { TracesDatabase } from "../tracing/directory.ts";
import { checkQueryFilters, filterProblemsDetail } from "../tracing/filter/query-filters.ts";
import { getProject } from "../tracing/projects/service.ts";
import { type FormatVersion, unknownExportFields } from "./columns.ts";
import { getDestination } from "./destinations.ts";
import type { ParquetCompression } from "./parquet.ts";
import type { BulkExport, BulkExportRun, ExportInput, ExportRunStatus, ExportStatus } from "./schemas.ts";

/**
 * Bulk exports and their export runs as records: creation rules, reads, cancellation. Planning and
 * writing live in planner.ts and partition-writer.ts.
 */

/** States an export or export run never leaves. */
export const FINISHED: ReadonlySet<string> = new Set(["Completed", "Failed", "Cancelled", "TimedOut"]);

export function toBulkExport(row: BulkExportRow): BulkExport {
  return {
    id: row.id,
    tenant_id: row.workspaceId,
    bulk_export_destination_id: row.destinationId,
    session_id: row.sessionId,
    start_time: row.startTime,
    end_time: row.endTime,
    filter: row.filter,
    export_fields: row.exportFields,
    format: "Parquet",
    format_version: row.formatVersion as FormatVersion,
    compression: row.compression as ParquetCompression,
    interval_hours: row.intervalHours,
    status: row.status as ExportStatus,
    error: row.error,
    source_bulk_export_id: row.sourceBulkExportId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    finished_at: row.finishedAt,
  };
}

export function toBulkExportRun(row: BulkExportRunRow): BulkExportRun {
  const files = row.files.map((file) => file.key);
  return {
    id: row.id,
    bulk_export_id: row.exportId,
    session_id: row.sessionId,
    status: row.status as ExportRunStatus,
    retry_number: row.retryNumber,
    errors: row.errors,
    start_time: row.startTime,
    end_time: row.endTime,
    rows_written: row.rowsWritten,
    exported_files: files,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    finished_at: row.finishedAt,
    metadata: {
      prefix: row.prefix,
      start_time: row.startTime,
      end_time: row.endTime,
      result: {
        rows_written: row.rowsWritten,
        bytes_written: row.bytesWritten,
        exported_files: files,
        export_path: row.prefix,
        latest_cursor: row.cursor ? btoa(JSON.stringify([row.cursor.start_time, row.cursor.id])) : null,
      },
    },
  };
}

const invalidField = (field: string, msg: string) => invalid([{ type: "value_error", loc: ["body", field], msg }]);

/** Bulk-export rules a schema alone cannot say: end_time xor interval_hours, known fields, a valid filter. */
function checkInput(input: ExportInput): void {
  const scheduled = input.interval_hours !== undefined && input.interval_hours !== null;
  if (scheduled && input.end_time)
    throw invalidField("end_time", "end_time must be omitted for a scheduled export (one with interval_hours)");
  if (!scheduled && !input.end_time)
    throw invalidField("end_time", "end_time is required for an export without interval_hours");
  if (input.end_time && input.end_time <= input.start_time)
    throw invalidField("end_time", "end_time must be after start_time");
  if (input.export_fields) {
    const unknown = unknownExportFields(input.export_fields);
    if (unknown.length) throw invalidField("export_fields", `unknown export field(s): ${unknown.join(", ")}`);
    if (!input.export_fields.length)
      throw invalidField("export_fields", "export_fields must name at least one field (omit it to export every field)");
  }
  // The check of /runs/query and /runs/query/validate: a filter accepted here runs in every export run.
  const { errors } = checkQueryFilters({ filter: input.filter });
  if (errors.length) throw badRequest(filterProblemsDetail(errors));
}

export async function createExport(
  db: Database,
  /** The workspace's traces partition, where its tracing projects are. */
  traces: TracesDatabase,
  workspaceId: string,
  input: ExportInput,
  source: { id: string } | null = null,
  id: string = crypto.randomUUID(),
): Promise<BulkExport> {
  checkInput(input);
  // Both must belong to this workspace; getDestination/getProject throw not_found otherwise.
  await getDestination(db, workspaceId, input.bulk_export_destination_id);
  await getProject(traces, workspaceId, input.session_id);
  const now = new Date().toISOString();
  const scheduled = input.interval_hours !== undefined && input.interval_hours !== null;
  const row: BulkExportRow = {
    id,
    workspaceId,
    destinationId: input.bulk_export_destination_id,
    sessionId: input.session_id,
    startTime: input.start_time,
    endTime: input.end_time ?? null,
    filter: input.filter?.trim() ? input.filter : null,
    exportFields: input.export_fields ?? null,
    formatVersion: input.format_version,
    compression: input.compression,
    intervalHours: input.interval_hours ?? null,
    status: scheduled ? "IntervalScheduled" : "Created",
    sourceBulkExportId: source?.id ?? null,
    nextWindowStart: scheduled ? input.start_time : null,
    startedAt: null,
    error: null,
    manifestAttempts: 0,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  // A spawned window may be inserted twice by overlapping ticks: its fixed id makes that a no-op.
  await db.insert(bulkExports).values(row).onConflictDoNothing();
  return toBulkExport(row);
}

export async function exportRow(db: Database, workspaceId: string, id: string): Promise<BulkExportRow> {
  const row = await db
    .select()
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.id, id)))
    .get();
  if (!row) throw notFound(`Bulk export ${id} not found`);
  return row;
}

export async function listExports(db: Database, workspaceId: string): Promise<BulkExport[]> {
  const rows = await db
    .select()
    .from(bulkExports)
    .where(eq(bulkExports.workspaceId, workspaceId))
    .orderBy(desc(bulkExports.createdAt))
    .all();
  return rows.map(toBulkExport);
}

/**
 * Cancels an export: no further files are written (the writer checks before each file). A scheduled
 * export stops spawning; exports it already spawned carry on until cancelled themselves.
 */
export async function cancelExport(db: Database, workspaceId: string, id: string): Promise<BulkExport> {
  const row = await exportRow(db, workspaceId, id);
  if (FINISHED.has(row.status))
    throw conflict(`Bulk export ${id} is already ${row.status}; only an unfinished export can be cancelled`);
  const now = new Date().toISOString();
  await db.batch([
    db
      .update(bulkExports)
      .set({ status: "Cancelled", updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExports.id, id), notInArray(bulkExports.status, [...FINISHED]))),
    db
      .update(bulkExportRuns)
      .set({ status: "Cancelled", updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExportRuns.exportId, id), inArray(bulkExportRuns.status, ["Created", "Running"]))),
  ]);
  return toBulkExport({ ...row, status: "Cancelled", updatedAt: now, finishedAt: now });
}

export async function listExportRuns(db: Database, workspaceId: string, exportId: string): Promise<BulkExportRun[]> {
  await exportRow(db, workspaceId, exportId);
  const rows = await db
    .select()
    .from(bulkExportRuns)
    .where(eq(bulkExportRuns.exportId, exportId))
    .orderBy(asc(bulkExportRuns.day))
    .all();
  return rows.map(toBulkExportRun);
}

export async function getExportRun(
  db: Database,
  workspaceId: string,
  exportId: string,
  runId: string,
): Promise<BulkExportRun> {
  await exportRow(db, workspaceId, exportId);
  const row = await db
    .select()
    .from(bulkExportRuns)
    .where(and(eq(bulkExportRuns.exportId, exportId), eq(bulkExportRuns.id, runId)))
    .get();
  if (!row) throw notFound(`Export run ${runId} of bulk export ${exportId} not found`);
  return toBulkExportRun(row);
}

/** The export runs of every export a scheduled export spawned. */
export async function runsOfSpawnedExports(
  db: Database,
  workspaceId: string,
  sourceId: string,
): Promise<BulkExportRun[]> {
  await exportRow(db, workspaceId, sourceId);
  const children = await db
    .select({ id: bulkExports.id })
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.sourceBulkExportId, sourceId)))
    .all();
  if (!children.length) return [];
  const runs: BulkExportRunRow[] = [];
  for (const group of chunked(children, IDS_PER_STATEMENT)) {
    const ids = group.map((child) => child.id);
    runs.push(
      ...(await db
        .select()
        .from(bulkExportRuns)
        .where(inArray(bulkExportRuns.exportId, ids))
        .orderBy(asc(bulkExportRuns.startTime))
        .all()),
    );
  }
  return runs.map(toBulkExportRun);
}
