import { and, asc, count, desc, eq, isNotNull, isNull, lte, type SQL } from "drizzle-orm";
import { containments } from "../db/json-filter.ts";
import { type CronRow, crons } from "../db/schema.ts";
import { type WorkspaceBindings, type WorkspaceDatabase, workspaceDatabase } from "../workspace/database.ts";

/**
 * Storage of crons: a workspace's crons live in its `crons` partition (a Durable Object of its own),
 * whose alarm fires them. Every query here is one call to it (or, from the alarm, a local query).
 */

type Database = WorkspaceDatabase;

/**
 * The workspace's crons partition. With `armAt` (epoch ms), the call also makes its alarm fire no
 * later than then: a write that schedules a run arms the alarm in the same call.
 */
export const cronsDatabase = (env: WorkspaceBindings, workspaceId: string, armAt?: number): Database =>
  workspaceDatabase(env, { workspaceId, kind: "crons" }, { armAt });

/** The epoch ms of a row's next run, to arm the alarm with; undefined when it has none. */
export const armTime = (row: { nextRunDate?: string | null }): number | undefined =>
  row.nextRunDate ? Date.parse(row.nextRunDate) : undefined;

export type NewCron = typeof crons.$inferInsert;

export async function insertCron(db: Database, row: NewCron): Promise<CronRow> {
  return db.insert(crons).values(row).returning().get();
}

export async function getCron(db: Database, workspaceId: string, cronId: string): Promise<CronRow | undefined> {
  return db
    .select()
    .from(crons)
    .where(and(eq(crons.workspaceId, workspaceId), eq(crons.cronId, cronId)))
    .get();
}

/**
 * Replaces the cron's row by `next` if it is still `current` (compare-and-set on the columns every
 * writer changes: updated_at, which each patch strictly advances, next_run_date and enabled, which
 * the tick's claim and disable change). Undefined when another write landed first.
 */
export async function replaceCron(
  db: Database,
  current: CronRow,
  next: Partial<NewCron>,
): Promise<CronRow | undefined> {
  return db
    .update(crons)
    .set(next)
    .where(
      and(
        eq(crons.workspaceId, current.workspaceId),
        eq(crons.cronId, current.cronId),
        eq(crons.updatedAt, current.updatedAt),
        eq(crons.enabled, current.enabled),
        current.nextRunDate === null ? isNull(crons.nextRunDate) : eq(crons.nextRunDate, current.nextRunDate),
      ),
    )
    .returning()
    .get();
}

export async function deleteCron(db: Database, workspaceId: string, cronId: string): Promise<boolean> {
  const deleted = await db
    .delete(crons)
    .where(and(eq(crons.workspaceId, workspaceId), eq(crons.cronId, cronId)))
    .returning({ id: crons.cronId });
  return deleted.length > 0;
}

export interface CronFilter {
  /** An authorization handler's filter, as containment on the cron's metadata. */
  authMetadata?: Record<string, unknown>;
  assistantId?: string;
  threadId?: string;
  enabled?: boolean;
  metadata?: Record<string, unknown>;
}

export interface CronSearch extends CronFilter {
  limit: number;
  offset: number;
  sortBy: "cron_id" | "assistant_id" | "thread_id" | "next_run_date" | "end_time" | "created_at" | "updated_at";
  sortOrder: "asc" | "desc";
}

function filterClause(workspaceId: string, filter: CronFilter): SQL | undefined {
  return and(
    eq(crons.workspaceId, workspaceId),
    filter.assistantId ? eq(crons.assistantId, filter.assistantId) : undefined,
    filter.threadId ? eq(crons.threadId, filter.threadId) : undefined,
    filter.enabled === undefined ? undefined : eq(crons.enabled, filter.enabled),
    ...containments([crons.metadata, filter.metadata], [crons.metadata, filter.authMetadata]),
  );
}

const SORT = {
  cron_id: crons.cronId,
  assistant_id: crons.assistantId,
  thread_id: crons.threadId,
  next_run_date: crons.nextRunDate,
  end_time: crons.endTime,
  created_at: crons.createdAt,
  updated_at: crons.updatedAt,
} as const;

export async function searchCrons(
  db: Database,
  workspaceId: string,
  search: CronSearch,
): Promise<{ rows: CronRow[]; total: number }> {
  const clause = filterClause(workspaceId, search);
  const order = search.sortOrder === "asc" ? asc : desc;
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(crons)
      .where(clause)
      .orderBy(order(SORT[search.sortBy]), order(crons.cronId))
      .limit(search.limit)
      .offset(search.offset),
    db.select({ total: count() }).from(crons).where(clause),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export async function countCrons(db: Database, workspaceId: string, filter: CronFilter): Promise<number> {
  const [row] = await db.select({ total: count() }).from(crons).where(filterClause(workspaceId, filter));
  return row?.total ?? 0;
}

/** A cron that has come due: which one, and the occurrence it is due for. */
export interface DueCron {
  cronId: string;
  nextRunDate: string;
}

/**
 * Enabled crons whose next run is at or before `horizon`, soonest first, at most `limit`: their ids
 * only, so a long list does not hold every payload in memory (the firing reads each row).
 */
export async function dueCrons(db: Database, horizon: string, limit: number): Promise<DueCron[]> {
  const rows = await db
    .select({ cronId: crons.cronId, nextRunDate: crons.nextRunDate })
    .from(crons)
    .where(and(isNotNull(crons.nextRunDate), lte(crons.nextRunDate, horizon), eq(crons.enabled, true)))
    .orderBy(asc(crons.nextRunDate))
    .limit(limit)
    .all();
  return rows as DueCron[];
}

/** The soonest next run of an enabled cron (epoch ms), or null when none is scheduled. */
export async function nextDue(db: Database): Promise<number | null> {
  const row = await db
    .select({ at: crons.nextRunDate })
    .from(crons)
    .where(and(isNotNull(crons.nextRunDate), eq(crons.enabled, true)))
    .orderBy(asc(crons.nextRunDate))
    .limit(1)
    .get();
  return row?.at ? Date.parse(row.at) : null;
}

/**
 * Moves a cron's next run from `expected` to `next`; true when this caller won. A concurrent patch
 * (or an overlapping alarm run) may have changed it first; only one of them can make this update.
 */
export async function claimCron(
  db: Database,
  cronId: string,
  expected: string,
  next: string | null,
  at: string,
): Promise<boolean> {
  const claimed = await db
    .update(crons)
    .set({ nextRunDate: next, updatedAt: at })
    .where(and(eq(crons.cronId, cronId), eq(crons.nextRunDate, expected), eq(crons.enabled, true)))
    .returning({ id: crons.cronId });
  return claimed.length > 0;
}

export async function disableCron(db: Database, cronId: string, reason: string, at: string): Promise<void> {
  await db
    .update(crons)
    .set({ enabled: false, disabledReason: reason, nextRunDate: null, updatedAt: at })
    .where(eq(crons.cronId, cronId))
    .run();
}
