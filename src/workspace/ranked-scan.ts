import { type AuthFilter, matchesFilter } from "../core/auth-filter.ts";
import { SimilarityRanking } from "../core/similarity.ts";
import { bindable, executeStatements, type SqlResult, type SqlStatement } from "./sql.ts";

/**
 * A search by similarity run inside the partition's object: the candidates' vectors are read and
 * scored where they are stored, one row at a time, so a scan of many vectors neither crosses RPC nor
 * sits in memory; only the page's ids and scores leave, with the rows the caller asks for them.
 */

/** In the `pageStatements`, the parameter that becomes the page's ids (a JSON array, for `json_each`). */
export const RANKED_IDS = "\u0000ranked-ids";

export interface RankedScan {
  /**
   * Rows `[id, vector, magnitude, metadata?]`, an item's rows one after another: `vector` a BLOB of
   * 4-byte floats or null (an item with no vector), `magnitude` its stored magnitude, and with
   * `filter`, `metadata` the JSON text the filter is tested against.
   */
  candidates: SqlStatement;
  /** The query's vector, in doubles. */
  query: number[];
  offset: number;
  limit: number;
  /**
   * An authorization handler's filter: candidates whose metadata fails it are skipped. The metadata is
   * read from an item's first row (later rows of the item may leave it null).
   */
  filter?: AuthFilter;
  /** Run atomically after the ranking, with RANKED_IDS bound to the page's ids: the page's rows, a TTL refresh. */
  pageStatements: SqlStatement[];
  /** Rows read at most: past it the scan stops and answers `tooMany`, running no `pageStatements`. */
  maxRows?: number;
  /**
   * With `maxRows`: a row `[n]`, the candidates counted cheaply (no vector read, at most `maxRows + 1`),
   * run first; past `maxRows` the scan answers `tooMany` without reading any vector.
   */
  count?: SqlStatement;
}

export interface RankedPage {
  /** The page's ids in rank order, each with its score (null: the item has no vector). */
  ranked: { id: number; score: number | null }[];
  /** What the `pageStatements` answered. */
  results: SqlResult[];
  /** Rows the scan read, for the bench's count of rows read per search. */
  scanned: number;
  /** The scan read more than `maxRows` rows and stopped: `ranked` and `results` are empty. */
  tooMany?: true;
}

export function rankedScan(storage: DurableObjectStorage, scan: RankedScan): RankedPage {
  if (scan.count && scan.maxRows !== undefined) {
    const [counted] = storage.sql
      .exec(scan.count.sql, ...scan.count.params.map(bindable))
      .raw()
      .next().value ?? [0];
    if (Number(counted) > scan.maxRows) return { ranked: [], results: [], scanned: 0, tooMany: true };
  }
  const ranking = new SimilarityRanking<number>(scan.query, scan);
  let scanned = 0;
  // The filter's verdict on the item whose rows are being read: its metadata comes on its first row only.
  let judged: { id: unknown; passes: boolean } | undefined;
  for (const row of storage.sql.exec(scan.candidates.sql, ...scan.candidates.params.map(bindable)).raw()) {
    scanned += 1;
    if (scan.maxRows !== undefined && scanned > scan.maxRows)
      return { ranked: [], results: [], scanned, tooMany: true };
    const [id, blob, magnitude, metadata] = row;
    if (scan.filter) {
      if (judged?.id !== id)
        judged = { id, passes: typeof metadata === "string" && matchesFilter(JSON.parse(metadata), scan.filter) };
      if (!judged.passes) continue;
    }
    const vector = blob instanceof ArrayBuffer ? new Float32Array(blob) : null;
    ranking.add(id, Number(id), vector, typeof magnitude === "number" ? magnitude : undefined);
  }
  const ranked = ranking.page().map(({ item, score }) => ({ id: item, score: score ?? null }));
  const ids = JSON.stringify(ranked.map(({ id }) => id));
  const statements = scan.pageStatements.map((statement) => ({
    ...statement,
    params: statement.params.map((param) => (param === RANKED_IDS ? ids : param)),
  }));
  return { ranked, results: statements.length ? executeStatements(storage, statements) : [], scanned };
}
