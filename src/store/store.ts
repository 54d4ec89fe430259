import { and, asc, eq, gt, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import { MAX_NAMESPACE_LABEL_LENGTH, MAX_NAMESPACE_LABELS } from "../core/limits.ts";
import type { Database } from "../db/client.ts";
import { containments } from "../db/json-filter.ts";
import { type StoreItemRow, storeItems } from "../db/schema.ts";
import type { StoreItem } from "./schemas.ts";

/** Store items in D1, for the API and for graphs (through `D1Store`). Every call is per workspace. */

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

export async function putItem(
  db: Database,
  workspaceId: string,
  item: { namespace: string[]; key: string; value: Record<string, unknown>; ttlMinutes: number | null },
): Promise<void> {
  const now = Date.now();
  const at = new Date(now).toISOString();
  const row = {
    workspaceId,
    namespace: joined(item.namespace),
    key: item.key,
    value: item.value,
    createdAt: at,
    updatedAt: at,
    ttlMinutes: item.ttlMinutes,
    expiresAt: expiry(item.ttlMinutes, now),
  };
  await db
    .insert(storeItems)
    .values(row)
    .onConflictDoUpdate({
      target: [storeItems.workspaceId, storeItems.namespace, storeItems.key],
      set: { value: row.value, updatedAt: at, ttlMinutes: row.ttlMinutes, expiresAt: row.expiresAt },
    })
    .run();
}

export async function deleteItem(db: Database, workspaceId: string, namespace: string[], key: string): Promise<void> {
  await db
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

/** Pushes the expiry of items that have a TTL (`refresh_ttl`). */
async function refresh(db: Database, workspaceId: string, rows: StoreItemRow[]): Promise<void> {
  const now = Date.now();
  const withTtl = rows.filter((row) => row.ttlMinutes);
  if (withTtl.length === 0) return;
  await db.batch(
    withTtl.map((row) =>
      db
        .update(storeItems)
        .set({ expiresAt: expiry(row.ttlMinutes, now) })
        .where(
          and(
            eq(storeItems.workspaceId, workspaceId),
            eq(storeItems.namespace, row.namespace),
            eq(storeItems.key, row.key),
          ),
        ),
    ) as unknown as Parameters<typeof db.batch>[0],
  );
}

export async function getItem(
  db: Database,
  workspaceId: string,
  namespace: string[],
  key: string,
  refreshTtl = true,
): Promise<StoreItem | null> {
  const row = await db
    .select()
    .from(storeItems)
    .where(
      and(
        eq(storeItems.workspaceId, workspaceId),
        eq(storeItems.namespace, joined(namespace)),
        eq(storeItems.key, key),
        live(new Date().toISOString()),
      ),
    )
    .get();
  if (!row) return null;
  if (refreshTtl) await refresh(db, workspaceId, [row]);
  return itemJson(row);
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
export async function searchItems(db: Database, workspaceId: string, search: ItemSearch): Promise<StoreItem[]> {
  const conditions: (SQL | undefined)[] = [
    eq(storeItems.workspaceId, workspaceId),
    underPrefix(search.namespacePrefix),
    live(new Date().toISOString()),
  ];
  conditions.push(...containments([storeItems.value, search.filter]));
  if (search.query) conditions.push(sql`instr(lower(${storeItems.value}), ${search.query.toLowerCase()}) > 0`);
  const rows = await db
    .select()
    .from(storeItems)
    .where(and(...conditions))
    .orderBy(asc(storeItems.namespace), asc(storeItems.key))
    .limit(search.limit)
    .offset(search.offset)
    .all();
  if (search.refreshTtl) await refresh(db, workspaceId, rows);
  return rows.map(itemJson);
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
  db: Database,
  workspaceId: string,
  options: NamespaceListing,
): Promise<string[][]> {
  const rows = await db
    .selectDistinct({ namespace: storeItems.namespace })
    .from(storeItems)
    .where(
      and(eq(storeItems.workspaceId, workspaceId), underPrefix(options.prefix ?? []), live(new Date().toISOString())),
    )
    .orderBy(asc(storeItems.namespace))
    .limit(MAX_NAMESPACES_SCANNED)
    .all();
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

/** Deletes expired items, a bounded batch at a time (the minute tick). Returns how many went. */
export async function sweepExpiredItems(db: Database, limit = 1000): Promise<number> {
  const now = new Date().toISOString();
  const expired = db.select({ rowid: sql`rowid` }).from(storeItems).where(lte(storeItems.expiresAt, now)).limit(limit);
  const deleted = await db.delete(storeItems).where(sql`rowid IN ${expired}`).returning({ key: storeItems.key });
  return deleted.length;
}
