import { chunked } from "../core/batches.ts";
import { utf8Length } from "../core/bytes.ts";
import { shownDuration, withDeadline } from "../core/deadline.ts";
import { unavailable } from "../core/errors.ts";
import {
  VECTORIZE_CALL_TIMEOUT_MS,
  VECTORIZE_DELETE_BATCH,
  VECTORIZE_INDEXED_BYTES,
  VECTORIZE_MAX_TOP_K,
  VECTORIZE_UPSERT_BATCH,
} from "../core/limits.ts";
import { log } from "../observability/log.ts";

/**
 * The optional Vectorize backend of the store's semantic index, for search scopes past the exact
 * scan's MAX_SCAN_VECTORS. The store partition stays the source of truth (items and `store_vectors`);
 * Vectorize is an approximate index kept beside it, used only to pick a search's candidates, which
 * the partition then scores exactly (store.ts `searchItemsBySimilarity`). It is used only when the
 * Worker has a Vectorize binding named `STORE_VECTORIZE` (not in the default wrangler config).
 *
 * Each vector's id is the SHA-256 of `[workspace, namespace, key, field]` as JSON, in hex (64 bytes:
 * Vectorize's id limit), kept in `store_vectors.vectorize_id`; its metadata is `workspace` and `path`, both with a
 * metadata index (`$eq` on one, a range on the other). Writes reach Vectorize after the partition's
 * transaction, and a failure there is logged, never answered: the write is kept, the exact scan still
 * finds it, and a search past the scan's size misses (or finds by its old vectors) what Vectorize has
 * not got until the item is put again.
 */

/** What the store uses of a Vectorize binding (a stand-in implements it in the tests). */
export type StoreVectorIndex = Pick<Vectorize, "upsert" | "deleteByIds" | "query">;

/** The bindings the backend reads: the Vectorize index, when the Worker declares one. */
export interface VectorizeBindings {
  STORE_VECTORIZE?: StoreVectorIndex;
}

/** A Vectorize call within VECTORIZE_CALL_TIMEOUT_MS: a hung index fails it (logged, or a 503 for a query). */
const withinDeadline = <T>(call: string, run: () => Promise<T>): Promise<T> =>
  withDeadline(
    VECTORIZE_CALL_TIMEOUT_MS,
    () => new Error(`STORE_VECTORIZE ${call}: no answer within ${shownDuration(VECTORIZE_CALL_TIMEOUT_MS)}`),
    run,
  );

/** The Vectorize index of these bindings, or undefined. */
export const storeVectorIndex = (env: object): StoreVectorIndex | undefined =>
  (env as VectorizeBindings).STORE_VECTORIZE ?? undefined;

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * A vector's id in Vectorize: 64 hex characters, within its 64-byte id limit whatever the names'
 * length. The names are hashed as a JSON array, not joined: a key or label may hold any separator.
 */
export async function vectorId(workspaceId: string, namespace: string, key: string, field: string): Promise<string> {
  const text = JSON.stringify([workspaceId, namespace, key, field]);
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * The `path` metadata of a namespace: its leading labels, each followed by a period, as many as fit
 * in the VECTORIZE_INDEXED_BYTES Vectorize indexes of a string (whole labels, so what it cuts off
 * widens a range filter rather than breaking it: a namespace's path always starts with the path of
 * any prefix of it).
 */
export function indexedPath(namespace: string[]): string {
  let path = "";
  for (const label of namespace) {
    const next = `${path}${label}.`;
    if (utf8Length(next) > VECTORIZE_INDEXED_BYTES) break;
    path = next;
  }
  return path;
}

/**
 * The metadata filter of a search under `prefix` in a workspace: paths from "a.b." up to "a.b/"
 * ("/" follows "." in byte order and labels hold no period); no path condition for the empty prefix
 * (or one whose first label alone is past the indexed bytes). The partition applies the exact prefix.
 */
export function vectorizeFilter(workspaceId: string, prefix: string[]): VectorizeVectorMetadataFilter {
  const path = indexedPath(prefix);
  const filter: VectorizeVectorMetadataFilter = { workspace: { $eq: workspaceId } };
  if (path) filter.path = { $gte: path, $lt: `${path.slice(0, -1)}/` };
  return filter;
}

/** An item's vectors, with their Vectorize ids, as Vectorize takes them. */
export interface IndexedItem {
  workspaceId: string;
  namespace: string[];
  vectors: { vectorizeId: string; vector: Float32Array }[];
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Logged, not thrown: the partition already holds the write (see the module's comment). */
function failed(operation: string, workspaceId: string, error: unknown): void {
  log.error("Vectorize call failed; the store partition keeps the write", {
    operation,
    workspace: workspaceId,
    error: errorMessage(error),
  });
}

/**
 * After an item's write: upserts its vectors, then deletes the ids it had that it no longer has (a
 * field gone, or the item put with `index: false`), in calls of at most VECTORIZE_UPSERT_BATCH vectors
 * and VECTORIZE_DELETE_BATCH ids.
 */
export async function syncItemVectors(index: StoreVectorIndex, item: IndexedItem, oldIds: string[]): Promise<void> {
  const kept = new Set(item.vectors.map((v) => v.vectorizeId));
  const path = indexedPath(item.namespace);
  try {
    for (const batch of chunked(item.vectors, VECTORIZE_UPSERT_BATCH))
      await withinDeadline("upsert", () =>
        index.upsert(
          batch.map(({ vectorizeId, vector }) => ({
            id: vectorizeId,
            values: vector,
            metadata: { workspace: item.workspaceId, path },
          })),
        ),
      );
  } catch (error) {
    failed("upsert", item.workspaceId, error);
  }
  await forgetVectors(
    index,
    item.workspaceId,
    oldIds.filter((id) => !kept.has(id)),
  );
}

/** Deletes vectors from Vectorize by id (items deleted or expired, fields gone), in batches; failures are logged. */
export async function forgetVectors(index: StoreVectorIndex, workspaceId: string, ids: string[]): Promise<void> {
  for (const batch of chunked(ids, VECTORIZE_DELETE_BATCH)) {
    try {
      await withinDeadline("deleteByIds", () => index.deleteByIds(batch));
    } catch (error) {
      failed("deleteByIds", workspaceId, error);
    }
  }
}

/**
 * The ids of the VECTORIZE_MAX_TOP_K vectors Vectorize finds closest to `query` in the workspace under
 * `prefix`: candidates only (no metadata or values, so the most matches one query gives).
 */
export async function nearestVectorIds(
  index: StoreVectorIndex,
  workspaceId: string,
  prefix: string[],
  query: number[],
): Promise<string[]> {
  try {
    const { matches } = await withinDeadline("query", () =>
      index.query(query, {
        topK: VECTORIZE_MAX_TOP_K,
        filter: vectorizeFilter(workspaceId, prefix),
        returnMetadata: "none",
        returnValues: false,
      }),
    );
    return matches.map((match) => match.id);
  } catch (error) {
    // Vectorize's outage, not the caller's fault nor a bug here: a 503 saying so.
    throw unavailable(`The Vectorize index (STORE_VECTORIZE) failed to answer: ${errorMessage(error)}`);
  }
}
