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

/**
 * Cosine similarity of the query and a vector, summed in index order in doubles as the reference does;
 * 0 when either has no length (a zero vector), where the division would give NaN.
 */
export function cosineSimilarity(query: ArrayLike<number>, vector: ArrayLike<number>): number {
  let dot = 0;
  let queryNorm = 0;
  let vectorNorm = 0;
  for (let i = 0; i < vector.length; i++) {
    dot += vector[i] * query[i];
    vectorNorm += vector[i] * vector[i];
  }
  for (let i = 0; i < query.length; i++) queryNorm += query[i] * query[i];
  const queryMagnitude = Math.sqrt(queryNorm);
  const vectorMagnitude = Math.sqrt(vectorNorm);
  return queryMagnitude && vectorMagnitude ? dot / (queryMagnitude * vectorMagnitude) : 0;
}

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
  const scored: { index: number; score: number }[] = [];
  const scoreless: T[] = [];
  candidates.forEach((candidate, index) => {
    if (!candidate.vectors.length) return void scoreless.push(candidate.item);
    let best = Number.NEGATIVE_INFINITY;
    for (const vector of candidate.vectors) best = Math.max(best, cosineSimilarity(query, vector));
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
