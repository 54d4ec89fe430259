import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { utf8Length } from "../core/bytes.ts";
import { invalid } from "../core/errors.ts";
import { jsonBytes } from "../core/json-size.ts";
import { MAX_INDEX_VALUES_BYTES, MAX_THREAD_SEARCH_PAGE_BYTES, MAX_THREAD_SEARCH_WINDOW } from "../core/limits.ts";
import { containments, inJsonList } from "../db/json-filter.ts";
import { type ThreadIndexRow, threadIndex } from "../db/schema.ts";
import { type WorkspaceBindings, workspaceDatabase } from "../workspace/database.ts";
import { hashBucket, type Partition, THREAD_INDEX_SHARDS } from "../workspace/partition.ts";
import { interruptIds, stateColumns, type ThreadRecord } from "./thread-record.ts";
import type { ThreadJson, ThreadStatus } from "./types.ts";

/**
 * The index row's bytes: a row is at most 2,000,000. Metadata (bounded by MAX_JSON_FIELD_BYTES) is
 * always kept. The config goes when metadata, error and config alone would pass this budget.
 */
const MAX_INDEX_ROW_BYTES = 1_900_000;

/**
 * What the index keeps of the thread record: a searchable projection, never a full copy of the state.
 * Values and interrupts are kept together while they fit in `MAX_INDEX_VALUES_BYTES` (and the row);
 * past it the values (`values_indexed` false: not matched by a `values` filter, and search reads them
 * from the thread itself) and the interrupts' contents (their ids stay) are left out together.
 */
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
    Math.max(0, Math.min(MAX_INDEX_VALUES_BYTES, MAX_INDEX_ROW_BYTES - other - configBytes)),
  );
  return {
    values: state.values === null ? null : record.values,
    valuesIndexed: !state.oversize,
    interrupts: state.oversize ? interruptIds(record.interrupts) : record.interrupts,
    config,
  };
}

/**
 * The index of a workspace's threads is spread over `THREAD_INDEX_SHARDS` partitions by a hash of the
 * thread id: each thread's writes go to one of them, a search asks all of them and merges.
 */
function shardOf(workspaceId: string, threadId: string): Partition {
  return { workspaceId, kind: "threads", shard: hashBucket(threadId, THREAD_INDEX_SHARDS) };
}

function allShards(workspaceId: string): Partition[] {
  return Array.from({ length: THREAD_INDEX_SHARDS }, (_, shard) => ({ workspaceId, kind: "threads", shard }));
}

/** The ids grouped by the shard that holds them. */
function byShard(
  workspaceId: string,
  threadIds: readonly string[],
): Map<number, { partition: Partition; ids: string[] }> {
  const groups = new Map<number, { partition: Partition; ids: string[] }>();
  for (const id of threadIds) {
    const partition = shardOf(workspaceId, id);
    const group = groups.get(partition.shard!) ?? { partition, ids: [] };
    group.ids.push(id);
    groups.set(partition.shard!, group);
  }
  return groups;
}

export async function upsertThreadIndex(env: WorkspaceBindings, record: ThreadRecord): Promise<void> {
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
  await workspaceDatabase(env, shardOf(record.workspaceId, record.threadId))
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

export async function deleteThreadIndex(env: WorkspaceBindings, workspaceId: string, threadId: string): Promise<void> {
  await workspaceDatabase(env, shardOf(workspaceId, threadId))
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
 * SQLite's order of text (BINARY: UTF-8 bytes, i.e. code points), for merging what shards sorted: JS
 * compares UTF-16 units, which puts U+E000–U+FFFF after the surrogates of the supplementary planes.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x += x < 0xe000 ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y < 0xe000 ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** A match as a shard sorted it: the sort column's value, then the thread id. */
interface SortKey {
  threadId: string;
  key: string;
}

const compareKeys = (a: SortKey, b: SortKey) => compareText(a.key, b.key) || compareText(a.threadId, b.threadId);

/** Matches of all shards, each shard's already in order, merged into one order (asc or desc). */
function mergeSorted<T extends SortKey>(lists: readonly T[][], order: "asc" | "desc"): T[] {
  const sign = order === "asc" ? 1 : -1;
  return lists.flat().sort((a, b) => sign * compareKeys(a, b));
}

/**
 * One page of matching threads plus the total number of matches. Each shard answers the sort keys
 * and sizes of its first `offset + limit` matches (at most MAX_THREAD_SEARCH_WINDOW: 422 past it) and
 * its count, in parallel; the merge gives the page, in the order one database would have; its rows
 * are then read from their shards. The page holds at most `maxBytes` of thread data (always at least
 * one thread), so a `limit: 1000` over large states stays within the isolate's memory. A shorter page
 * is an ordinary page: X-Pagination-Next names the offset of the first thread left out.
 */
export async function searchThreadIndex(
  env: WorkspaceBindings,
  workspaceId: string,
  search: ThreadSearch,
  maxBytes: number = MAX_THREAD_SEARCH_PAGE_BYTES,
): Promise<{ rows: ThreadIndexRow[]; total: number }> {
  const window = search.offset + search.limit;
  if (window > MAX_THREAD_SEARCH_WINDOW)
    throw invalid(
      `offset: offset + limit may be at most ${MAX_THREAD_SEARCH_WINDOW} in a thread search; narrow it with metadata, status or values, or sort by another column`,
    );
  const where = whereClause(workspaceId, search);
  const order = search.sortOrder === "asc" ? asc : desc;
  const column = SORT_COLUMNS[search.sortBy];
  const shards = await Promise.all(
    allShards(workspaceId).map(async (partition) => {
      const db = workspaceDatabase(env, partition);
      const [keys, totals] = await db.batch([
        db
          .select({
            threadId: threadIndex.threadId,
            key: sql<string>`${column}`,
            bytes: rowBytes,
            valuesIndexed: threadIndex.valuesIndexed,
          })
          .from(threadIndex)
          .where(where)
          .orderBy(order(column), order(threadIndex.threadId))
          .limit(window),
        db.select({ total: count() }).from(threadIndex).where(where),
      ]);
      return { keys, total: totals[0]?.total ?? 0 };
    }),
  );
  const total = shards.reduce((sum, shard) => sum + shard.total, 0);
  const page = mergeSorted(
    shards.map((shard) => shard.keys),
    search.sortOrder,
  ).slice(search.offset, window);
  const ids: string[] = [];
  let bytes = 0;
  for (const match of page) {
    bytes += Number(match.bytes) + (match.valuesIndexed ? 0 : UNINDEXED_STATE_BYTES);
    if (ids.length && bytes > maxBytes) break;
    ids.push(match.threadId);
  }
  if (!ids.length) return { rows: [], total };
  const found = await Promise.all(
    [...byShard(workspaceId, ids).values()].map(({ partition, ids: group }) =>
      workspaceDatabase(env, partition)
        .select()
        .from(threadIndex)
        .where(and(eq(threadIndex.workspaceId, workspaceId), inJsonList(threadIndex.threadId, group)))
        .all(),
    ),
  );
  // In the page's order; a thread deleted between the two reads is left out.
  const byId = new Map(found.flat().map((row) => [row.threadId, row]));
  return { rows: ids.flatMap((id) => byId.get(id) ?? []), total };
}

export async function countThreadIndex(
  env: WorkspaceBindings,
  workspaceId: string,
  filter: ThreadFilter,
): Promise<number> {
  const where = whereClause(workspaceId, filter);
  const counts = await Promise.all(
    allShards(workspaceId).map(async (partition) => {
      const [row] = await workspaceDatabase(env, partition).select({ total: count() }).from(threadIndex).where(where);
      return row?.total ?? 0;
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

/**
 * The ids among `threadIds` that exist in the workspace (and whose metadata contains `metadata`): one
 * statement per shard that holds any of them, whatever their number (one JSON parameter each).
 */
export async function existingThreadIds(
  env: WorkspaceBindings,
  workspaceId: string,
  threadIds: string[],
  metadata?: Record<string, unknown>,
): Promise<string[]> {
  if (!threadIds.length) return [];
  const found = await Promise.all(
    [...byShard(workspaceId, threadIds).values()].map(({ partition, ids }) =>
      workspaceDatabase(env, partition)
        .select({ threadId: threadIndex.threadId })
        .from(threadIndex)
        .where(whereClause(workspaceId, { ids, metadata }))
        .all(),
    ),
  );
  const exists = new Set(found.flat().map((r) => r.threadId));
  return threadIds.filter((id) => exists.has(id));
}

/** A thread's place in (created_at, thread_id) order: the cursor of a fan-out over threads. */
export interface ThreadKey {
  createdAt: string;
  threadId: string;
}

/**
 * Up to `limit` matching threads after `after`, in (created_at, thread_id) order: a keyset page,
 * stable while the fan-out changes the threads it has passed (cancelled, deleted). Each shard answers
 * its next `limit`; the merge keeps the first `limit` of all.
 */
export async function threadKeysAfter(
  env: WorkspaceBindings,
  workspaceId: string,
  filter: ThreadFilter,
  after: ThreadKey | null,
  limit: number,
): Promise<ThreadKey[]> {
  const keyset = after
    ? sql`(${threadIndex.createdAt}, ${threadIndex.threadId}) > (${after.createdAt}, ${after.threadId})`
    : undefined;
  const shards = await Promise.all(
    allShards(workspaceId).map((partition) =>
      workspaceDatabase(env, partition)
        .select({ createdAt: threadIndex.createdAt, threadId: threadIndex.threadId })
        .from(threadIndex)
        .where(and(whereClause(workspaceId, filter), keyset))
        .orderBy(asc(threadIndex.createdAt), asc(threadIndex.threadId))
        .limit(limit)
        .all(),
    ),
  );
  return mergeSorted(
    shards.map((keys) => keys.map((k) => ({ ...k, key: k.createdAt }))),
    "asc",
  )
    .slice(0, limit)
    .map(({ createdAt, threadId }) => ({ createdAt, threadId }));
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
