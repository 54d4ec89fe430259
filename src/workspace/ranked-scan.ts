import { type AuthFilter, matchesFilter } from "../core/auth-filter.ts";
import { magnitude, SimilarityRanking, similarity } from "../core/similarity.ts";
import { approximable, sketchScore, sketchVector } from "../core/vector-sketch.ts";
import { bindable, executeStatements, type SqlResult, type SqlStatement } from "./sql.ts";
import type { VectorCache } from "./vector-cache.ts";

/**
 * A search by similarity run inside the partition's object, where the vectors are stored: only the
 * page's ids and scores leave, with the rows the caller asks for them.
 *
 * The candidates are read without their vectors. Each vector is scored from its sketch, kept in the
 * object's memory (vector-cache.ts), within a proven bound; the vectors whose bound lets their item
 * reach the page are then read and scored exactly. The page is the one scoring every vector exactly
 * gives, in scores, order and ties, while a search of 10,000 vectors reads a few dozen of them.
 */

/** In the `pageStatements`, the parameter that becomes the page's ids (a JSON array, for `json_each`). */
export const RANKED_IDS = "\u0000ranked-ids";
/** In `vectors`, the parameter that becomes the ids of the vectors to read (a JSON array, for `json_each`). */
export const VECTOR_IDS = "\u0000vector-ids";

export interface RankedScan {
  /**
   * Rows `[id, vectorId, metadata?]`, an item's rows one after another: `vectorId` one of its vectors
   * (null: an item with no vector), and with `filter`, `metadata` the JSON text the filter is tested
   * against, on the item's first row (later rows may leave it null).
   */
  candidates: SqlStatement;
  /**
   * Rows `[vectorId, vector, magnitude, itemId]` of the vectors whose ids are bound to VECTOR_IDS: their
   * 4-byte floats as stored, and the item each belongs to.
   */
  vectors: SqlStatement;
  /**
   * For a search with no filter: the same scope read from the vectors' key index alone, without the
   * items (half the rows read, none of the items' rows): `vectors` rows `{ id }` (a vector's id) in
   * the items' order (at most `maxRows + 1`: they are read at once), and `expired` rows `[itemId]` of the items
   * to leave out. The items are read after all (by
   * `candidates`) when the scored items do not fill the page.
   */
  vectorsInScope?: { vectors: SqlStatement; expired: SqlStatement };
  /** The query's vector, in doubles. */
  query: number[];
  offset: number;
  limit: number;
  /** An authorization handler's filter: candidates whose metadata fails it are skipped. */
  filter?: AuthFilter;
  /** Run atomically after the ranking, with RANKED_IDS bound to the page's ids: the page's rows, a TTL refresh. */
  pageStatements: SqlStatement[];
  /** Candidate rows at most: past it the scan stops and answers `tooMany`, running no `pageStatements`. */
  maxRows?: number;
  /**
   * With `maxRows`: a row `[n]`, the candidates counted cheaply (at most `maxRows + 1`), run first;
   * past `maxRows` the scan answers `tooMany` without reading the candidates.
   */
  count?: SqlStatement;
}

export interface RankedPage {
  /** The page's ids in rank order, each with its score (null: the item has no vector). */
  ranked: { id: number; score: number | null }[];
  /** What the `pageStatements` answered. */
  results: SqlResult[];
  /** Candidate rows the scan read, for the bench's count of rows read per search. */
  scanned: number;
  /** Vectors the scan read from their rows (sketches missing from the cache, and the page's contenders). */
  vectorsRead: number;
  /** The scan read more than `maxRows` rows and stopped: `ranked` and `results` are empty. */
  tooMany?: true;
}

/** Vector ids bound to one read of `vectors` at most: the JSON text stays small, and the floats read at once too. */
const VECTOR_READ_CHUNK = 1_000;

/**
 * The candidates' rows as read, in the items' order: each row's vector (null: an item without one),
 * and its item (NaN until its vector is read, in a scope of vectors alone).
 */
interface Scope {
  rowItem: number[];
  rowVector: (number | null)[];
  /** Rows the scope's statement read, for `maxRows`. */
  read: number;
}

export function rankedScan(storage: DurableObjectStorage, scan: RankedScan, cache: VectorCache): RankedPage {
  if (scan.count && scan.maxRows !== undefined) {
    const [counted] = run(storage, scan.count).next().value ?? [0];
    if (Number(counted) > scan.maxRows) return tooMany(0);
  }
  cache.beginSearch();
  if (scan.vectorsInScope) {
    const scope = readVectorScope(storage, scan.vectorsInScope, scan.maxRows);
    if (scan.maxRows !== undefined && scope.read > scan.maxRows) return tooMany(scope.read);
    const expired = new Set([...run(storage, scan.vectorsInScope.expired)].map(([id]) => Number(id)));
    const page = rankScope(storage, scan, cache, scope, expired);
    // Items without a vector come after the scored ones: read the items too when those do not fill the page.
    if (page) return page;
  }
  const scope = readScope(storage, scan);
  if (scan.maxRows !== undefined && scope.read > scan.maxRows) return tooMany(scope.read);
  return rankScope(storage, scan, cache, scope) as RankedPage;
}

const tooMany = (scanned: number): RankedPage => ({ ranked: [], results: [], scanned, vectorsRead: 0, tooMany: true });

/**
 * The page of a scope: its vectors scored from their sketches, then the page's contenders exactly.
 * With `expired` (a scope of vectors alone), the rows of those items are left out, and the answer is
 * undefined when the scored items do not fill the page (items without a vector would be on it).
 */
function rankScope(
  storage: DurableObjectStorage,
  scan: RankedScan,
  cache: VectorCache,
  scope: Scope,
  expired?: Set<number>,
): RankedPage | undefined {
  const query = Float64Array.from(scan.query);
  const queryMagnitude = magnitude(query);
  const dims = query.length;
  let rows = scope.rowVector.length;
  const { rowItem, rowVector } = scope;
  // Each row's score from below and above (equal once exact; NaN: no vector of the query's length).
  const low = new Float64Array(rows).fill(Number.NaN);
  const high = new Float64Array(rows).fill(Number.NaN);
  const exact = new Uint8Array(rows);
  let vectorsRead = 0;
  /** Reads the rows' vectors, scores them exactly, and keeps their sketches for the next search. */
  const readExactly = (wanted: number[]) => {
    const at = new Map<number, number[]>();
    for (const row of wanted) {
      const id = rowVector[row] as number;
      const rowsOfId = at.get(id);
      if (rowsOfId) rowsOfId.push(row);
      else at.set(id, [row]);
    }
    const ids = [...at.keys()];
    for (let start = 0; start < ids.length; start += VECTOR_READ_CHUNK) {
      const chunk = JSON.stringify(ids.slice(start, start + VECTOR_READ_CHUNK));
      const statement = { ...scan.vectors, params: scan.vectors.params.map((p) => (p === VECTOR_IDS ? chunk : p)) };
      for (const [rawId, blob, storedMagnitude, item] of run(storage, statement)) {
        vectorsRead += 1;
        const id = Number(rawId);
        if (!(blob instanceof ArrayBuffer)) continue;
        const vector = new Float32Array(blob);
        const vectorMagnitude = typeof storedMagnitude === "number" ? storedMagnitude : magnitude(vector);
        cache.set(id, { sketch: sketchVector(vector, vectorMagnitude), item: Number(item) });
        const score = vector.length === dims ? similarity(query, queryMagnitude, vector, vectorMagnitude) : Number.NaN;
        for (const row of at.get(id) ?? []) {
          rowItem[row] = Number(item);
          if (Number.isNaN(score)) continue;
          low[row] = high[row] = score;
          exact[row] = 1;
        }
      }
    }
  };

  // A first pass from the sketches; the vectors without one (or for a query whose scores cannot be bounded) are read.
  const unknown: number[] = [];
  const sketched = approximable(queryMagnitude);
  for (let row = 0; row < rows; row++) {
    const id = rowVector[row];
    if (id === null) continue;
    const cached = sketched ? cache.get(id) : undefined;
    if (!cached) {
      unknown.push(row);
      continue;
    }
    rowItem[row] = cached.item;
    const { sketch } = cached;
    if (sketch.codes.length !== dims) continue;
    const score = sketchScore(query, queryMagnitude, sketch);
    low[row] = score - sketch.slack;
    high[row] = score + sketch.slack;
    // A sketch without slack (a zero vector, or a query or vector of no length) scores exactly.
    if (sketch.slack === 0) exact[row] = 1;
  }
  readExactly(unknown);

  // The expired items' rows go; then the items, each a run of rows (an item's rows are consecutive).
  if (expired?.size) rows = leaveOut(scope, [low, high, exact], expired);
  const itemStart: number[] = [];
  for (let row = 0; row < rows; row++) if (row === 0 || rowItem[row] !== rowItem[row - 1]) itemStart.push(row);
  const items = itemStart.length;
  const itemEnd = (item: number) => (item + 1 < items ? itemStart[item + 1] : rows);
  const itemLow: number[] = [];
  const itemHigh = new Float64Array(items).fill(Number.NaN);
  for (let item = 0; item < items; item++) {
    let best = Number.NEGATIVE_INFINITY;
    let bestHigh = Number.NEGATIVE_INFINITY;
    for (let row = itemStart[item]; row < itemEnd(item); row++) {
      if (Number.isNaN(high[row])) continue;
      best = Math.max(best, low[row]);
      bestHigh = Math.max(bestHigh, high[row]);
    }
    if (bestHigh === Number.NEGATIVE_INFINITY) continue;
    itemHigh[item] = bestHigh;
    itemLow.push(best);
  }
  const pageSize = scan.offset + scan.limit;
  if (expired && itemLow.length < pageSize) return undefined;

  // The bar: the page's last item scores at least the (offset + limit)-th best item's lower bound, so an
  // item whose bound from above is below it cannot be on the page. Its other vectors need no exact score.
  const bar =
    pageSize === 0
      ? Number.POSITIVE_INFINITY
      : itemLow.length < pageSize
        ? Number.NEGATIVE_INFINITY
        : kthLargest(itemLow, pageSize);
  const contenders: number[] = [];
  for (let item = 0; item < items; item++) {
    if (!(itemHigh[item] >= bar)) continue;
    for (let row = itemStart[item]; row < itemEnd(item); row++)
      if (!exact[row] && high[row] >= bar) contenders.push(row);
  }
  readExactly(contenders);

  const ranking = new SimilarityRanking<number>(scan);
  for (let item = 0; item < items; item++) {
    const id = rowItem[itemStart[item]];
    if (Number.isNaN(itemHigh[item])) ranking.addUnscored(id, id);
    else if (itemHigh[item] >= bar)
      for (let row = itemStart[item]; row < itemEnd(item); row++) if (exact[row]) ranking.addScore(id, id, low[row]);
  }
  const ranked = ranking.page().map(({ item, score }) => ({ id: item, score: score ?? null }));
  const ids = JSON.stringify(ranked.map(({ id }) => id));
  const statements = scan.pageStatements.map((statement) => ({
    ...statement,
    params: statement.params.map((param) => (param === RANKED_IDS ? ids : param)),
  }));
  const results = statements.length
    ? executeStatements(storage, statements, (sql, rows) => cache.written(sql, rows))
    : [];
  return { ranked, results, scanned: scope.read, vectorsRead };
}

/** Removes the rows of `items` from the scope and the rows' arrays beside it, in place; answers the rows left. */
function leaveOut(scope: Scope, columns: (Float64Array | Uint8Array)[], items: Set<number>): number {
  let kept = 0;
  for (let row = 0; row < scope.rowVector.length; row++) {
    if (items.has(scope.rowItem[row])) continue;
    scope.rowItem[kept] = scope.rowItem[row];
    scope.rowVector[kept] = scope.rowVector[row];
    for (const column of columns) column[kept] = column[row];
    kept += 1;
  }
  scope.rowItem.length = kept;
  scope.rowVector.length = kept;
  return kept;
}

/** The candidates the filter lets through, stopping one row past `maxRows`. */
function readScope(storage: DurableObjectStorage, scan: RankedScan): Scope {
  const scope: Scope = { rowItem: [], rowVector: [], read: 0 };
  // The filter's verdict on the item whose rows are being read: its metadata comes on its first row only.
  let judged: { id: unknown; passes: boolean } | undefined;
  const filter = scan.filter;
  for (const [rawId, vectorId, metadata] of run(storage, scan.candidates)) {
    scope.read += 1;
    if (scan.maxRows !== undefined && scope.read > scan.maxRows) break;
    if (filter) {
      if (judged?.id !== rawId)
        judged = { id: rawId, passes: typeof metadata === "string" && matchesFilter(JSON.parse(metadata), filter) };
      if (!judged?.passes) continue;
    }
    scope.rowItem.push(Number(rawId));
    scope.rowVector.push(vectorId === null || vectorId === undefined ? null : Number(vectorId));
  }
  return scope;
}

/** The scope's vector ids alone, in the items' order, stopping one row past `maxRows`. */
function readVectorScope(
  storage: DurableObjectStorage,
  scope: NonNullable<RankedScan["vectorsInScope"]>,
  maxRows: number | undefined,
): Scope {
  // At once (one native call), not row by row: ids only, at most maxRows + 1 of them (the statement's LIMIT).
  const ids = storage.sql.exec<{ id: number }>(scope.vectors.sql, ...scope.vectors.params.map(bindable)).toArray();
  const read = ids.length;
  const rowVector = (maxRows !== undefined ? ids.slice(0, maxRows) : ids).map(({ id }) => Number(id));
  return { rowItem: new Array(rowVector.length).fill(Number.NaN), rowVector, read };
}

/** The k-th largest of `values` (1-based; k ≤ length), by quickselect, leaving `values` reordered. */
function kthLargest(values: number[], k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i] > pivot) i++;
      while (values[j] < pivot) j--;
      if (i <= j) {
        [values[i], values[j]] = [values[j], values[i]];
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target];
  }
  return values[target];
}

function run(storage: DurableObjectStorage, statement: SqlStatement): Iterable<unknown[]> & Iterator<unknown[]> {
  return storage.sql.exec(statement.sql, ...statement.params.map(bindable)).raw();
}
