import { type AuthFilter, matchesFilter } from "../core/auth-filter.ts";
import { SimilarityRanking, SketchScreen } from "../core/similarity.ts";
import { bindable, executeStatements, type SqlResult, type SqlStatement } from "./sql.ts";

/**
 * A search by similarity run inside the partition's object, where the vectors are stored, so a scan
 * of many vectors neither crosses RPC nor sits in memory; only the page's ids and scores leave, with
 * the rows the caller asks for them. Two passes, each in the candidates' order:
 * 1. the candidates' 1-byte sketches (a covering index, a quarter of the floats' bytes) bound each
 *    item's best score and leave the items that may reach the page (`SketchScreen`);
 * 2. those items' vectors, scored exactly (`SimilarityRanking`): the page is the one scoring every
 *    vector exactly would give.
 */

/** In the `pageStatements`, the parameter that becomes the page's ids (a JSON array, for `json_each`). */
export const RANKED_IDS = "\u0000ranked-ids";
/** In `vectors`, the parameter that becomes the ids of the items to score exactly (a JSON array). */
export const CANDIDATE_IDS = "\u0000candidate-ids";

export interface RankedScan {
  /**
   * Rows `[id, sketch, scale, magnitude, metadata?]`, an item's rows one after another: `sketch` a
   * BLOB of 1-byte components and `scale` their unit (see `sketchVector`; null: written before
   * sketches), `magnitude` the vector's stored magnitude (null: an item with no vector), and with
   * `filter`, `metadata` the JSON text the filter is tested against.
   */
  candidates: SqlStatement;
  /**
   * Rows `[id, vector, magnitude]` of the items whose ids CANDIDATE_IDS binds, in the same order:
   * `vector` a BLOB of 4-byte floats.
   */
  vectors: SqlStatement;
  /** The query's vector, in doubles. */
  query: number[];
  offset: number;
  limit: number;
  /** An authorization handler's filter: candidates whose metadata fails it are skipped. */
  filter?: AuthFilter;
  /** Run atomically after the ranking, with RANKED_IDS bound to the page's ids: the page's rows, a TTL refresh. */
  pageStatements: SqlStatement[];
  /** Rows read at most: past it the scan stops and answers `tooMany`, running no `pageStatements`. */
  maxRows?: number;
}

export interface RankedPage {
  /** The page's ids in rank order, each with its score (null: the item has no vector). */
  ranked: { id: number; score: number | null }[];
  /** What the `pageStatements` answered. */
  results: SqlResult[];
  /** Rows the passes read (sketches, then vectors), for the bench's count of rows read per search. */
  scanned: number;
  /** The scan read more than `maxRows` rows and stopped: `ranked` and `results` are empty. */
  tooMany?: true;
}

const binding = (statement: SqlStatement, placeholder: string, ids: number[]) =>
  statement.params.map((param) => (param === placeholder ? JSON.stringify(ids) : bindable(param)));

export function rankedScan(storage: DurableObjectStorage, scan: RankedScan): RankedPage {
  const screen = new SketchScreen(scan.query, scan);
  let scanned = 0;
  let skipped: unknown;
  for (const row of storage.sql.exec(scan.candidates.sql, ...scan.candidates.params.map(bindable)).raw()) {
    scanned += 1;
    if (scan.maxRows !== undefined && scanned > scan.maxRows)
      return { ranked: [], results: [], scanned, tooMany: true };
    const [id, sketch, scale, magnitude, metadata] = row;
    if (scan.filter) {
      if (id === skipped) continue;
      const passes = typeof metadata === "string" && matchesFilter(JSON.parse(metadata), scan.filter);
      if (!passes) {
        skipped = id;
        continue;
      }
    }
    screen.add(
      Number(id),
      sketch instanceof ArrayBuffer ? new Int8Array(sketch) : null,
      typeof scale === "number" ? scale : null,
      typeof magnitude === "number" ? magnitude : null,
    );
  }
  const { scored, scoreless } = screen.candidates();
  const ranking = new SimilarityRanking<number>(scan.query, scan);
  if (scored.length) {
    for (const [id, blob, magnitude] of storage.sql
      .exec(scan.vectors.sql, ...binding(scan.vectors, CANDIDATE_IDS, scored))
      .raw()) {
      scanned += 1;
      ranking.add(id, Number(id), new Float32Array(blob as ArrayBuffer), magnitude as number);
    }
  }
  for (const id of scoreless) ranking.add(`none:${id}`, id, null);
  const ranked = ranking.page().map(({ item, score }) => ({ id: item, score: score ?? null }));
  const ids = ranked.map(({ id }) => id);
  const statements = scan.pageStatements.map((statement) => ({
    ...statement,
    params: binding(statement, RANKED_IDS, ids),
  }));
  return { ranked, results: statements.length ? executeStatements(storage, statements) : [], scanned };
}
