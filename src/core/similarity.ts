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
function similarity(
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
 * A ranking fed one stored vector at a time, in the candidates' order, so a scan keeps one score per
 * item and never the vectors. An item's rows come one after another (`id` repeats); a row without a
 * vector is an item with none. `magnitude` may be given when it was stored with the vector (the same
 * sum, computed once at write).
 */
export class SimilarityRanking<T> {
  readonly #query: ArrayLike<number>;
  readonly #queryMagnitude: number;
  readonly #scored: { item: T; score: number }[] = [];
  readonly #scoreless: T[] = [];
  #last: { id: unknown; entry: { item: T; score: number } | null } | undefined;

  constructor(query: ArrayLike<number>) {
    this.#query = query;
    this.#queryMagnitude = magnitude(query);
  }

  /** The next row of the scan: an item (by `id`) and one of its vectors, or null if it has none. */
  add(id: unknown, item: T, vector: ArrayLike<number> | null, vectorMagnitude?: number): void {
    const score = vector?.length
      ? similarity(this.#query, this.#queryMagnitude, vector, vectorMagnitude ?? magnitude(vector))
      : null;
    if (this.#last && this.#last.id === id) {
      const entry = this.#last.entry;
      if (score === null) return;
      if (entry) entry.score = Math.max(entry.score, score);
      else this.#last.entry = this.#newScored(item, score);
      return;
    }
    this.#last = { id, entry: score === null ? null : this.#newScored(item, score) };
    if (score === null) this.#scoreless.push(item);
  }

  #newScored(item: T, score: number) {
    const entry = { item, score };
    this.#scored.push(entry);
    return entry;
  }

  /**
   * One page, as the reference answers it:
   * - an item scores its best vector;
   * - items go by score, highest first; equal scores keep the candidates' order (the reference's sort
   *   of all vectors is stable, and an item's vectors are consecutive);
   * - `offset` and `limit` count items;
   * - items without vectors come after the scored ones, with no score, only while the page has room,
   *   and from the first of them whatever the offset (the reference skips none of them for `offset`).
   */
  page(page: { offset: number; limit: number }): Ranked<T>[] {
    // Array.prototype.sort is stable: equal scores keep the scan's order.
    const kept: Ranked<T>[] = [...this.#scored]
      .sort((a, b) => b.score - a.score)
      .slice(page.offset, page.offset + page.limit)
      .map(({ item, score }) => ({ item, score }));
    const room = page.limit - kept.length;
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
  const ranking = new SimilarityRanking<T>(query);
  candidates.forEach((candidate, index) => {
    if (!candidate.vectors.length) ranking.add(index, candidate.item, null);
    for (const vector of candidate.vectors) ranking.add(index, candidate.item, vector);
  });
  return ranking.page(page);
}
