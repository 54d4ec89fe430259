/**
 * Ranking by similarity, as LangGraph's `InMemoryStore` (`@langchain/langgraph-checkpoint`,
 * store/memory.js `scoreResults`, `cosineSimilarity`) does it: the same scores, order and pages.
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
function magnitude(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}

/** Cosine similarity against a query whose magnitude is known (computed once per search, as the reference does). */
function similarity(query: ArrayLike<number>, queryMagnitude: number, vector: ArrayLike<number>): number {
  let dot = 0;
  let norm = 0;
  for (let i = 0; i < vector.length; i++) {
    dot += vector[i] * query[i];
    norm += vector[i] * vector[i];
  }
  const vectorMagnitude = Math.sqrt(norm);
  return queryMagnitude && vectorMagnitude ? dot / (queryMagnitude * vectorMagnitude) : 0;
}

/**
 * Cosine similarity of the query and a vector, summed in index order in doubles as the reference does;
 * 0 when either has no length (a zero vector), where the division would give NaN.
 */
export const cosineSimilarity = (query: ArrayLike<number>, vector: ArrayLike<number>): number =>
  similarity(query, magnitude(query), vector);

/**
 * One page of the candidates by similarity to `query`, as the reference answers it:
 * - an item scores its best vector;
 * - items go by score, highest first; equal scores keep the candidates' order (the reference's sort of
 *   all vectors is stable, and an item's vectors are consecutive);
 * - `offset` and `limit` count items;
 * - items without vectors come after the scored ones, with no score, only while the page has room, and
 *   from the first of them whatever the offset (the reference skips none of them for `offset`).
 */
export function rankBySimilarity<T>(
  candidates: readonly Candidate<T>[],
  query: ArrayLike<number>,
  page: { offset: number; limit: number },
): Ranked<T>[] {
  const queryMagnitude = magnitude(query);
  const scored: { index: number; score: number }[] = [];
  const scoreless: T[] = [];
  candidates.forEach((candidate, index) => {
    if (!candidate.vectors.length) return void scoreless.push(candidate.item);
    let best = Number.NEGATIVE_INFINITY;
    for (const vector of candidate.vectors) best = Math.max(best, similarity(query, queryMagnitude, vector));
    scored.push({ index, score: best });
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const kept: Ranked<T>[] = scored
    .slice(page.offset, page.offset + page.limit)
    .map(({ index, score }) => ({ item: candidates[index].item, score }));
  const room = page.limit - kept.length;
  if (room > 0) for (const item of scoreless.slice(0, room)) kept.push({ item, score: undefined });
  return kept;
}
