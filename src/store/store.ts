import { and, asc, eq, gt, gte, isNotNull, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { AuthFilter } from "../core/auth-filter.ts";
import { invalid } from "../core/errors.ts";
import {
  MAX_NAMESPACE_LABEL_LENGTH,
  MAX_NAMESPACE_LABELS,
  MAX_PARTITION_RESULT_BYTES,
  MAX_SCAN_VECTORS,
  STORE_SWEEP_PER_ALARM,
  VECTORIZE_MAX_TOP_K,
  VECTORIZE_SWEEP_IDS,
} from "../core/limits.ts";
import { containments } from "../db/json-filter.ts";
import { type StoreItemRow, storeItems } from "../db/schema.ts";
import {
  rankInPartition,
  type WorkspaceBindings,
  type WorkspaceDatabase,
  workspaceDatabase,
} from "../workspace/database.ts";
import { RANKED_IDS, type RankedScan, VECTOR_IDS } from "../workspace/ranked-scan.ts";
import { isPartitionResultTooLarge } from "../workspace/sql.ts";
import type { PartitionAlarm } from "../workspace/workspace-do.ts";
import type { ScoredItem, StoreItem } from "./schemas.ts";
import {
  forgetVectors,
  nearestVectorIds,
  type StoreVectorIndex,
  storeVectorIndex,
  syncItemVectors,
  type VectorizeBindings,
  vectorId,
} from "./vectorize.ts";
import { type ItemVector, replaceItemVectors, storeVectors } from "./vectors.ts";

/**
 * Store items, for the API and for graphs (through `WorkspaceStore`). A workspace's items live in its
 * `store` partition (a Durable Object of its own): every call is one RPC to it, and no other
 * workspace's load reaches that object. Items with a TTL are deleted by the partition's alarm.
 */

/** What the store reaches: the workspace partitions, and a Vectorize index when the Worker has one. */
export type StoreBindings = WorkspaceBindings & VectorizeBindings;

/** The workspace's store partition; `armAt` makes its alarm fire no later than then, in the same call. */
const storeDatabase = (env: StoreBindings, workspaceId: string, armAt?: number): WorkspaceDatabase =>
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
 * Items not expired, told from the expiry index (items with a TTL only, few of them expired at once):
 * a scan of many items reads none of their rows for it, as `live` must.
 */
const unexpired = (now: string) =>
  sql`${storeItems}.rowid NOT IN (SELECT rowid FROM ${storeItems} AS expired WHERE expired.expires_at <= ${now})`;

/**
 * Namespaces equal to `prefix` or below it. A range, not LIKE: D1 caps LIKE patterns at 50 bytes,
 * and every namespace below "a.b" sorts between "a.b." and "a.b/" ("/" follows "." in byte order).
 * The range [a.b, a.b/) comes first, on its own, so SQLite reads only it from the key's index; the
 * condition after it leaves out its siblings ("a.b-c", "a.b!") that sort inside it.
 */
function underPrefix(prefix: string[], namespace: AnySQLiteColumn = storeItems.namespace): SQL | undefined {
  if (prefix.length === 0) return undefined;
  const exact = joined(prefix);
  return and(gte(namespace, exact), lt(namespace, `${exact}/`), or(eq(namespace, exact), gt(namespace, `${exact}.`)));
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
 * with a TTL arms the partition's alarm at its expiry, in the same call. With a Vectorize index, its
 * vectors then go there too, and the ids of the ones it no longer has are deleted there (vectorize.ts).
 */
export async function putItem(env: StoreBindings, workspaceId: string, item: NewItem): Promise<void> {
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
  const index = storeVectorIndex(env);
  const vectors = index
    ? await Promise.all(
        item.vectors.map(async (v) => ({
          ...v,
          vectorizeId: await vectorId(workspaceId, row.namespace, row.key, v.field),
        })),
      )
    : item.vectors;
  const [, replaced] = await db.batch([upsert, ...replaceItemVectors(db, row.namespace, row.key, vectors)]);
  if (!index) return;
  await syncItemVectors(
    index,
    { workspaceId, namespace: item.namespace, vectors: vectors as Required<ItemVector>[] },
    vectorizeIds(replaced),
  );
}

/** The Vectorize ids among rows of `store_vectors` a statement answered (null: put without the binding). */
const vectorizeIds = (rows: unknown): string[] =>
  (rows as { vectorizeId: string | null }[]).flatMap((row) => (row.vectorizeId ? [row.vectorizeId] : []));

/** Deletes an item (its vectors go with it); with a Vectorize index, their ids are deleted there too. */
export async function deleteItem(
  env: StoreBindings,
  workspaceId: string,
  namespace: string[],
  key: string,
): Promise<void> {
  const db = storeDatabase(env, workspaceId);
  const remove = db
    .delete(storeItems)
    .where(
      and(
        eq(storeItems.workspaceId, workspaceId),
        eq(storeItems.namespace, joined(namespace)),
        eq(storeItems.key, key),
      ),
    );
  const index = storeVectorIndex(env);
  if (!index) return void (await remove.run());
  // The vectors first, answering their ids (the trigger would delete them silently), in the same call.
  const [vectors] = await db.batch([
    db
      .delete(storeVectors)
      .where(
        and(
          eq(storeVectors.namespace, joined(namespace)),
          eq(storeVectors.key, key),
          isNotNull(storeVectors.vectorizeId),
        ),
      )
      .returning({ vectorizeId: storeVectors.vectorizeId }),
    remove,
  ]);
  await forgetVectors(index, workspaceId, vectorizeIds(vectors));
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
  /** Rows scored exactly at most (MAX_SCAN_VECTORS; tests lower it). */
  maxScanVectors?: number;
}

/**
 * Items under a namespace prefix that pass `filter` (and the handler's filter), ranked by their best
 * vector's similarity to the query, then the page: scored where the vectors are stored, in one call.
 * Items without vectors follow the scored ones, without a score, as LangGraph's stores answer them.
 *
 * A scope of more than MAX_SCAN_VECTORS rows is not scanned: with a Vectorize index, its nearest
 * VECTORIZE_MAX_TOP_K vectors give the candidates, which the partition then filters and scores
 * exactly as the scan does (so scores are the scan's; only which items are candidates is approximate,
 * and items without vectors are not among them); without one, the search is refused (422).
 */
export async function searchItemsBySimilarity(
  env: StoreBindings,
  workspaceId: string,
  search: SimilaritySearch,
): Promise<ScoredItem[]> {
  const db = storeDatabase(env, workspaceId);
  const now = Date.now();
  const at = new Date(now).toISOString();
  const filters = containments([storeItems.value, search.filter]);
  const where = and(
    eq(storeItems.workspaceId, workspaceId),
    underPrefix(search.namespacePrefix),
    unexpired(at),
    ...filters,
  );
  // Without the vectors (a key's index holds the vector's id): the partition's object scores them from
  // its sketches and reads only those that may reach the page (workspace/ranked-scan.ts).
  const itsVectors = and(eq(storeVectors.namespace, storeItems.namespace), eq(storeVectors.key, storeItems.key));
  const candidates = (among?: SQL) =>
    db
      .select({
        id: sql`${storeItems}.rowid`,
        vectorId: sql`${storeVectors}.rowid`,
        // Built on the item's first row only (its first field, or no vector): a value of a megabyte with a
        // thousand vectors is made into JSON once, not a thousand times.
        ...(search.authFilter && {
          metadata: sql`CASE WHEN ${storeVectors.field} IS NULL OR ${storeVectors.field} = (SELECT min(field) FROM ${storeVectors} AS first WHERE first.namespace = ${storeItems.namespace} AND first.key = ${storeItems.key}) THEN json_set(${storeItems.value}, '$.namespace', ${namespaceArray}, '$.key', ${storeItems.key}) END`,
        }),
      })
      .from(storeItems)
      .leftJoin(storeVectors, itsVectors)
      .where(and(where, among))
      .orderBy(asc(storeItems.namespace), asc(storeItems.key), asc(storeVectors.field))
      .toSQL();
  // The item's id from a subquery, not a join: a join lets SQLite scan the items and look up vectors.
  const vectors = db
    .select({
      id: sql`${storeVectors}.rowid`,
      vector: storeVectors.vector,
      magnitude: storeVectors.magnitude,
      // Spelled out: drizzle leaves a lone table's columns unqualified, which the subquery would take for its own.
      item: sql`(SELECT rowid FROM store_items AS item WHERE item.workspace_id = ${workspaceId} AND item.namespace = store_vectors.namespace AND item.key = store_vectors.key)`,
    })
    .from(storeVectors)
    .where(sql`${storeVectors}.rowid IN (SELECT value FROM json_each(${VECTOR_IDS}))`)
    .toSQL();
  const maxScan = search.maxScanVectors ?? MAX_SCAN_VECTORS;
  // Without a filter, the scope is read from the vectors' key index alone (see RankedScan.vectorsInScope).
  const vectorsInScope = {
    vectors: db
      .select({ id: sql`rowid`.as("id") })
      .from(storeVectors)
      .where(underPrefix(search.namespacePrefix, storeVectors.namespace))
      .orderBy(asc(storeVectors.namespace), asc(storeVectors.key), asc(storeVectors.field))
      .limit(maxScan + 1)
      .toSQL(),
    // From the expiry index: items with a TTL only, and of those the expired that the sweep has not yet removed.
    expired: db
      .select({ id: sql`rowid` })
      .from(storeItems)
      .where(and(lte(storeItems.expiresAt, at), underPrefix(search.namespacePrefix)))
      .toSQL(),
  };
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
  // With Vectorize, the scope is counted first in the same call (keys only, from the vectors' primary-key
  // index: no vector is read), so one past the scan goes to Vectorize without a scan thrown away.
  // Without it the scan itself stops at the limit, and the search is refused.
  const count = db
    .select({ rows: sql<number>`count(*)` })
    .from(
      db
        .select({ one: sql`1` })
        .from(storeItems)
        .leftJoin(storeVectors, itsVectors)
        .where(where)
        .limit(maxScan + 1)
        .as("scope"),
    )
    .toSQL();
  const rank = (among: SQL | undefined, maxRows: number | undefined) =>
    bounded(
      rankInPartition(env, { workspaceId, kind: "store" }, {
        candidates: { ...candidates(among), method: "all" },
        vectors: { ...vectors, method: "all" },
        ...(!among &&
          !filters.length &&
          !search.authFilter && {
            vectorsInScope: {
              vectors: { ...vectorsInScope.vectors, method: "all" },
              expired: { ...vectorsInScope.expired, method: "all" },
            },
          }),
        query: search.vector,
        offset: search.offset,
        limit: search.limit,
        filter: search.authFilter,
        pageStatements: [
          { ...rows, method: "all" },
          ...(search.refreshTtl ? [{ ...refresh, method: "run" as const }] : []),
        ],
        maxRows,
        count: maxRows !== undefined && storeVectorIndex(env) ? { ...count, method: "all" } : undefined,
      } satisfies RankedScan),
      `limit: the page's items hold more than ${MAX_PARTITION_RESULT_BYTES} bytes of values; ask for fewer items`,
    );
  let page = await rank(undefined, maxScan);
  if (page.tooMany) {
    const ids = await nearestVectorIds(
      vectorIndexBeyond(env, maxScan, search),
      workspaceId,
      search.namespacePrefix,
      search.vector,
    );
    if (!ids.length) return [];
    // Vectorize's candidates, scored exactly: every vector of an item that has one among the matches.
    const matched = db
      .select({ namespace: storeVectors.namespace, key: storeVectors.key })
      .from(storeVectors)
      .where(sql`${storeVectors.vectorizeId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`);
    page = await rank(sql`(${storeItems.namespace}, ${storeItems.key}) IN ${matched}`, undefined);
  }
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

/**
 * The Vectorize index that answers a search whose scope passes the exact scan's `maxScan` rows; without
 * one, or for a page past its matches, the search is refused (422) saying what to narrow.
 */
function vectorIndexBeyond(
  env: StoreBindings,
  maxScan: number,
  page: { offset: number; limit: number },
): StoreVectorIndex {
  const index = storeVectorIndex(env);
  if (!index)
    throw invalid(
      `namespace_prefix: this search would score more than ${maxScan} vectors (MAX_SCAN_VECTORS), the most a search scores exactly; narrow namespace_prefix or filter, or give the Worker a Vectorize index (a STORE_VECTORIZE binding)`,
    );
  if (page.offset + page.limit > VECTORIZE_MAX_TOP_K)
    throw invalid(
      `offset: a search past ${maxScan} vectors is answered from Vectorize's ${VECTORIZE_MAX_TOP_K} nearest matches, so offset + limit is at most ${VECTORIZE_MAX_TOP_K}; narrow namespace_prefix or filter to search exactly`,
    );
  return index;
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
 * With a Vectorize index (`env`'s, for the partition's `workspaceId`), their vectors' ids go there too,
 * at most `maxIds` (VECTORIZE_SWEEP_IDS) a run: the items past that wait for the next run, at once.
 */
export async function sweepExpiredItems(
  db: WorkspaceDatabase,
  now: number,
  vectorize?: { env: VectorizeBindings; workspaceId: string; maxIds?: number },
): Promise<number | null> {
  const at = new Date(now).toISOString();
  const expired = db
    .select({ rowid: sql`rowid` })
    .from(storeItems)
    .where(lte(storeItems.expiresAt, at))
    .orderBy(asc(storeItems.expiresAt))
    .limit(STORE_SWEEP_PER_ALARM);
  const remove = db.delete(storeItems).where(sql`rowid IN ${expired}`).returning({ key: storeItems.key });
  const index = vectorize && storeVectorIndex(vectorize.env);
  let deleted: { key: string }[];
  if (!index) deleted = await remove;
  else {
    // The expired items, in expiry order, while their Vectorize ids add up to at most maxIds (one
    // item has at most MAX_VECTORS_PER_ITEM, fewer than that, so the first always fits).
    const capped = sql`SELECT rowid FROM (
      SELECT i.rowid AS rowid, SUM((SELECT COUNT(*) FROM store_vectors v
        WHERE v.namespace = i.namespace AND v.key = i.key AND v.vectorize_id IS NOT NULL))
        OVER (ORDER BY i.expires_at, i.rowid) AS ids
      FROM store_items i WHERE i.expires_at <= ${at} ORDER BY i.expires_at, i.rowid LIMIT ${STORE_SWEEP_PER_ALARM})
      WHERE ids <= ${vectorize.maxIds ?? VECTORIZE_SWEEP_IDS}`;
    const expiredItems = db
      .select({ namespace: storeItems.namespace, key: storeItems.key })
      .from(storeItems)
      .where(sql`rowid IN (${capped})`);
    // Their vectors first, answering their ids (the trigger would delete them silently); then the
    // expired items left with no Vectorize id (those, and any that never had one), in one transaction.
    const hasIds = db
      .select({ one: sql`1` })
      .from(storeVectors)
      .where(
        and(
          eq(storeVectors.namespace, storeItems.namespace),
          eq(storeVectors.key, storeItems.key),
          isNotNull(storeVectors.vectorizeId),
        ),
      );
    const [vectors, items] = await db.batch([
      db
        .delete(storeVectors)
        .where(
          and(
            isNotNull(storeVectors.vectorizeId),
            sql`(${storeVectors.namespace}, ${storeVectors.key}) IN ${expiredItems}`,
          ),
        )
        .returning({ vectorizeId: storeVectors.vectorizeId }),
      db
        .delete(storeItems)
        .where(and(sql`rowid IN ${expired}`, sql`NOT EXISTS ${hasIds}`))
        .returning({ key: storeItems.key }),
    ]);
    deleted = items;
    await forgetVectors(index, vectorize.workspaceId, vectorizeIds(vectors));
  }
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
export const storeAlarm: PartitionAlarm = (env, partition, db) =>
  sweepExpiredItems(db, Date.now(), { env: env as VectorizeBindings, workspaceId: partition.workspaceId });
