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

/** A scored item kept for the page: its best vector's exact score, and its place in the scan (ties keep it). */
interface Kept<T> {
  item: T;
  score: number;
  at: number;
}

/** Whether `a` ranks below `b`: a lower score, or the same score later in the scan. */
const below = <T>(a: Kept<T>, b: Kept<T>) => a.score < b.score || (a.score === b.score && a.at > b.at);

/**
 * A ranking fed one scored vector at a time, in the candidates' order, for one page. It keeps only
 * what the page can show: the `offset + limit` best items so far (a heap whose root is the lowest) and
 * the first `limit` items without a vector. An item's rows come one after another (`id` repeats); its
 * score is its best vector's. The scores are the caller's, exact (`similarity`): the caller may leave
 * out the vectors that cannot reach the page (workspace/ranked-scan.ts bounds them from sketches).
 */
export class SimilarityRanking<T> {
  readonly #offset: number;
  readonly #limit: number;
  /** Items kept: offset + limit of them at most. */
  readonly #size: number;
  /** A binary min-heap by rank: the root is the lowest-ranked item kept. */
  readonly #heap: Kept<T>[] = [];
  readonly #scoreless: T[] = [];
  #at = 0;
  /** The item whose rows are being read: its id, whether a row had a vector, its best score. */
  #current: { id: unknown; item: T; hasVector: boolean; best: number } | undefined;

  constructor(page: { offset: number; limit: number }) {
    this.#offset = page.offset;
    this.#limit = page.limit;
    this.#size = page.offset + page.limit;
  }

  #row(id: unknown, item: T) {
    let current = this.#current;
    if (!current || current.id !== id) {
      this.#finish();
      current = { id, item, hasVector: false, best: Number.NEGATIVE_INFINITY };
      this.#current = current;
    }
    return current;
  }

  /** The next row of the scan: a vector of the item `id`, scored exactly (as `similarity` scores it). */
  addScore(id: unknown, item: T, score: number): void {
    const current = this.#row(id, item);
    current.hasVector = true;
    if (score > current.best) current.best = score;
  }

  /** An item without a vector (it follows the scored ones, without a score). */
  addUnscored(id: unknown, item: T): void {
    this.#row(id, item);
  }

  /** Ends the current item: kept if it beats the heap's lowest, or noted as an item without a vector. */
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

/** One page of the candidates by similarity to `query`, every vector scored exactly (see `SimilarityRanking.page`). */
export function rankBySimilarity<T>(
  candidates: readonly Candidate<T>[],
  query: ArrayLike<number>,
  page: { offset: number; limit: number },
): Ranked<T>[] {
  const ranking = new SimilarityRanking<T>(page);
  const queryMagnitude = magnitude(query);
  candidates.forEach((candidate, index) => {
    if (!candidate.vectors.length) ranking.addUnscored(index, candidate.item);
    for (const vector of candidate.vectors)
      ranking.addScore(index, candidate.item, similarity(query, queryMagnitude, vector, magnitude(vector)));
  });
  return ranking.page();
}
