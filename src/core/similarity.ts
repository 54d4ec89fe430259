/**
 * Ranking by cosine similarity, as LangGraph's `InMemoryStore` (`@langchain/langgraph-checkpoint`,
 * store/memory.js `scoreResults`, `cosineSimilarity`) does it: the same scores, order and pages. Here
 * (layer 1) because the workspace partition's object ranks a scan without knowing whose rows they are.
 */

/** An item that passed the search's namespace prefix and `filter`, with its stored vectors (none if not indexed). */
export interface Candidate<T> {
  item: T;
  vectors: readonly ArrayLike<number>[];
}

/** An item of a page: its best vector's score, or undefined for an item that has no vector. */
export interface Ranked<T> {
  item: T;
  score: number | undefined;
}

/** Square root of the sum of squares, summed in index order as the reference does. */
export function magnitude(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}

/**
 * Cosine similarity from the dot product and both magnitudes, summed in index order in doubles as the
 * reference does; 0 when either has no length (a zero vector), where the division would give NaN.
 */
export function similarity(
  query: ArrayLike<number>,
  queryMagnitude: number,
  vector: ArrayLike<number>,
  vectorMagnitude: number,
): number {
  let dot = 0;
  for (let i = 0; i < vector.length; i++) dot += vector[i] * query[i];
  return queryMagnitude && vectorMagnitude ? dot / (queryMagnitude * vectorMagnitude) : 0;
}

export const cosineSimilarity = (query: ArrayLike<number>, vector: ArrayLike<number>): number =>
  similarity(query, magnitude(query), vector, magnitude(vector));

/**
 * How far a score summed in four interleaved parts (`fastDot`) can be from the in-order one, for
 * vectors of `length` whose magnitudes are the ones given: both sums of the same products are within
 * (length-1)·2⁻⁵³·Σ|xᵢqᵢ| of the true sum, and Σ|xᵢqᵢ| ≤ |x|·|q| (Cauchy-Schwarz), so a score moves by
 * under 2·length·2⁻⁵³. Four times that, and a margin for the magnitudes' own rounding, to be sure.
 */
export const scoreSlack = (length: number) => (8 * length + 64) * 2 ** -53;

/**
 * The query magnitudes for which that bound holds: within them no square of a component that counts
 * underflows (nor overflows) in the magnitude's sum. (A vector's components are 4-byte floats, whose
 * squares never do.) Outside them every vector is scored exactly.
 */
const SLACK_MIN_MAGNITUDE = 2 ** -400;
const SLACK_MAX_MAGNITUDE = 2 ** 400;

/** Whether scores against a query of this magnitude may be told apart by an approximate score and its slack. */
export const approximable = (queryMagnitude: number): boolean =>
  queryMagnitude >= SLACK_MIN_MAGNITUDE && queryMagnitude <= SLACK_MAX_MAGNITUDE;

/**
 * The dot product summed in four interleaved parts: about four times faster than one in-order sum
 * (the additions do not wait on each other), and within `scoreSlack` of it; used only to tell the
 * vectors that cannot reach the page from those that must be scored exactly (here, and for a
 * vector's sketch: vector-sketch.ts).
 */
export function fastDot(query: Float64Array, vector: ArrayLike<number>): number {
  const n = vector.length;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    a += vector[i] * query[i];
    b += vector[i + 1] * query[i + 1];
    c += vector[i + 2] * query[i + 2];
    d += vector[i + 3] * query[i + 3];
  }
  for (; i < n; i++) a += vector[i] * query[i];
  return a + b + (c + d);
}

/** A scored item kept for the page: its best vector's exact score, and its place in the scan (ties keep it). */
interface Kept<T> {
  item: T;
  score: number;
  at: number;
}

/** Whether `a` ranks below `b`: a lower score, or the same score later in the scan. */
const below = <T>(a: Kept<T>, b: Kept<T>) => a.score < b.score || (a.score === b.score && a.at > b.at);

/**
 * A ranking fed one stored vector at a time, in the candidates' order, for one page. It keeps only
 * what the page can show: the `offset + limit` best items so far (a heap whose root is the lowest) and
 * the first `limit` items without a vector; never the vectors. An
 * item's rows come one after another (`id` repeats); a row without a vector is an item with none.
 * `magnitude` may be given when it was stored with the vector (the same sum, computed once at write).
 *
 * Once the heap is full, a vector is first scored approximately (`fastDot`); one that cannot reach the
 * heap's lowest score even with `scoreSlack` is dropped, any other is scored exactly, in index order,
 * so the page's scores and order are those of scoring every vector exactly.
 */
export class SimilarityRanking<T> {
  readonly #query: Float64Array;
  readonly #queryMagnitude: number;
  /** Whether a vector may be dropped on its approximate score (see SLACK_MIN_MAGNITUDE). */
  readonly #approximates: boolean;
  readonly #offset: number;
  readonly #limit: number;
  /** Items kept: offset + limit of them at most. */
  readonly #size: number;
  /** A binary min-heap by rank: the root is the lowest-ranked item kept. */
  readonly #heap: Kept<T>[] = [];
  readonly #scoreless: T[] = [];
  #at = 0;
  /** The item whose rows are being read: its id, whether a row had a vector, its best exact score. */
  #current: { id: unknown; item: T; hasVector: boolean; best: number } | undefined;

  constructor(query: ArrayLike<number>, page: { offset: number; limit: number }) {
    this.#query = Float64Array.from(query);
    this.#queryMagnitude = magnitude(query);
    this.#approximates = approximable(this.#queryMagnitude);
    this.#offset = page.offset;
    this.#limit = page.limit;
    this.#size = page.offset + page.limit;
  }

  /** The score an item must beat to be kept: -Infinity until the heap is full, then its lowest (none for an empty page). */
  #bar(): number {
    if (this.#size === 0) return Number.POSITIVE_INFINITY;
    return this.#heap.length < this.#size ? Number.NEGATIVE_INFINITY : this.#heap[0].score;
  }

  /** The next row of the scan: an item (by `id`) and one of its vectors, or null if it has none. */
  add(id: unknown, item: T, vector: ArrayLike<number> | null, vectorMagnitude?: number): void {
    let current = this.#current;
    if (!current || current.id !== id) {
      this.#finish();
      current = { id, item, hasVector: false, best: Number.NEGATIVE_INFINITY };
      this.#current = current;
    }
    if (!vector?.length) return;
    current.hasVector = true;
    const vectorNorm = vectorMagnitude ?? magnitude(vector);
    const bar = this.#bar();
    if (bar !== Number.NEGATIVE_INFINITY && this.#approximates && vectorNorm) {
      const approximate = fastDot(this.#query, vector) / (this.#queryMagnitude * vectorNorm);
      // Only a score that may reach the bar is worth its exact sum (an equal one later in the scan loses).
      if (approximate + scoreSlack(vector.length) < bar) return;
    }
    this.addScore(id, item, similarity(this.#query, this.#queryMagnitude, vector, vectorNorm));
  }

  /** The next row of the scan, already scored exactly (as `similarity` scores it) by the caller. */
  addScore(id: unknown, item: T, score: number): void {
    let current = this.#current;
    if (!current || current.id !== id) {
      this.#finish();
      current = { id, item, hasVector: false, best: Number.NEGATIVE_INFINITY };
      this.#current = current;
    }
    current.hasVector = true;
    if (score > current.best) current.best = score;
  }

  /** Ends the current item: kept if it beats the bar, counted, or noted as an item without a vector. */
  #finish(): void {
    const current = this.#current;
    if (!current) return;
    this.#current = undefined;
    const at = this.#at++;
    if (!current.hasVector) {
      if (this.#scoreless.length < this.#limit) this.#scoreless.push(current.item);
      return;
    }
    if (this.#size === 0) return;
    const kept = { item: current.item, score: current.best, at };
    const heap = this.#heap;
    if (heap.length < this.#size) {
      heap.push(kept);
      this.#siftUp(heap.length - 1);
    } else if (below(heap[0], kept)) {
      heap[0] = kept;
      this.#siftDown(0);
    }
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    const entry = heap[index];
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!below(entry, heap[parent])) break;
      heap[index] = heap[parent];
      index = parent;
    }
    heap[index] = entry;
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    const entry = heap[index];
    for (;;) {
      let lowest = index;
      let lowestEntry = entry;
      for (let child = 2 * index + 1; child <= 2 * index + 2 && child < heap.length; child++) {
        if (below(heap[child], lowestEntry)) {
          lowest = child;
          lowestEntry = heap[child];
        }
      }
      if (lowest === index) break;
      heap[index] = lowestEntry;
      index = lowest;
    }
    heap[index] = entry;
  }

  /**
   * The page, as the reference answers it:
   * - an item scores its best vector;
   * - items go by score, highest first; equal scores keep the candidates' order (the reference's sort
   *   of all vectors is stable, and an item's vectors are consecutive);
   * - `offset` and `limit` count items;
   * - items without vectors come after the scored ones, with no score, only while the page has room,
   *   and from the first of them whatever the offset (the reference skips none of them for `offset`).
   */
  page(): Ranked<T>[] {
    this.#finish();
    const kept: Ranked<T>[] = [...this.#heap]
      .sort((a, b) => b.score - a.score || a.at - b.at)
      .slice(this.#offset, this.#offset + this.#limit)
      .map(({ item, score }) => ({ item, score }));
    const room = this.#limit - kept.length;
    if (room > 0) for (const item of this.#scoreless.slice(0, room)) kept.push({ item, score: undefined });
    return kept;
  }
}

/** One page of the candidates by similarity to `query` (see `SimilarityRanking.page`). */
export function rankBySimilarity<T>(
  candidates: readonly Candidate<T>[],
  query: ArrayLike<number>,
  page: { offset: number; limit: number },
): Ranked<T>[] {
  const ranking = new SimilarityRanking<T>(query, page);
  candidates.forEach((candidate, index) => {
    if (!candidate.vectors.length) ranking.add(index, candidate.item, null);
    for (const vector of candidate.vectors) ranking.add(index, candidate.item, vector);
  });
  return ranking.page();
}
