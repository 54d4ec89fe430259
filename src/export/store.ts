import { and, asc, desc, eq, getTableColumns, gt, inArray, lt, lte, notInArray, sql } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import type { Database } from "../db/client.ts";
import {
  type BulkExportRow,
  type BulkExportRunRow,
  bulkExportRuns,
  bulkExports,
  type ExportDestinationRow,
  exportDestinations,
} from "../db/schema.ts";
import { IDS_PER_STATEMENT, rowsPerStatement } from "../db/sql-batch.ts";

/**
 * Storage of bulk exports in D1: destinations, exports and their runs (one per UTC day). Every query
 * of export/ is here; the compare-and-set writes answer whether they won, so two ticks or two
 * deliveries of a queue message never do the same step twice.
 */

/** The statuses of an export run that is not finished. */
const UNFINISHED_RUN = ["Created", "Running"] as const;

// ---- destinations ----

export async function insertDestination(db: Database, row: typeof exportDestinations.$inferInsert): Promise<void> {
  await db.insert(exportDestinations).values(row);
}

export async function findDestination(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<ExportDestinationRow | undefined> {
  return db
    .select()
    .from(exportDestinations)
    .where(and(eq(exportDestinations.workspaceId, workspaceId), eq(exportDestinations.id, id)))
    .get();
}

/** A workspace's destinations, newest first. */
export async function destinationRows(db: Database, workspaceId: string): Promise<ExportDestinationRow[]> {
  return db
    .select()
    .from(exportDestinations)
    .where(eq(exportDestinations.workspaceId, workspaceId))
    .orderBy(desc(exportDestinations.createdAt))
    .all();
}

export async function updateDestinationCredentialsRow(
  db: Database,
  workspaceId: string,
  id: string,
  values: Pick<ExportDestinationRow, "credentials" | "credentialsKeys" | "updatedAt">,
): Promise<void> {
  await db
    .update(exportDestinations)
    .set(values)
    .where(and(eq(exportDestinations.workspaceId, workspaceId), eq(exportDestinations.id, id)));
}

// ---- exports ----

/** Inserts an export; one whose id exists already (a window spawned twice) is left as it is. */
export async function insertExport(db: Database, row: typeof bulkExports.$inferInsert): Promise<void> {
  await db.insert(bulkExports).values(row).onConflictDoNothing();
}

export async function findExport(db: Database, workspaceId: string, id: string): Promise<BulkExportRow | undefined> {
  return db
    .select()
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.id, id)))
    .get();
}

/** An export by id alone (the tick and the queue, which act for every workspace). */
export async function exportById(db: Database, id: string): Promise<BulkExportRow | undefined> {
  return db.select().from(bulkExports).where(eq(bulkExports.id, id)).get();
}

export async function exportStatus(db: Database, id: string): Promise<{ status: string } | undefined> {
  return db.select({ status: bulkExports.status }).from(bulkExports).where(eq(bulkExports.id, id)).get();
}

/** A workspace's exports, newest first. */
export async function exportRows(db: Database, workspaceId: string): Promise<BulkExportRow[]> {
  return db
    .select()
    .from(bulkExports)
    .where(eq(bulkExports.workspaceId, workspaceId))
    .orderBy(desc(bulkExports.createdAt))
    .all();
}

/** A workspace's scheduled exports (those that spawn windows). */
export async function scheduledExports(db: Database, workspaceId: string): Promise<BulkExportRow[]> {
  return db
    .select()
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.status, "IntervalScheduled")))
    .all();
}

/** A workspace's exports in `status`, oldest first. */
export async function exportsIn(db: Database, workspaceId: string, status: string): Promise<BulkExportRow[]> {
  return db
    .select()
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.status, status)))
    .orderBy(asc(bulkExports.createdAt))
    .all();
}

/** The workspaces (after `after`, in order, `limit` at most) that have exports in one of `statuses`. */
export async function workspacesWithExportsIn(
  db: Database,
  statuses: string[],
  after: string | null,
  limit: number,
): Promise<{ workspaceId: string }[]> {
  return db
    .selectDistinct({ workspaceId: bulkExports.workspaceId })
    .from(bulkExports)
    .where(and(inArray(bulkExports.status, statuses), after === null ? undefined : gt(bulkExports.workspaceId, after)))
    .orderBy(asc(bulkExports.workspaceId))
    .limit(limit)
    .all();
}

/** The ids of a workspace's running exports. */
export async function runningExportIds(db: Database, workspaceId: string): Promise<{ id: string }[]> {
  return db
    .select({ id: bulkExports.id })
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.status, "Running")))
    .all();
}

/** The ids of the exports a scheduled export spawned. */
export async function spawnedExportIds(db: Database, workspaceId: string, sourceId: string): Promise<{ id: string }[]> {
  return db
    .select({ id: bulkExports.id })
    .from(bulkExports)
    .where(and(eq(bulkExports.workspaceId, workspaceId), eq(bulkExports.sourceBulkExportId, sourceId)))
    .all();
}

/** The ids of a workspace's running exports started at or before `cutoff`. */
export async function exportsStartedBy(db: Database, workspaceId: string, cutoff: string): Promise<{ id: string }[]> {
  return db
    .select({ id: bulkExports.id })
    .from(bulkExports)
    .where(
      and(
        eq(bulkExports.workspaceId, workspaceId),
        eq(bulkExports.status, "Running"),
        lte(bulkExports.startedAt, cutoff),
      ),
    )
    .all();
}

/** Cancels an unfinished export and its unfinished runs, in one batch. */
export async function cancelExportRows(
  db: Database,
  id: string,
  finished: ReadonlySet<string>,
  now: string,
): Promise<void> {
  await db.batch([
    db
      .update(bulkExports)
      .set({ status: "Cancelled", updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExports.id, id), notInArray(bulkExports.status, [...finished]))),
    db
      .update(bulkExportRuns)
      .set({ status: "Cancelled", updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExportRuns.exportId, id), inArray(bulkExportRuns.status, [...UNFINISHED_RUN]))),
  ]);
}

/** Times out a running export and its unfinished runs, in one batch. */
export async function timeOutExportRows(db: Database, id: string, error: string, at: string): Promise<void> {
  await db.batch([
    db
      .update(bulkExports)
      .set({ status: "TimedOut", error, updatedAt: at, finishedAt: at })
      .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "Running"))),
    db
      .update(bulkExportRuns)
      .set({ status: "TimedOut", updatedAt: at, finishedAt: at })
      .where(and(eq(bulkExportRuns.exportId, id), inArray(bulkExportRuns.status, [...UNFINISHED_RUN]))),
  ]);
}

/** Marks a running export Completed. */
export async function completeRunningExport(db: Database, id: string, now: string): Promise<void> {
  await db
    .update(bulkExports)
    .set({ status: "Completed", updatedAt: now, finishedAt: now })
    .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "Running")));
}

/** Fails a running export with `error`. */
export async function failRunningExport(db: Database, id: string, error: string, now: string): Promise<void> {
  await db
    .update(bulkExports)
    .set({ status: "Failed", error, updatedAt: now, finishedAt: now })
    .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "Running")));
}

/** Fails an export whatever its status (its start failed). */
export async function failExport(db: Database, id: string, error: string, at: string): Promise<void> {
  await db
    .update(bulkExports)
    .set({ status: "Failed", error, updatedAt: at, finishedAt: at })
    .where(eq(bulkExports.id, id));
}

/** Counts a failed manifest write, compare-and-set on the count: two ticks failing together count once. */
export async function countManifestFailure(db: Database, id: string, attempt: number, now: string): Promise<void> {
  await db
    .update(bulkExports)
    .set({ manifestAttempts: attempt + 1, updatedAt: now })
    .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "Running"), eq(bulkExports.manifestAttempts, attempt)));
}

/** Fails a scheduled export that is still scheduled. */
export async function failSchedule(db: Database, id: string, error: string, at: string): Promise<void> {
  await db
    .update(bulkExports)
    .set({ status: "Failed", error, updatedAt: at, finishedAt: at })
    .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "IntervalScheduled")));
}

/**
 * Moves a schedule's next window from `from` to `next`, compare-and-set: false when the schedule
 * was cancelled, or another tick advanced it.
 */
export async function advanceSchedule(
  db: Database,
  id: string,
  from: string,
  next: string,
  at: string,
): Promise<boolean> {
  const advanced = await db
    .update(bulkExports)
    .set({ nextWindowStart: next, updatedAt: at })
    .where(
      and(eq(bulkExports.id, id), eq(bulkExports.status, "IntervalScheduled"), eq(bulkExports.nextWindowStart, from)),
    )
    .returning({ id: bulkExports.id });
  return advanced.length > 0;
}

/** Moves a Created export to Running: false when another tick claimed it first. */
export async function claimExport(db: Database, id: string, at: string): Promise<boolean> {
  const claimed = await db
    .update(bulkExports)
    .set({ status: "Running", startedAt: at, updatedAt: at })
    .where(and(eq(bulkExports.id, id), eq(bulkExports.status, "Created")))
    .returning({ id: bulkExports.id });
  return claimed.length > 0;
}

// ---- export runs ----

/** Inserts an export's runs; those whose id exists already are left as they are. */
export async function insertExportRuns(db: Database, runs: (typeof bulkExportRuns.$inferInsert)[]): Promise<void> {
  for (const group of chunked(runs, rowsPerStatement(Object.keys(getTableColumns(bulkExportRuns)).length)))
    await db.insert(bulkExportRuns).values(group).onConflictDoNothing();
}

export async function exportRunById(db: Database, runId: string): Promise<BulkExportRunRow | undefined> {
  return db.select().from(bulkExportRuns).where(eq(bulkExportRuns.id, runId)).get();
}

export async function findExportRun(
  db: Database,
  exportId: string,
  runId: string,
): Promise<BulkExportRunRow | undefined> {
  return db
    .select()
    .from(bulkExportRuns)
    .where(and(eq(bulkExportRuns.exportId, exportId), eq(bulkExportRuns.id, runId)))
    .get();
}

/** An export's runs, by day. */
export async function exportRunRows(db: Database, exportId: string): Promise<BulkExportRunRow[]> {
  return db
    .select()
    .from(bulkExportRuns)
    .where(eq(bulkExportRuns.exportId, exportId))
    .orderBy(asc(bulkExportRuns.day))
    .all();
}

/** The runs of the given exports, by start time within each statement's group of exports. */
export async function runRowsOfExports(db: Database, exportIds: string[]): Promise<BulkExportRunRow[]> {
  const runs: BulkExportRunRow[] = [];
  for (const ids of chunked(exportIds, IDS_PER_STATEMENT)) {
    runs.push(
      ...(await db
        .select()
        .from(bulkExportRuns)
        .where(inArray(bulkExportRuns.exportId, ids))
        .orderBy(asc(bulkExportRuns.startTime))
        .all()),
    );
  }
  return runs;
}

/** Unfinished runs of a workspace's running exports not updated since `cutoff` (100 at most). */
export async function stalledRunIds(db: Database, workspaceId: string, cutoff: string): Promise<{ id: string }[]> {
  return db
    .select({ id: bulkExportRuns.id })
    .from(bulkExportRuns)
    .innerJoin(bulkExports, eq(bulkExports.id, bulkExportRuns.exportId))
    .where(
      and(
        eq(bulkExports.workspaceId, workspaceId),
        eq(bulkExports.status, "Running"),
        inArray(bulkExportRuns.status, [...UNFINISHED_RUN]),
        lt(bulkExportRuns.updatedAt, cutoff),
      ),
    )
    .limit(100)
    .all();
}

export async function touchExportRun(db: Database, runId: string, at: string): Promise<void> {
  await db.update(bulkExportRuns).set({ updatedAt: at }).where(eq(bulkExportRuns.id, runId));
}

/** Moves a Created run to Running (a no-op when a delivery got there first). */
export async function startExportRun(db: Database, runId: string, at: string): Promise<void> {
  await db
    .update(bulkExportRuns)
    .set({ status: "Running", updatedAt: at })
    .where(and(eq(bulkExportRuns.id, runId), eq(bulkExportRuns.status, "Created")));
}

/**
 * Records the run's progress after its file number `fileIndex`, compare-and-set on the file count:
 * false when a second delivery of the same message got there first (the file is not recorded twice).
 */
export async function recordExportRunFile(
  db: Database,
  runId: string,
  fileIndex: number,
  values: Pick<BulkExportRunRow, "files" | "rowsWritten" | "bytesWritten" | "cursor" | "updatedAt">,
): Promise<boolean> {
  const saved = await db
    .update(bulkExportRuns)
    .set(values)
    .where(
      and(
        eq(bulkExportRuns.id, runId),
        eq(bulkExportRuns.status, "Running"),
        sql`json_array_length(${bulkExportRuns.files}) = ${fileIndex}`,
      ),
    )
    .returning({ id: bulkExportRuns.id });
  return saved.length > 0;
}

/** Ends an unfinished run with `status`. */
export async function settleExportRun(
  db: Database,
  runId: string,
  status: "Completed" | "Cancelled" | "TimedOut" | "Failed",
  now: string,
): Promise<void> {
  await db
    .update(bulkExportRuns)
    .set({ status, updatedAt: now, finishedAt: now })
    .where(and(eq(bulkExportRuns.id, runId), inArray(bulkExportRuns.status, [...UNFINISHED_RUN])));
}

/** Records a failed attempt of an unfinished run, to be retried. */
export async function recordExportRunRetry(
  db: Database,
  runId: string,
  values: Pick<BulkExportRunRow, "retryNumber" | "errors" | "updatedAt">,
): Promise<void> {
  await db
    .update(bulkExportRuns)
    .set(values)
    .where(and(eq(bulkExportRuns.id, runId), inArray(bulkExportRuns.status, [...UNFINISHED_RUN])));
}

/** Fails an unfinished run and its running export, in one batch. */
export async function failExportRunAndExport(
  db: Database,
  run: Pick<BulkExportRunRow, "id" | "exportId">,
  values: Pick<BulkExportRunRow, "retryNumber" | "errors">,
  exportError: string,
  now: string,
): Promise<void> {
  await db.batch([
    db
      .update(bulkExportRuns)
      .set({ status: "Failed", ...values, updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExportRuns.id, run.id), inArray(bulkExportRuns.status, [...UNFINISHED_RUN]))),
    db
      .update(bulkExports)
      .set({ status: "Failed", error: exportError, updatedAt: now, finishedAt: now })
      .where(and(eq(bulkExports.id, run.exportId), eq(bulkExports.status, "Running"))),
  ]);
}
