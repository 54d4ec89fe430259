import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { containments } from "../db/json-filter.ts";
import { type ThreadIndexRow, threadIndex } from "../db/schema.ts";
import type { ThreadRecord } from "./thread-record.ts";
import type { ThreadJson, ThreadStatus } from "./types.ts";

/** State larger than this is not copied into D1 (its row limit is 2 MB); such values are not searchable. */
const MAX_INDEXED_VALUES_BYTES = 1_000_000;

export async function upsertThreadIndex(db: Database, record: ThreadRecord): Promise<void> {
  const valuesJson = record.values === null ? null : JSON.stringify(record.values);
  const indexed =
    !record.valuesOversize &&
    (valuesJson === null || new TextEncoder().encode(valuesJson).byteLength <= MAX_INDEXED_VALUES_BYTES);
  const row = {
    workspaceId: record.workspaceId,
    threadId: record.threadId,
    status: record.status,
    metadata: record.metadata,
    values: indexed ? record.values : null,
    valuesIndexed: indexed,
    config: record.config,
    interrupts: record.interrupts,
    error: record.error,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    stateUpdatedAt: record.stateUpdatedAt,
  };
  await db
    .insert(threadIndex)
    .values(row)
    // An older write arriving late must not overwrite a newer one.
    .onConflictDoUpdate({
      target: [threadIndex.workspaceId, threadIndex.threadId],
      set: row,
      setWhere: sql`excluded.updated_at >= ${threadIndex.updatedAt}`,
    })
    .run();
}

export async function deleteThreadIndex(db: Database, workspaceId: string, threadId: string): Promise<void> {
  await db
    .delete(threadIndex)
    .where(and(eq(threadIndex.workspaceId, workspaceId), eq(threadIndex.threadId, threadId)))
    .run();
}

export interface ThreadFilter {
  metadata?: Record<string, unknown>;
  /** An authorization handler's filter, as containment: applied on top of `metadata`. */
  authMetadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  status?: ThreadStatus;
  ids?: string[];
}

export interface ThreadSearch extends ThreadFilter {
  limit: number;
  offset: number;
  sortBy: "thread_id" | "status" | "created_at" | "updated_at" | "state_updated_at";
  sortOrder: "asc" | "desc";
}

function whereClause(workspaceId: string, filter: ThreadFilter): SQL | undefined {
  const conditions: SQL[] = [eq(threadIndex.workspaceId, workspaceId)];
  if (filter.status) conditions.push(eq(threadIndex.status, filter.status));
  // One JSON parameter for any number of ids.
  if (filter.ids?.length)
    conditions.push(sql`${threadIndex.threadId} IN (SELECT value FROM json_each(${JSON.stringify(filter.ids)}))`);
  const values = filter.values && Object.keys(filter.values).length ? filter.values : undefined;
  // A values filter only sees threads whose state was small enough to index.
  if (values) conditions.push(eq(threadIndex.valuesIndexed, true));
  const filters = containments(
    [threadIndex.metadata, filter.metadata],
    [threadIndex.metadata, filter.authMetadata],
    [threadIndex.values, values],
  );
  return and(...conditions, ...filters);
}

const SORT_COLUMNS = {
  thread_id: threadIndex.threadId,
  status: threadIndex.status,
  created_at: threadIndex.createdAt,
  updated_at: threadIndex.updatedAt,
  state_updated_at: threadIndex.stateUpdatedAt,
} as const;

/** One page of matching threads plus the total number of matches, in one D1 round trip. */
export async function searchThreadIndex(
  db: Database,
  workspaceId: string,
  search: ThreadSearch,
): Promise<{ rows: ThreadIndexRow[]; total: number }> {
  const where = whereClause(workspaceId, search);
  const order = search.sortOrder === "asc" ? asc : desc;
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(threadIndex)
      .where(where)
      .orderBy(order(SORT_COLUMNS[search.sortBy]), order(threadIndex.threadId))
      .limit(search.limit)
      .offset(search.offset),
    db.select({ total: count() }).from(threadIndex).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export async function countThreadIndex(db: Database, workspaceId: string, filter: ThreadFilter): Promise<number> {
  const [row] = await db.select({ total: count() }).from(threadIndex).where(whereClause(workspaceId, filter));
  return row?.total ?? 0;
}

/**
 * The ids among `threadIds` that exist in the workspace (and whose metadata contains `metadata`), in
 * one statement whatever their number (one JSON parameter, as in `whereClause`).
 */
export async function existingThreadIds(
  db: Database,
  workspaceId: string,
  threadIds: string[],
  metadata?: Record<string, unknown>,
): Promise<string[]> {
  if (!threadIds.length) return [];
  const rows = await db
    .select({ threadId: threadIndex.threadId })
    .from(threadIndex)
    .where(whereClause(workspaceId, { ids: threadIds, metadata }));
  return rows.map((r) => r.threadId);
}

/** A thread's place in (created_at, thread_id) order: the cursor of a fan-out over threads. */
export interface ThreadKey {
  createdAt: string;
  threadId: string;
}

/**
 * Up to `limit` matching threads after `after`, in (created_at, thread_id) order: a keyset page,
 * stable while the fan-out changes the threads it has passed (cancelled, deleted).
 */
export async function threadKeysAfter(
  db: Database,
  workspaceId: string,
  filter: ThreadFilter,
  after: ThreadKey | null,
  limit: number,
): Promise<ThreadKey[]> {
  const keyset = after
    ? sql`(${threadIndex.createdAt}, ${threadIndex.threadId}) > (${after.createdAt}, ${after.threadId})`
    : undefined;
  return db
    .select({ createdAt: threadIndex.createdAt, threadId: threadIndex.threadId })
    .from(threadIndex)
    .where(and(whereClause(workspaceId, filter), keyset))
    .orderBy(asc(threadIndex.createdAt), asc(threadIndex.threadId))
    .limit(limit);
}

export function indexRowJson(row: ThreadIndexRow): ThreadJson {
  return {
    thread_id: row.threadId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    state_updated_at: row.stateUpdatedAt,
    metadata: row.metadata,
    status: row.status,
    config: row.config,
    values: (row.values as Record<string, unknown> | null) ?? {},
    interrupts: row.interrupts as Record<string, unknown[]>,
    error: row.error,
  };
}
