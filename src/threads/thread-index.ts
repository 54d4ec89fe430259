import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { utf8Length } from "../core/bytes.ts";
import { jsonBytes } from "../core/json-size.ts";
import { MAX_THREAD_ROW_STATE_BYTES, MAX_THREAD_SEARCH_PAGE_BYTES } from "../core/limits.ts";
import type { Database } from "../db/client.ts";
import { containments, inJsonList } from "../db/json-filter.ts";
import { type ThreadIndexRow, threadIndex } from "../db/schema.ts";
import { interruptIds, stateColumns, type ThreadRecord } from "./thread-record.ts";
import type { ThreadJson, ThreadStatus } from "./types.ts";

/**
 * The index row's bytes: D1 refuses a row over 2,000,000. Metadata (bounded by MAX_JSON_FIELD_BYTES)
 * is always kept. The config goes when metadata, error and config alone would pass this budget;
 * values and interrupts are kept within what is left (and `MAX_THREAD_ROW_STATE_BYTES`), or else
 * the values (`values_indexed` false: not searchable, reads come from the thread itself) and the
 * interrupts' contents (their ids stay) are left out together.
 */
const MAX_INDEX_ROW_BYTES = 1_900_000;

/** What the D1 index keeps of the thread record: a projection that always fits one row. */
export function indexProjection(record: ThreadRecord) {
  const other = jsonBytes(record.metadata) + utf8Length(record.error ?? "");
  let config = record.config;
  let configBytes = jsonBytes(config);
  if (other + configBytes > MAX_INDEX_ROW_BYTES) {
    config = {};
    configBytes = 2;
  }
  const state = stateColumns(
    record,
    Math.max(0, Math.min(MAX_THREAD_ROW_STATE_BYTES, MAX_INDEX_ROW_BYTES - other - configBytes)),
  );
  return {
    values: state.values === null ? null : record.values,
    valuesIndexed: !state.oversize,
    interrupts: state.oversize ? interruptIds(record.interrupts) : record.interrupts,
    config,
  };
}

export async function upsertThreadIndex(db: Database, record: ThreadRecord): Promise<void> {
  const row = {
    workspaceId: record.workspaceId,
    threadId: record.threadId,
    status: record.status,
    metadata: record.metadata,
    ...indexProjection(record),
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
  if (filter.ids?.length) conditions.push(inJsonList(threadIndex.threadId, filter.ids));
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

/**
 * What a thread whose state is not in the index (`values_indexed` false) counts against the page's
 * byte budget: its state is read from the thread itself and is larger than any row.
 */
const UNINDEXED_STATE_BYTES = 2_000_000;

/** The UTF-8 bytes of a row's JSON and text columns, as SQLite stores them. */
const rowBytes = sql<number>`coalesce(length(CAST(${threadIndex.metadata} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.values} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.config} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.interrupts} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.error} AS BLOB)), 0)`;

/**
 * One page of matching threads plus the total number of matches. The page holds at most `maxBytes`
 * of thread data (always at least one thread): the matches' sizes are read first, then the rows of
 * those that fit, so a `limit: 1000` over large states neither passes D1's result limit nor fills
 * the isolate's memory. A shorter page is an ordinary page: X-Pagination-Next names the offset of
 * the first thread left out.
 */
export async function searchThreadIndex(
  db: Database,
  workspaceId: string,
  search: ThreadSearch,
  maxBytes: number = MAX_THREAD_SEARCH_PAGE_BYTES,
): Promise<{ rows: ThreadIndexRow[]; total: number }> {
  const where = whereClause(workspaceId, search);
  const order = search.sortOrder === "asc" ? asc : desc;
  const [sizes, totals] = await db.batch([
    db
      .select({ threadId: threadIndex.threadId, bytes: rowBytes, valuesIndexed: threadIndex.valuesIndexed })
      .from(threadIndex)
      .where(where)
      .orderBy(order(SORT_COLUMNS[search.sortBy]), order(threadIndex.threadId))
      .limit(search.limit)
      .offset(search.offset),
    db.select({ total: count() }).from(threadIndex).where(where),
  ]);
  const total = totals[0]?.total ?? 0;
  const ids: string[] = [];
  let bytes = 0;
  for (const size of sizes) {
    bytes += Number(size.bytes) + (size.valuesIndexed ? 0 : UNINDEXED_STATE_BYTES);
    if (ids.length && bytes > maxBytes) break;
    ids.push(size.threadId);
  }
  if (!ids.length) return { rows: [], total };
  const rows = await db
    .select()
    .from(threadIndex)
    .where(and(eq(threadIndex.workspaceId, workspaceId), inJsonList(threadIndex.threadId, ids)));
  // In the page's order; a thread deleted between the two reads is left out.
  const byId = new Map(rows.map((row) => [row.threadId, row]));
  return { rows: ids.flatMap((id) => byId.get(id) ?? []), total };
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
