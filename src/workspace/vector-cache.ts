import { VECTOR_CACHE_BYTES } from "../core/limits.ts";
import { sketchBytes, type VectorSketch } from "../core/vector-sketch.ts";

/**
 * The sketches (core/vector-sketch.ts) of a partition's stored vectors, kept in its object's memory
 * by vector id (the `store_vectors` rowid), so a search reads from SQLite only the vectors whose
 * sketch lets them reach the page. Reading every vector on every search costs most of a search.
 *
 * A sketch stays true as long as its row does: a vector row's content changes only by an insert
 * (store/vectors.ts `replaceItemVectors` deletes an item's vectors and inserts the new ones), and
 * SQLite may give a new row the id of a deleted one. So every insert into the table answers the ids
 * it wrote and the object forgets those (`written`); an insert that does not, or any update of the
 * table, empties the cache. A deleted row's sketch is never read again (the search reads ids from
 * the table) and goes when memory is wanted.
 */

/** The table whose rows are cached, and the writes into it that may change a row's content. */
const VECTOR_WRITE =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?)\s+"?store_vectors"?[\s(]/i;
/** An insert that answers the ids it wrote (first column). */
const ANSWERS_ROWIDS = /\breturning\s+"?rowid"?\s*$/i;

/** What the cache keeps of a vector: its sketch, and its item's id (a row's item never changes either). */
export interface CachedVector {
  sketch: VectorSketch;
  item: number;
}

interface Entry extends CachedVector {
  /** The search that last used it: entries no search has used since are the first to go. */
  used: number;
}

/** The isolate's caches, least recently searched first (a Set keeps insertion order): they share VECTOR_CACHE_BYTES. */
const caches = new Set<VectorCache>();
let isolateBytes = 0;

export class VectorCache {
  readonly #entries = new Map<number, Entry>();
  #bytes = 0;
  #search = 0;
  /** Whether this search already dropped the entries earlier searches left unused. */
  #pruned = false;

  /** Starts a search: this cache becomes the isolate's most recently used. */
  beginSearch(): void {
    this.#search += 1;
    this.#pruned = false;
    caches.delete(this);
    caches.add(this);
  }

  get(id: number): CachedVector | undefined {
    const entry = this.#entries.get(id);
    if (entry) entry.used = this.#search;
    return entry;
  }

  /**
   * Keeps a sketch if the isolate's budget allows it: past the budget, the least recently searched
   * other caches are emptied, then this one's entries that the current search has not used; if it still
   * does not fit, it is not kept (the search scores that vector exactly, from its row, every time).
   */
  set(id: number, vector: CachedVector): void {
    const bytes = sketchBytes(vector.sketch);
    this.#drop(id);
    if (isolateBytes + bytes > VECTOR_CACHE_BYTES) this.#makeRoom(bytes);
    if (isolateBytes + bytes > VECTOR_CACHE_BYTES) return;
    this.#entries.set(id, { ...vector, used: this.#search });
    this.#bytes += bytes;
    isolateBytes += bytes;
  }

  /** Learns from a statement run on the partition (its SQL, and every row it answered) what it rewrote. */
  written(sql: string, rows: readonly unknown[][]): void {
    if (!VECTOR_WRITE.test(sql)) return;
    if (/^\s*insert/i.test(sql) && ANSWERS_ROWIDS.test(sql)) for (const row of rows) this.#drop(Number(row[0]));
    else this.clear();
  }

  clear(): void {
    isolateBytes -= this.#bytes;
    this.#bytes = 0;
    this.#entries.clear();
  }

  /** Sketches held, for tests. */
  get size(): number {
    return this.#entries.size;
  }

  #drop(id: number): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    const bytes = sketchBytes(entry.sketch);
    this.#bytes -= bytes;
    isolateBytes -= bytes;
  }

  #makeRoom(bytes: number): void {
    for (const other of caches) {
      if (isolateBytes + bytes <= VECTOR_CACHE_BYTES) return;
      if (other !== this) {
        other.clear();
        caches.delete(other);
      }
    }
    if (isolateBytes + bytes <= VECTOR_CACHE_BYTES || this.#pruned) return;
    this.#pruned = true;
    for (const [id, entry] of this.#entries) if (entry.used !== this.#search) this.#drop(id);
  }
}
