import type { SqlStore, SqlValue } from "../db/sql.ts";
import type { CompiledFilter } from "./filter/compile.ts";
import { RUN_PAYLOAD_BYTES, RUN_TEXT_BYTES, RUNS_TABLE } from "./shard-schema.ts";
import { toStoredTime } from "./times.ts";

/**
 * A shard's runs as bulk export reads them: pages in (start_time, id) order, column by column, each
 * column aggregated by SQLite into one value. Which columns and in what shape is the caller's
 * choice (export/columns.ts holds the export column table); this module only knows the shard's
 * own table. It runs inside the TraceShardDO, so it lives beside the shard's storage.
 */

/**
 * How a column is handed over: stored microsecond times (times.ts) and JSON payloads as `text` (the writer
 * reads ISO text faster than SQLite's date functions), booleans and counts as `integer`, costs as
 * `real`, tags and parent_run_ids (stored JSON arrays) as `list`; `null` for a column the shard does
 * not track.
 */
export type ColumnShape = "text" | "integer" | "real" | "list" | "null";

export type ExportPageQuery = {
  /** ISO bounds on start_time: [start, end). */
  start: string;
  end: string;
  filter?: CompiledFilter;
  after?: ExportCursor;
  limit: number;
  /** A page stops early once its text columns reach this many bytes (RPC and memory stay bounded). */
  maxBytes: number;
  /** The columns of the page with their shapes, in order (see `shardColumns` in export/columns.ts). */
  columns: Readonly<Record<string, ColumnShape>>;
  /** Hand tags and parent_run_ids over as arrays (`values`) rather than their JSON text. */
  listsAsArrays?: boolean;
};

export type ExportCursor = { start_time: string; id: string };

/**
 * One column of an export page, aggregated by SQLite so no per-row object crosses the RPC:
 * - `strings`: a JSON array of each row's text (null for a null);
 * - `values`: a JSON array of one value per row: numbers (costs exact, as `%!.17g`), booleans as 0/1,
 *   lists as arrays, or null;
 * - `constant`: the same value on every row (columns the shard does not track are null).
 * (JSON, not group_concat: Durable Object SQLite grows a group_concat in steps that make it quadratic.)
 */
export type ExportColumn = { strings: string } | { values: string } | { constant: string | null };

/** A page of export rows in (start_time, id) order, column by column, and whether more rows follow. */
export type ExportPage = {
  rows: number;
  more: boolean;
  last: ExportCursor | null;
  columns: Record<string, ExportColumn>;
};

type ReadShape = Exclude<ColumnShape, "null">;

/** The columns of the shard's `runs` table, read from its CREATE TABLE statement. */
const STORED_COLUMNS = new Set(
  [...RUNS_TABLE.matchAll(/^\s+(\w+) (?:TEXT|INTEGER|REAL)\b/gm)].map((match) => match[1]),
);

/** A column derived on read: the time of a streamed LLM run's first `new_token` event. */
const FIRST_TOKEN_TIME = "first_token_time";

/**
 * The SQL of a column: the stored column of its name, except the derived `first_token_time` and
 * `feedback_stats` (from the shard's feedback table). For `first_token_time` only ISO text
 * counts there: event times come from clients, and one odd value must not fail a whole export. The
 * instr() test skips the per-row subquery for the runs (most) without a token event.
 */
export const FIRST_TOKEN_TIME_SQL =
  "CASE WHEN instr(runs.events, 'new_token') > 0 THEN (SELECT json_extract(event.value, '$.time') FROM json_each(runs.events) AS event WHERE json_extract(event.value, '$.name') = 'new_token' AND json_type(event.value, '$.time') = 'text' AND json_extract(event.value, '$.time') GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*' LIMIT 1) END";

function columnSql(field: string): string {
  if (field === FIRST_TOKEN_TIME) return FIRST_TOKEN_TIME_SQL;
  if (field === FEEDBACK_STATS) return feedbackStatsSql();
  // Names reach the SQL text: only the table's own columns do.
  if (!STORED_COLUMNS.has(field)) throw new Error(`A trace shard holds no column ${field}`);
  return `runs.${field}`;
}

/** A derived column: per feedback key, the count and average score of the run's feedback, as JSON text. */
const FEEDBACK_STATS = "feedback_stats";

/** `feedback_stats` as JSON text (`{"<key>": {"n": …, "avg": …}}`), null for a run without feedback. */
export function feedbackStatsSql(): string {
  return "(SELECT json_group_object(key, json_object('n', n, 'avg', average)) FROM (SELECT feedback.key AS key, count(*) AS n, avg(feedback.score) AS average FROM feedback WHERE feedback.run_id = runs.id GROUP BY feedback.key) HAVING count(*) > 0)";
}

/** The aggregate that hands column `c` of a page over in its shape. */
function aggregate(c: string, shape: ReadShape, listsAsArrays: boolean): string {
  // JSON renders reals with 15 digits; %!.17g round-trips every double.
  if (shape === "real")
    return `json_group_array(CASE WHEN ${c} IS NULL THEN NULL ELSE json(printf('%!.17g', ${c})) END)`;
  // Lists are stored JSON text: json() embeds them as arrays rather than strings.
  if (shape === "list" && listsAsArrays) return `json_group_array(json(${c}))`;
  return `json_group_array(${c})`;
}

/** One row's value of a column as a one-row ExportColumn. */
function singleValue(value: SqlValue, shape: ReadShape, listsAsArrays: boolean): ExportColumn {
  if (shape === "text" || (shape === "list" && !listsAsArrays))
    return { strings: JSON.stringify([value === null ? null : String(value)]) };
  // Lists are stored JSON text; reals print exactly from JavaScript.
  return { values: shape === "list" ? `[${value === null ? "null" : String(value)}]` : JSON.stringify([value]) };
}

/**
 * How SQLite refuses a value over its length limit (about 10 MB in Durable Objects): TOOBIG, or
 * NOMEM when a JSON aggregate cannot grow its buffer past it.
 */
const TOO_BIG = /SQLITE_TOOBIG|SQLITE_NOMEM|too big|out of memory/i;

/**
 * A page of rows for bulk export, in (start_time, id) order from `after`: runs that started in
 * [start, end) and match `filter`, only the requested columns, each aggregated into one value
 * (see ExportColumn) so a page costs SQLite's time, not a JavaScript object per row.
 */
export function readExportPage(sql: SqlStore, query: ExportPageQuery): ExportPage {
  const fields = Object.keys(query.columns);
  // The cursor's time is the lower bound the index seeks to (see ShardRuns.query): without it every
  // page would scan the day from its start, and an export of a day would be quadratic in its runs.
  // Bounds in the stored (microsecond) form, so they compare with stored times as text.
  const start = toStoredTime(query.start) ?? query.start;
  const lower = query.after && query.after.start_time > start ? query.after.start_time : start;
  const where = ["runs.start_time >= ?", "runs.start_time < ?"];
  const params: SqlValue[] = [lower, toStoredTime(query.end) ?? query.end];
  if (query.filter) {
    where.push(`(${query.filter.sql})`);
    params.push(...query.filter.params);
  }
  if (query.after) {
    where.push("(runs.start_time, runs.id) > (?, ?)");
    params.push(query.after.start_time, query.after.id);
  }
  const matching = `FROM runs WHERE ${where.join(" AND ")} ORDER BY runs.start_time, runs.id`;

  // Where the page ends: at `limit` rows, or at the row whose text reaches `maxBytes` (a page always
  // holds one row). The sizes are the expressions runs_by_start holds, so without a filter the
  // index answers alone; they count every column of unbounded size, asked for or not, and inputs
  // and outputs when either is asked for.
  const payload = fields.includes("inputs") || fields.includes("outputs");
  const size = `(${RUN_TEXT_BYTES})${payload ? ` + (${RUN_PAYLOAD_BYTES})` : ""}`;
  const [head] = sql.all<{ rows: number; bytes: number }>(
    `SELECT count(*) AS rows, total(size) AS bytes FROM (SELECT ${size} AS size ${matching} LIMIT ?)`,
    ...params,
    query.limit + 1,
  );
  if (head.rows === 0) return { rows: 0, more: false, last: null, columns: {} };
  let rows = Math.min(head.rows, query.limit);
  if (head.bytes > query.maxBytes) {
    // Rarely: large runs. The page ends at the first row whose preceding rows reach maxBytes.
    const [cut] = sql.all<{ rows: number }>(
      `SELECT count(*) AS rows FROM (SELECT sum(size) OVER (ORDER BY start_time, id ROWS UNBOUNDED PRECEDING) - size AS before
        FROM (SELECT runs.start_time, runs.id, ${size} AS size ${matching} LIMIT ?)) WHERE before < ?`,
      ...params,
      rows,
      query.maxBytes,
    );
    rows = Math.max(1, cut.rows);
  }

  const listsAsArrays = query.listsAsArrays ?? false;
  // Columns the shard does not track need no SQL.
  const constant: Record<string, ExportColumn> = {};
  const read: { field: string; shape: ReadShape }[] = [];
  for (const [field, shape] of Object.entries(query.columns)) {
    if (shape === "null") constant[field] = { constant: null };
    else read.push({ field, shape });
  }
  const selected = read.map(({ field }, i) => `${columnSql(field)} AS c${i}`);
  for (;;) {
    const last = sql.all<ExportCursor>(
      `SELECT runs.start_time, runs.id ${matching} LIMIT 1 OFFSET ?`,
      ...params,
      rows - 1,
    )[0];
    const page = (columns: Record<string, ExportColumn>): ExportPage => ({
      rows,
      more: head.rows > rows,
      last: { start_time: last.start_time, id: last.id },
      columns: { ...columns, ...constant },
    });
    if (read.length === 0) return page({});
    if (rows === 1) {
      // One row is read as it is: a single value may exceed what an aggregate can hold.
      const [one] = sql.all(`SELECT ${selected.join(", ")} ${matching} LIMIT 1`, ...params);
      return page(
        Object.fromEntries(read.map(({ field, shape }, i) => [field, singleValue(one[`c${i}`], shape, listsAsArrays)])),
      );
    }
    try {
      // SQLite aggregates a subquery's rows in the order it yields them: the page's (start_time, id) order.
      const [row] = sql.all(
        `SELECT ${read.map(({ shape }, i) => `${aggregate(`c${i}`, shape, listsAsArrays)} AS a${i}`).join(", ")}
        FROM (SELECT ${selected.join(", ")} ${matching} LIMIT ?)`,
        ...params,
        rows,
      );
      return page(
        Object.fromEntries(
          read.map(({ field, shape }, i) => {
            const text = String(row[`a${i}`]);
            return [
              field,
              shape === "text" || (shape === "list" && !listsAsArrays) ? { strings: text } : { values: text },
            ];
          }),
        ),
      );
    } catch (error) {
      // A column of this page is too big for one value once JSON-escaped: try half the rows.
      if (!TOO_BIG.test(String(error))) throw error;
      rows = Math.ceil(rows / 2);
    }
  }
}
