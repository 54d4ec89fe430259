import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { invalid } from "../core/errors.ts";
import { jsonBytes } from "../core/json-size.ts";
import {
  MAX_THREAD_INDEX_STATE_BYTES,
  MAX_THREAD_ROW_STATE_BYTES,
  MAX_THREAD_SEARCH_PAGE_BYTES,
  onFreePlan,
  type PlanVars,
  THREAD_SEARCH_CALLS,
  THREAD_SEARCH_KEYS_PER_CALL,
} from "../core/limits.ts";
import { containments, inJsonList } from "../db/json-filter.ts";
import { type WorkspaceBindings, type WorkspaceDatabase, workspaceDatabase } from "../workspace/database.ts";
import { hashBucket, type Partition } from "../workspace/partition.ts";
import { interruptIds, type ThreadRecord } from "./object/record.ts";
import type { ThreadJson, ThreadStatus } from "./types.ts";

/**
 * The thread index: a searchable projection of each thread (metadata, status, timestamps, config,
 * interrupts and a bounded values summary), written by the thread's Durable Object. It lives in the
 * workspace's `threads` partitions, spread by a hash of the thread id over THREAD_INDEX_SHARDS
 * objects: a write goes to the thread's own shard, a search or count asks every shard and merges.
 */

/**
 * Objects the index of one workspace is spread over. An object serves about 1,000 requests/s; a
 * stateful run writes its thread's shard once or twice (create, busy → idle coalesced), so 8
 * shards carry 1,000 runs/s per workspace at about 250 writes/s each, leaving room for searches,
 * which cost one call to every shard (plus one per shard holding a row of the page): more shards
 * would make each search dearer. It is part of where a thread's row is found: it must NEVER change
 * once a deployment holds data (changing it means moving every row).
 */
export const THREAD_INDEX_SHARDS = 8;

/** The partition holding a thread's index row. */
export function threadIndexPartition(workspaceId: string, threadId: string): Partition {
  return { workspaceId, kind: "threads", shard: hashBucket(threadId, THREAD_INDEX_SHARDS) };
}

const shardDatabase = (env: WorkspaceBindings, workspaceId: string, shard: number): WorkspaceDatabase =>
  workspaceDatabase(env, { workspaceId, kind: "threads", shard });

const allShards = Array.from({ length: THREAD_INDEX_SHARDS }, (_, shard) => shard);

/**
 * The index table of a `threads` partition (src/workspace/tables.ts creates it). No workspace
 * column: the partition is the workspace's. `state_bytes` is the size of the thread's values and
 * interrupts, kept when they are not (`values_indexed` false) so a search page's byte budget counts
 * what reading them from the thread will bring.
 */
export const threadIndex = sqliteTable("threads", {
  threadId: text("thread_id").primaryKey(),
  status: text("status", { enum: ["idle", "busy", "interrupted", "error"] }).notNull(),
  metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
  values: text("values", { mode: "json" }).$type<unknown>(),
  valuesIndexed: integer("values_indexed", { mode: "boolean" }).notNull().default(true),
  stateBytes: integer("state_bytes").notNull().default(0),
  config: text("config", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
  interrupts: text("interrupts", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
  error: text("error"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  stateUpdatedAt: text("state_updated_at").notNull(),
});

export type ThreadIndexRow = typeof threadIndex.$inferSelect;

/**
 * What the index keeps of the thread record: never a copy of a large state. Metadata, config and
 * error are bounded at input (MAX_JSON_FIELD_BYTES, MAX_ERROR_MESSAGE_LENGTH). Values and interrupts
 * are kept while together within MAX_THREAD_INDEX_STATE_BYTES; past it the values are left out
 * (`values_indexed` false: a values filter does not match the thread, search reads its values from
 * the thread itself) and the interrupts keep only their ids.
 */
export function indexProjection(record: ThreadRecord) {
  // Config is bounded at input; one merged past any bound would still not make the row too big.
  const config = jsonBytes(record.metadata) + jsonBytes(record.config) > MAX_INDEX_ROW_BYTES ? {} : record.config;
  const values = record.values === null ? 0 : jsonBytes(record.values);
  const interrupts = jsonBytes(record.interrupts);
  // Values too large even for the thread's own row (read from its checkpoints): at least that bound.
  const unread = record.values === null && (record.valuesOversize ?? false);
  const stateBytes = values + interrupts + (unread ? MAX_THREAD_ROW_STATE_BYTES : 0);
  const oversize = unread || stateBytes > MAX_THREAD_INDEX_STATE_BYTES;
  return oversize
    ? {
        values: null,
        valuesIndexed: false,
        stateBytes,
        interrupts: interruptIds(record.interrupts),
        config,
      }
    : {
        values: record.values,
        valuesIndexed: true,
        stateBytes: 0,
        interrupts: record.interrupts,
        config,
      };
}

/** An index row's bytes at most: DO SQLite refuses a row over 2,000,000. */
const MAX_INDEX_ROW_BYTES = 1_900_000;

/** Writes the thread's index row to its shard: one call. */
export async function upsertThreadIndex(env: WorkspaceBindings, record: ThreadRecord): Promise<void> {
  const { threadId, createdAt, ...changing } = {
    threadId: record.threadId,
    createdAt: record.createdAt,
    status: record.status,
    metadata: record.metadata,
    ...indexProjection(record),
    error: record.error,
    updatedAt: record.updatedAt,
    stateUpdatedAt: record.stateUpdatedAt,
  };
  await workspaceDatabase(env, threadIndexPartition(record.workspaceId, threadId))
    .insert(threadIndex)
    .values({ threadId, createdAt, ...changing })
    // Only what changes: an index whose columns are not set is not rewritten (created_at's).
    // An older write arriving late must not overwrite a newer one.
    .onConflictDoUpdate({
      target: threadIndex.threadId,
      set: changing,
      setWhere: sql`excluded.updated_at >= ${threadIndex.updatedAt}`,
    })
    .run();
}

export async function deleteThreadIndex(env: WorkspaceBindings, workspaceId: string, threadId: string): Promise<void> {
  await workspaceDatabase(env, threadIndexPartition(workspaceId, threadId))
    .delete(threadIndex)
    .where(eq(threadIndex.threadId, threadId))
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

function whereClause(filter: ThreadFilter): SQL | undefined {
  const conditions: SQL[] = [];
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

/** The shards an id filter can match: only the ids' own; all of them without one. */
function shardsOf(filter: ThreadFilter): Map<number, ThreadFilter> {
  if (!filter.ids?.length) return new Map(allShards.map((shard) => [shard, filter]));
  const ids = new Map<number, string[]>();
  for (const id of filter.ids) {
    const shard = hashBucket(id, THREAD_INDEX_SHARDS);
    ids.set(shard, [...(ids.get(shard) ?? []), id]);
  }
  return new Map([...ids].map(([shard, list]) => [shard, { ...filter, ids: list }]));
}

const SORT_COLUMNS = {
  thread_id: threadIndex.threadId,
  status: threadIndex.status,
  created_at: threadIndex.createdAt,
  updated_at: threadIndex.updatedAt,
  state_updated_at: threadIndex.stateUpdatedAt,
} as const;

/**
 * The UTF-8 bytes of a row's JSON and text columns, as SQLite stores them, plus those of the state
 * a search reads from the thread when the index does not hold it.
 */
const rowBytes = sql<number>`coalesce(length(CAST(${threadIndex.metadata} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.values} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.config} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.interrupts} AS BLOB)), 0)
  + coalesce(length(CAST(${threadIndex.error} AS BLOB)), 0)
  + CASE WHEN ${threadIndex.valuesIndexed} THEN 0 ELSE ${threadIndex.stateBytes} END`;

/**
 * SQLite's order of TEXT (BINARY collation: UTF-8 bytes, i.e. code points), which JavaScript's `<`
 * (UTF-16 code units) differs from past U+FFFF: the merge must order exactly as each shard does.
 */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (a.codePointAt(i) ?? x) - (b.codePointAt(i) ?? y);
  }
  return a.length - b.length;
}

/** A match's place in a search's order, what it weighs, and where it lives. */
interface SearchKey {
  sort: string;
  threadId: string;
  bytes: number;
  indexed: boolean;
  shard: number;
}

/** One shard's matches in order, read a chunk at a time (keyset: after the last key read). */
interface ShardCursor {
  shard: number;
  filter: ThreadFilter;
  keys: SearchKey[];
  at: number;
  done: boolean;
}

/**
 * One page of matching threads plus the total number of matches. Every shard answers its count and
 * its first matches in the requested order as (sort key, id, bytes) only; the Worker merges them in
 * the order one database would give (sort column, then thread id) and keeps the page, then reads the
 * page's rows from their shards. A deep offset reads further keys THREAD_SEARCH_KEYS_PER_CALL at a
 * time from the shards it passes through, within the search's calls (THREAD_SEARCH_CALLS); past
 * them the search answers 422. The page holds at most `maxBytes` of thread data (always at least one
 * thread) and at most a plan's number of threads whose state is read from the thread itself; a
 * shorter page is an ordinary page: X-Pagination-Next names the offset of the first thread left out.
 */
export async function searchThreadIndex(
  env: WorkspaceBindings & PlanVars,
  workspaceId: string,
  search: ThreadSearch,
  { maxBytes = MAX_THREAD_SEARCH_PAGE_BYTES, keysPerCall = THREAD_SEARCH_KEYS_PER_CALL } = {},
): Promise<{ rows: ThreadIndexRow[]; total: number }> {
  const calls = THREAD_SEARCH_CALLS[onFreePlan(env) ? "free" : "paid"];
  const column = SORT_COLUMNS[search.sortBy];
  const descending = search.sortOrder === "desc";
  const order = descending ? desc : asc;
  const need = search.offset + search.limit;
  const keysQuery = (shard: number, filter: ThreadFilter, after: SearchKey | null, limit: number) => {
    const keyset = after
      ? descending
        ? sql`(${column}, ${threadIndex.threadId}) < (${after.sort}, ${after.threadId})`
        : sql`(${column}, ${threadIndex.threadId}) > (${after.sort}, ${after.threadId})`
      : undefined;
    return shardDatabase(env, workspaceId, shard)
      .select({
        sort: column,
        threadId: threadIndex.threadId,
        bytes: rowBytes,
        indexed: threadIndex.valuesIndexed,
      })
      .from(threadIndex)
      .where(and(whereClause(filter), keyset))
      .orderBy(order(column), order(threadIndex.threadId))
      .limit(limit);
  };
  const keysOf = (shard: number, rows: Omit<SearchKey, "shard">[]): SearchKey[] =>
    rows.map((row) => ({ ...row, bytes: Number(row.bytes), indexed: Boolean(row.indexed), shard }));

  // First call to each shard: its count and its first chunk of keys, in one batch.
  const chunk = Math.min(need, keysPerCall);
  const firsts = await Promise.all(
    [...shardsOf(search)].map(async ([shard, filter]): Promise<{ cursor: ShardCursor; total: number }> => {
      const db = shardDatabase(env, workspaceId, shard);
      const [keys, totals] = await db.batch([
        keysQuery(shard, filter, null, chunk),
        db.select({ total: count() }).from(threadIndex).where(whereClause(filter)),
      ]);
      const cursor = { shard, filter, keys: keysOf(shard, keys), at: 0, done: keys.length < chunk };
      return { cursor, total: totals[0]?.total ?? 0 };
    }),
  );
  const total = firsts.reduce((sum, first) => sum + first.total, 0);
  const cursors = firsts.map((first) => first.cursor);
  let keyCalls = cursors.length;

  const before = (a: SearchKey, b: SearchKey): boolean => {
    const compared = compareText(a.sort, b.sort) || compareText(a.threadId, b.threadId);
    return descending ? compared > 0 : compared < 0;
  };
  const page: SearchKey[] = [];
  let passed = 0;
  while (passed < need) {
    const empty = cursors.filter((cursor) => cursor.at === cursor.keys.length && !cursor.done);
    if (empty.length) {
      keyCalls += empty.length;
      if (keyCalls > calls.keys)
        throw invalid([
          {
            type: "value_error",
            loc: ["body", "offset"],
            msg: `offset too deep: a thread search reads at most ${calls.keys} chunks of ${keysPerCall} matches from the index's shards; narrow the search with a filter`,
          },
        ]);
      const want = Math.min(need - passed, keysPerCall);
      await Promise.all(
        empty.map(async (cursor) => {
          const rows = await keysQuery(cursor.shard, cursor.filter, cursor.keys[cursor.keys.length - 1] ?? null, want);
          cursor.keys = keysOf(cursor.shard, rows);
          cursor.at = 0;
          cursor.done = rows.length < want;
        }),
      );
    }
    let next: ShardCursor | null = null;
    for (const cursor of cursors) {
      const key = cursor.keys[cursor.at];
      if (key && (!next || before(key, next.keys[next.at] as SearchKey))) next = cursor;
    }
    if (!next) break;
    const key = next.keys[next.at] as SearchKey;
    next.at += 1;
    if (passed >= search.offset) page.push(key);
    passed += 1;
  }

  const kept: SearchKey[] = [];
  let bytes = 0;
  let stateReads = 0;
  for (const key of page) {
    bytes += key.bytes;
    if (!key.indexed) stateReads += 1;
    if (kept.length && (bytes > maxBytes || stateReads > calls.stateReads)) break;
    kept.push(key);
  }
  if (!kept.length) return { rows: [], total };
  const byShard = new Map<number, string[]>();
  for (const key of kept) byShard.set(key.shard, [...(byShard.get(key.shard) ?? []), key.threadId]);
  const rows = (
    await Promise.all(
      [...byShard].map(([shard, ids]) =>
        shardDatabase(env, workspaceId, shard).select().from(threadIndex).where(inJsonList(threadIndex.threadId, ids)),
      ),
    )
  ).flat();
  // In the page's order; a thread deleted between the two reads is left out.
  const byId = new Map(rows.map((row) => [row.threadId, row]));
  return { rows: kept.flatMap((key) => byId.get(key.threadId) ?? []), total };
}

/** How many of the workspace's threads match: the sum of the shards' counts. */
export async function countThreadIndex(
  env: WorkspaceBindings,
  workspaceId: string,
  filter: ThreadFilter,
): Promise<number> {
  const counts = await Promise.all(
    [...shardsOf(filter)].map(async ([shard, shardFilter]) => {
      const [row] = await shardDatabase(env, workspaceId, shard)
        .select({ total: count() })
        .from(threadIndex)
        .where(whereClause(shardFilter));
      return row?.total ?? 0;
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

/**
 * The ids among `threadIds` that exist in the workspace (and whose metadata contains `metadata`):
 * one statement per shard holding any of them, whatever their number (one JSON parameter).
 */
export async function existingThreadIds(
  env: WorkspaceBindings,
  workspaceId: string,
  threadIds: string[],
  metadata?: Record<string, unknown>,
): Promise<string[]> {
  if (!threadIds.length) return [];
  const found = await Promise.all(
    [...shardsOf({ ids: threadIds, metadata })].map(([shard, filter]) =>
      shardDatabase(env, workspaceId, shard)
        .select({ threadId: threadIndex.threadId })
        .from(threadIndex)
        .where(whereClause(filter)),
    ),
  );
  const exists = new Set(found.flat().map((row) => row.threadId));
  return threadIds.filter((id) => exists.has(id));
}

/** A thread's place in (created_at, thread_id) order: the cursor of a fan-out over threads. */
export interface ThreadKey {
  createdAt: string;
  threadId: string;
}

/**
 * Up to `limit` matching threads after `after`, in (created_at, thread_id) order: a keyset page,
 * stable while the fan-out changes the threads it has passed (cancelled, deleted). Each shard
 * answers its first `limit` after the cursor (one call each, in parallel); the merge keeps the first
 * `limit` of all.
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
  const found = await Promise.all(
    [...shardsOf(filter)].map(([shard, shardFilter]) =>
      shardDatabase(env, workspaceId, shard)
        .select({ createdAt: threadIndex.createdAt, threadId: threadIndex.threadId })
        .from(threadIndex)
        .where(and(whereClause(shardFilter), keyset))
        .orderBy(asc(threadIndex.createdAt), asc(threadIndex.threadId))
        .limit(limit),
    ),
  );
  return found
    .flat()
    .sort((a, b) => compareText(a.createdAt, b.createdAt) || compareText(a.threadId, b.threadId))
    .slice(0, limit);
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
