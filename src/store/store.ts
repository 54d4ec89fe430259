import { and, asc, eq, gt, isNotNull, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { AuthFilter } from "../core/auth-filter.ts";
import { invalid } from "../core/errors.ts";
import {
  MAX_NAMESPACE_LABEL_LENGTH,
  MAX_NAMESPACE_LABELS,
  MAX_PARTITION_RESULT_BYTES,
  STORE_SWEEP_PER_ALARM,
} from "../core/limits.ts";
import { containments } from "../db/json-filter.ts";
import { type StoreItemRow, storeItems } from "../db/schema.ts";
import {
  rankInPartition,
  type WorkspaceBindings,
  type WorkspaceDatabase,
  workspaceDatabase,
} from "../workspace/database.ts";
import { RANKED_IDS } from "../workspace/ranked-scan.ts";
import { isPartitionResultTooLarge } from "../workspace/sql.ts";
import type { PartitionAlarm } from "../workspace/workspace-do.ts";
import type { ScoredItem, StoreItem } from "./schemas.ts";
import { type ItemVector, replaceItemVectors, storeVectors } from "./vectors.ts";

/**
 * Store items, for the API and for graphs (through `WorkspaceStore`). A workspace's items live in its
 * `store` partition (a Durable Object of its own): every call is one RPC to it, and no other
 * workspace's load reaches that object. Items with a TTL are deleted by the partition's alarm.
 */

/** The workspace's store partition; `armAt` makes its alarm fire no later than then, in the same call. */
const storeDatabase = (env: WorkspaceBindings, workspaceId: string, armAt?: number): WorkspaceDatabase =>
  workspaceDatabase(env, { workspaceId, kind: "store" }, { armAt });

/** Why a namespace is unusable, or null: labels are non-empty and period-free, within the size limits. */
export function namespaceProblem(namespace: string[], allowEmpty = false): string | null {
  if (namespace.length === 0 && !allowEmpty) return "Namespace is required";
  if (namespace.length > MAX_NAMESPACE_LABELS)
    return `Namespaces hold at most ${MAX_NAMESPACE_LABELS} labels; this one has ${namespace.length}`;
  if (namespace.some((label) => label.length > MAX_NAMESPACE_LABEL_LENGTH))
    return `Namespace labels are at most ${MAX_NAMESPACE_LABEL_LENGTH} characters`;
  if (namespace.some((label) => label === "" || label.includes("."))) {
    return `Namespace labels cannot be empty or contain periods. Received: ${namespace.join(".")}`;
  }
  return null;
}

const joined = (namespace: string[]) => namespace.join(".");
const live = (now: string) => or(isNull(storeItems.expiresAt), gt(storeItems.expiresAt, now));
const expiry = (ttlMinutes: number | null, from: number) =>
  ttlMinutes ? new Date(from + ttlMinutes * 60_000).toISOString() : null;

/**
 * Namespaces equal to `prefix` or below it. A range, not LIKE: D1 caps LIKE patterns at 50 bytes,
 * and every namespace below "a.b" sorts between "a.b." and "a.b/" ("/" follows "." in byte order).
 */
function underPrefix(prefix: string[]): SQL | undefined {
  if (prefix.length === 0) return undefined;
  const exact = joined(prefix);
  return or(
    eq(storeItems.namespace, exact),
    and(gt(storeItems.namespace, `${exact}.`), lt(storeItems.namespace, `${exact}/`)),
  );
}

export function itemJson(row: StoreItemRow): StoreItem {
  return {
    namespace: row.namespace.split("."),
    key: row.key,
    value: row.value,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** An item to store. */
export interface NewItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  ttlMinutes: number | null;
  /** With a semantic index: the item's vectors, which replace the ones it had (none: not indexed). */
  vectors?: ItemVector[];
}

/**
 * Creates or replaces an item, with its vectors when the store has an index, in one transaction; one
 * with a TTL arms the partition's alarm at its expiry, in the same call.
 */
export async function putItem(env: WorkspaceBindings, workspaceId: string, item: NewItem): Promise<void> {
  const now = Date.now();
  const at = new Date(now).toISOString();
  const expiresAt = expiry(item.ttlMinutes, now);
  const row = {
    workspaceId,
    namespace: joined(item.namespace),
    key: item.key,
    value: item.value,
    createdAt: at,
    updatedAt: at,
    ttlMinutes: item.ttlMinutes,
    expiresAt,
  };
  const db = storeDatabase(env, workspaceId, expiresAt ? Date.parse(expiresAt) : undefined);
  const upsert = db
    .insert(storeItems)
    .values(row)
    .onConflictDoUpdate({
      target: [storeItems.workspaceId, storeItems.namespace, storeItems.key],
      set: { value: row.value, updatedAt: at, ttlMinutes: row.ttlMinutes, expiresAt: row.expiresAt },
    });
  if (!item.vectors) return void (await upsert.run());
  await db.batch([upsert, ...replaceItemVectors(db, row.namespace, row.key, item.vectors)]);
}

export async function deleteItem(
  env: WorkspaceBindings,
  workspaceId: string,
  namespace: string[],
  key: string,
): Promise<void> {
  await storeDatabase(env, workspaceId)
    .delete(storeItems)
    .where(
      and(
        eq(storeItems.workspaceId, workspaceId),
        eq(storeItems.namespace, joined(namespace)),
        eq(storeItems.key, key),
      ),
    )
    .run();
}

/**
 * The expiry a read gives an item with a TTL (`refresh_ttl`): `now` plus its TTL, in the same
 * ISO-8601 form as `expiry`. Computed in SQL, so the read and the refresh are one statement batch.
 */
const refreshedExpiry = (now: number) =>
  sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', (${now} + ${storeItems.ttlMinutes} * 60000) / 1000.0, 'unixepoch')`;

export async function getItem(
  env: WorkspaceBindings,
  workspaceId: string,
  namespace: string[],
  key: string,
  refreshTtl = true,
): Promise<StoreItem | null> {
  const db = storeDatabase(env, workspaceId);
  const now = Date.now();
  const where = and(
    eq(storeItems.workspaceId, workspaceId),
    eq(storeItems.namespace, joined(namespace)),
    eq(storeItems.key, key),
    live(new Date(now).toISOString()),
  );
  const read = db.select().from(storeItems).where(where);
  if (!refreshTtl) {
    const row = await read.get();
    return row ? itemJson(row) : null;
  }
  // Read, then push the expiry of the item if it has a TTL: one call, atomically.
  const [rows] = await db.batch([
    read,
    db
      .update(storeItems)
      .set({ expiresAt: refreshedExpiry(now) })
      .where(and(where, isNotNull(storeItems.ttlMinutes))),
  ]);
  return rows[0] ? itemJson(rows[0]) : null;
}

export interface ItemSearch {
  namespacePrefix: string[];
  filter?: Record<string, unknown>;
  query?: string;
  limit: number;
  offset: number;
  refreshTtl?: boolean;
}

/**
 * Items under a namespace prefix. `filter` is containment on the value. `query` matches the value's
 * text case-insensitively: no embedding model is configured, so there is no semantic ranking.
 */
export async function searchItems(
  env: WorkspaceBindings,
  workspaceId: string,
  search: ItemSearch,
): Promise<StoreItem[]> {
  const db = storeDatabase(env, workspaceId);
  const now = Date.now();
  const conditions: (SQL | undefined)[] = [
    eq(storeItems.workspaceId, workspaceId),
    underPrefix(search.namespacePrefix),
    live(new Date(now).toISOString()),
  ];
  conditions.push(...containments([storeItems.value, search.filter]));
  if (search.query) conditions.push(sql`instr(lower(${storeItems.value}), ${search.query.toLowerCase()}) > 0`);
  const where = and(...conditions);
  const order = [asc(storeItems.namespace), asc(storeItems.key)] as const;
  const page = db
    .select()
    .from(storeItems)
    .where(where)
    .orderBy(...order)
    .limit(search.limit)
    .offset(search.offset);
  const tooLarge = `limit: the page's items hold more than ${MAX_PARTITION_RESULT_BYTES} bytes of values; ask for fewer items`;
  if (!search.refreshTtl) return (await bounded(page.all(), tooLarge)).map(itemJson);
  // The page, then the expiry of its items that have a TTL pushed: one call, atomically.
  const pageRows = db
    .select({ rowid: sql`rowid` })
    .from(storeItems)
    .where(where)
    .orderBy(...order)
    .limit(search.limit)
    .offset(search.offset);
  const [rows] = await bounded(
    db.batch([
      page,
      db
        .update(storeItems)
        .set({ expiresAt: refreshedExpiry(now) })
        .where(and(isNotNull(storeItems.ttlMinutes), sql`rowid IN ${pageRows}`)),
    ]),
    tooLarge,
  );
  return rows.map(itemJson);
}

/**
 * The item's namespace as a JSON array, computed in SQL: labels hold no period, and `json_quote`
 * escapes none into one, so splitting its quoted text at periods gives each label quoted.
 */
const namespaceArray = sql`json('[' || replace(json_quote(${storeItems.namespace}), '.', '","') || ']')`;

export interface SimilaritySearch extends Omit<ItemSearch, "query"> {
  /** The query's vector (see semantic/embed.ts `embedQuery`). */
  vector: number[];
  /** An authorization handler's filter, tested against each item's value, namespace and key. */
  authFilter?: AuthFilter;
}

/**
 * Items under a namespace prefix that pass `filter` (and the handler's filter), ranked by their best
 * vector's similarity to the query, then the page: scored where the vectors are stored, in one call.
 * Items without vectors follow the scored ones, without a score, as LangGraph's stores answer them.
 */
export async function searchItemsBySimilarity(
  env: WorkspaceBindings,
  workspaceId: string,
  search: SimilaritySearch,
): Promise<ScoredItem[]> {
  const db = storeDatabase(env, workspaceId);
  const now = Date.now();
  const where = and(
    eq(storeItems.workspaceId, workspaceId),
    underPrefix(search.namespacePrefix),
    live(new Date(now).toISOString()),
    ...containments([storeItems.value, search.filter]),
  );
  const candidates = db
    .select({
      id: sql`${storeItems}.rowid`,
      vector: storeVectors.vector,
      magnitude: storeVectors.magnitude,
      ...(search.authFilter && {
        metadata: sql`json_set(${storeItems.value}, '$.namespace', ${namespaceArray}, '$.key', ${storeItems.key})`,
      }),
    })
    .from(storeItems)
    .leftJoin(storeVectors, and(eq(storeVectors.namespace, storeItems.namespace), eq(storeVectors.key, storeItems.key)))
    .where(where)
    .orderBy(asc(storeItems.namespace), asc(storeItems.key))
    .toSQL();
  const inPage = sql`${storeItems}.rowid IN (SELECT value FROM json_each(${RANKED_IDS}))`;
  // Columns in this order: the rows come back as arrays (see `scoredItem`).
  const rows = db
    .select({
      id: sql`${storeItems}.rowid`,
      namespace: storeItems.namespace,
      key: storeItems.key,
      value: storeItems.value,
      createdAt: storeItems.createdAt,
      updatedAt: storeItems.updatedAt,
    })
    .from(storeItems)
    .where(inPage)
    .toSQL();
  const refresh = db
    .update(storeItems)
    .set({ expiresAt: refreshedExpiry(now) })
    .where(and(inPage, isNotNull(storeItems.ttlMinutes)))
    .toSQL();
  const page = await bounded(
    rankInPartition(
      env,
      { workspaceId, kind: "store" },
      {
        candidates: { ...candidates, method: "all" },
        query: search.vector,
        offset: search.offset,
        limit: search.limit,
        filter: search.authFilter,
        pageStatements: [
          { ...rows, method: "all" },
          ...(search.refreshTtl ? [{ ...refresh, method: "run" as const }] : []),
        ],
      },
    ),
    `limit: the page's items hold more than ${MAX_PARTITION_RESULT_BYTES} bytes of values; ask for fewer items`,
  );
  const byId = new Map(((page.results[0]?.rows ?? []) as unknown[][]).map((row) => [row[0], row]));
  return page.ranked.flatMap(({ id, score }) => {
    const row = byId.get(id);
    if (!row) return [];
    const [, namespace, key, value, createdAt, updatedAt] = row as [number, string, string, string, string, string];
    const item = itemJson({
      workspaceId,
      namespace,
      key,
      value: JSON.parse(value),
      createdAt,
      updatedAt,
      ttlMinutes: null,
      expiresAt: null,
    });
    return [score === null ? item : { ...item, score }];
  });
}

/** A query whose answer would pass MAX_PARTITION_RESULT_BYTES, answered as a 422 saying what to narrow. */
async function bounded<T>(query: Promise<T>, narrow: string): Promise<T> {
  try {
    return await query;
  } catch (error) {
    if (isPartitionResultTooLarge(error)) throw invalid(narrow);
    throw error;
  }
}

/** Distinct namespaces scanned at most, before prefix/suffix/depth are applied in code. */
const MAX_NAMESPACES_SCANNED = 10_000;

export interface NamespaceListing {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
}

export async function listNamespaces(
  env: WorkspaceBindings,
  workspaceId: string,
  options: NamespaceListing,
): Promise<string[][]> {
  const rows = await bounded(
    storeDatabase(env, workspaceId)
      .selectDistinct({ namespace: storeItems.namespace })
      .from(storeItems)
      .where(
        and(eq(storeItems.workspaceId, workspaceId), underPrefix(options.prefix ?? []), live(new Date().toISOString())),
      )
      .orderBy(asc(storeItems.namespace))
      .limit(MAX_NAMESPACES_SCANNED)
      .all(),
    `prefix: the namespaces under it pass ${MAX_PARTITION_RESULT_BYTES} bytes; name a longer prefix`,
  );
  return shapeNamespaces(
    rows.map((row) => row.namespace.split(".")),
    options,
  );
}

/**
 * The listing of `namespaces` (sorted, under the prefix): those ending with `suffix`, cut to
 * `maxDepth`, each once, then the page.
 */
export function shapeNamespaces(namespaces: string[][], options: NamespaceListing): string[][] {
  const suffix = options.suffix ?? [];
  const seen = new Set<string>();
  const shaped: string[][] = [];
  for (let labels of namespaces) {
    if (suffix.length && labels.slice(-suffix.length).join(".") !== suffix.join(".")) continue;
    if (options.maxDepth !== undefined) labels = labels.slice(0, options.maxDepth);
    const id = labels.join(".");
    if (seen.has(id)) continue;
    seen.add(id);
    shaped.push(labels);
  }
  return shaped.slice(options.offset, options.offset + options.limit);
}

/**
 * Deletes expired items, at most STORE_SWEEP_PER_ALARM of them; answers when the sweep should run
 * again: at once if that many went (more may be waiting), else at the next item's expiry, or never.
 */
export async function sweepExpiredItems(db: WorkspaceDatabase, now: number): Promise<number | null> {
  const expired = db
    .select({ rowid: sql`rowid` })
    .from(storeItems)
    .where(lte(storeItems.expiresAt, new Date(now).toISOString()))
    .limit(STORE_SWEEP_PER_ALARM);
  const deleted = await db.delete(storeItems).where(sql`rowid IN ${expired}`).returning({ key: storeItems.key });
  if (deleted.length === STORE_SWEEP_PER_ALARM) return Date.now();
  const next = await db
    .select({ at: storeItems.expiresAt })
    .from(storeItems)
    .where(isNotNull(storeItems.expiresAt))
    .orderBy(asc(storeItems.expiresAt))
    .limit(1)
    .get();
  return next?.at ? Date.parse(next.at) : null;
}

/** The store partition's alarm: the TTL sweep. */
export const storeAlarm: PartitionAlarm = (_env, _partition, db) => sweepExpiredItems(db, Date.now());
