import { type SqlStore, type SqlValue, toBytes } from "../db/sql.ts";
import type { CompiledFilter } from "./filter/compile.ts";
import { ancestorIds, type ModelPrices, type RunPatch, type RunPost, type Usage, usageOf } from "./run-input.ts";
import { ATTACHMENTS_TABLE, flattenForFilters, PENDING_PATCHES_TABLE, RUN_PAYLOAD_BYTES, RUN_TEXT_BYTES, RUNS_INDEXES, RUNS_TABLE } from "./shard-schema.ts";

/**
 * The runs of one trace shard (workspace × project × UTC day): idempotent posts and patches in any
 * order, derived fields computed on every write, and keyset-paged queries with compiled filters.
 * Plain storage code over `SqlStore`, so the TraceShardDO stays thin and Node tests run it as is.
 */

type Json = Record<string, unknown>;

/** What the store keeps of a run; everything else is derived from it on write. */
type RunRecord = {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  session_id: string;
  name: string;
  run_type: string;
  status: string | null;
  error: string | null;
  start_time: string;
  end_time: string | null;
  inputs: Json | null;
  outputs: Json | null;
  extra: Json | null;
  events: Json[] | null;
  tags: string[];
  reference_example_id: string | null;
};

/** A run as `GET /runs/{id}` and `POST /runs/query` return it (LangSmith `RunSchema`). */
export type StoredRun = RunRecord &
  Usage & {
    status: string;
    latency: number | null;
    is_root: boolean;
    parent_run_ids: string[];
    thread_id: string | null;
    execution_order: number;
  };

type RunRow = {
  id: string; trace_id: string; parent_run_id: string | null; dotted_order: string | null; session_id: string; name: string;
  run_type: string; status: string; error: string | null; start_time: string; end_time: string | null; latency: number | null;
  inputs: string | null; outputs: string | null; extra: string | null; events: string | null; metadata: string; tags: string;
  parent_run_ids: string; thread_id: string | null; reference_example_id: string | null; total_tokens: number | null;
  prompt_tokens: number | null; completion_tokens: number | null; prompt_cost: number | null; completion_cost: number | null; total_cost: number | null; is_root: number;
  execution_order: number | null; updated_at: string;
};

export type ExportQuery = {
  /** ISO bounds on start_time: [start, end). */
  start: string;
  end: string;
  filter?: CompiledFilter;
  after?: ExportCursor;
  limit: number;
  /** A page stops early once its text columns reach this many bytes (RPC and memory stay bounded). */
  maxBytes: number;
  /** Export column names (see export/columns.ts); columns the shard does not hold are left out. */
  fields: readonly string[];
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
export type ExportPage = { rows: number; more: boolean; last: ExportCursor | null; columns: Record<string, ExportColumn> };

type ExportShape = "text" | "integer" | "real" | "list" | "null";

/**
 * The export columns the shard can produce and the shape each is handed over in. Stored times are
 * `toISOString()` text, which the writer reads faster than SQLite's date functions; feedback and
 * tiers are not tracked yet (null).
 */
const EXPORT_SHAPES: Record<string, ExportShape> = {
  id: "text", session_id: "text", trace_id: "text", parent_run_id: "text", dotted_order: "text", is_root: "integer",
  name: "text", run_type: "text", status: "text", start_time: "text", end_time: "text", first_token_time: "text",
  inputs: "text", outputs: "text", error: "text", extra: "text", events: "text", tags: "list", parent_run_ids: "list",
  reference_example_id: "text", prompt_tokens: "integer", completion_tokens: "integer", total_tokens: "integer",
  prompt_cost: "real", completion_cost: "real", total_cost: "real", feedback_stats: "null", trace_tier: "null",
};

/**
 * The SQL of an export column: the stored column of its name, except `first_token_time`, the time of
 * a streamed LLM run's first `new_token` event. Only ISO text counts there: event times come from
 * clients, and one odd value must not fail a whole export. The instr() test skips the per-row
 * subquery for the runs (most) without a token event.
 */
function exportSql(field: string): string {
  if (field !== "first_token_time") return `runs.${field}`;
  return "CASE WHEN instr(runs.events, 'new_token') > 0 THEN (SELECT json_extract(event.value, '$.time') FROM json_each(runs.events) AS event WHERE json_extract(event.value, '$.name') = 'new_token' AND json_type(event.value, '$.time') = 'text' AND json_extract(event.value, '$.time') GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*' LIMIT 1) END";
}

/** The aggregate that hands column `c` of a page over in its shape. */
function exportAggregate(c: string, shape: Exclude<ExportShape, "null">, listsAsArrays: boolean): string {
  // JSON renders reals with 15 digits; %!.17g round-trips every double.
  if (shape === "real") return `json_group_array(CASE WHEN ${c} IS NULL THEN NULL ELSE json(printf('%!.17g', ${c})) END)`;
  // Lists are stored JSON text: json() embeds them as arrays rather than strings.
  if (shape === "list" && listsAsArrays) return `json_group_array(json(${c}))`;
  return `json_group_array(${c})`;
}

/**
 * How SQLite refuses a value over its length limit (about 10 MB in Durable Objects): TOOBIG, or
 * NOMEM when a JSON aggregate cannot grow its buffer past it.
 */
const TOO_BIG = /SQLITE_TOOBIG|SQLITE_NOMEM|too big|out of memory/i;

export type RunQuery = {
  filters?: CompiledFilter[];
  ids?: string[];
  trace_id?: string;
  parent_run_id?: string;
  run_type?: string;
  is_root?: boolean;
  error?: boolean;
  /** Runs that started at or after / at or before these ISO times. */
  start_time?: string;
  end_time?: string;
  order?: "asc" | "desc";
  limit: number;
  /** The `(start_time, id)` of the last run of the previous page. */
  after?: { start_time: string; id: string };
};

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** Attachment bytes per SQLite row (a Durable Object SQLite value holds at most 2 MB). */
const ATTACHMENT_CHUNK_BYTES = 1024 * 1024;

/** Metadata keys the langsmith SDKs look a run's conversation thread up by (LangGraph sets `thread_id`). */
const THREAD_KEYS = ["thread_id", "session_id", "conversation_id"];

/** One row's value of an export column as a one-row ExportColumn. */
function singleValue(value: SqlValue, shape: Exclude<ExportShape, "null">, listsAsArrays: boolean): ExportColumn {
  if (shape === "text" || (shape === "list" && !listsAsArrays)) return { strings: JSON.stringify([value === null ? null : String(value)]) };
  // Lists are stored JSON text; reals print exactly from JavaScript.
  return { values: shape === "list" ? `[${value === null ? "null" : String(value)}]` : JSON.stringify([value]) };
}

export class RunStore {
  constructor(
    private readonly sql: SqlStore,
    /** Prices per model for runs whose usage carries no costs. */
    private readonly prices: ModelPrices = {},
  ) {
    sql.run(RUNS_TABLE);
    for (const index of RUNS_INDEXES) sql.run(index);
    sql.run(PENDING_PATCHES_TABLE);
    sql.run(ATTACHMENTS_TABLE);
  }

  /** Stores (or replaces) a run's attachment. Attachments may arrive before their run. */
  putAttachment(attachment: { run_id: string; name: string; mime_type: string; data: Uint8Array }): void {
    this.sql.transaction(() => {
      this.sql.run("DELETE FROM attachments WHERE run_id = ? AND name = ?", attachment.run_id, attachment.name);
      const size = attachment.data.byteLength;
      for (let chunk = 0, offset = 0; offset < size || chunk === 0; chunk++, offset += ATTACHMENT_CHUNK_BYTES) {
        const data = attachment.data.subarray(offset, Math.min(size, offset + ATTACHMENT_CHUNK_BYTES));
        this.sql.run("INSERT INTO attachments (run_id, name, mime_type, size, chunk, data) VALUES (?, ?, ?, ?, ?, ?)", attachment.run_id, attachment.name, attachment.mime_type, size, chunk, data);
      }
    });
  }

  /** A run's attachments without their bytes. */
  attachmentsOf(runId: string): { name: string; mime_type: string; size: number }[] {
    return this.sql.all<{ name: string; mime_type: string; size: number }>("SELECT name, mime_type, size FROM attachments WHERE run_id = ? AND chunk = 0 ORDER BY name", runId);
  }

  /** One attachment with its bytes, or null. */
  attachment(runId: string, name: string): { mime_type: string; data: Uint8Array } | null {
    const chunks = this.sql.all<{ mime_type: string; size: number; data: SqlValue }>("SELECT mime_type, size, data FROM attachments WHERE run_id = ? AND name = ? ORDER BY chunk", runId, name);
    if (!chunks.length) return null;
    const data = new Uint8Array(chunks[0].size);
    let offset = 0;
    for (const chunk of chunks) {
      const bytes = chunk.data === null ? new Uint8Array(0) : toBytes(chunk.data);
      data.set(bytes, offset);
      offset += bytes.byteLength;
    }
    return { mime_type: chunks[0].mime_type, data };
  }

  /**
   * One ingest request's runs, posts first, in one transaction. Which runs already exist and which
   * have a patch waiting is read once for the whole batch, so a new run costs a single INSERT.
   */
  ingest(posts: RunPost[], patches: RunPatch[], sessionId: string): void {
    this.sql.transaction(() => {
      const stored = this.#existing("runs", [...posts, ...patches].map((run) => run.id));
      const waiting = this.#existing("pending_patches", posts.map((run) => run.id));
      for (const run of posts) {
        this.#post(run, sessionId, stored.has(run.id), waiting.has(run.id));
        stored.add(run.id);
        waiting.delete(run.id);
      }
      for (const patch of patches) this.#patch(patch, stored.has(patch.id));
    });
  }

  /** Creates a run, or completes one already known: fields set by an earlier patch win. */
  post(run: RunPost, sessionId: string): void {
    this.ingest([run], [], sessionId);
  }

  /** Updates a run; a patch for a run not posted yet waits for its post. */
  patch(patch: RunPatch): void {
    this.sql.transaction(() => this.#patch(patch, this.record(patch.id) !== null));
  }

  /** Which of `ids` have a row in `table` (runs or pending_patches); 100 bound parameters at most. */
  #existing(table: "runs" | "pending_patches", ids: string[]): Set<string> {
    const found = new Set<string>();
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      for (const row of this.sql.all<{ id: string }>(`SELECT id FROM ${table} WHERE id IN (${chunk.map(() => "?").join(", ")})`, ...chunk)) found.add(row.id);
    }
    return found;
  }

  #post(run: RunPost, sessionId: string, stored: boolean, waiting: boolean): void {
    const parentTrace = run.parent_run_id && !run.trace_id && !run.dotted_order ? (this.record(run.parent_run_id)?.trace_id ?? run.parent_run_id) : null;
    const fresh = fromPost(run, sessionId, parentTrace);
    const existing = stored ? this.record(run.id) : null;
    let merged = existing ? fillMissing(existing, fresh) : fresh;
    if (waiting) {
      const pending = this.sql.all<{ patch: string }>("SELECT patch FROM pending_patches WHERE id = ?", run.id)[0];
      if (pending) merged = applyPatch(merged, JSON.parse(pending.patch) as RunPatch);
      this.sql.run("DELETE FROM pending_patches WHERE id = ?", run.id);
    }
    this.write(merged);
  }

  #patch(patch: RunPatch, stored: boolean): void {
    const existing = stored ? this.record(patch.id) : null;
    if (existing) {
      this.write(applyPatch(existing, patch));
      return;
    }
    const pending = this.sql.all<{ patch: string }>("SELECT patch FROM pending_patches WHERE id = ?", patch.id)[0];
    const merged = pending ? { ...(JSON.parse(pending.patch) as RunPatch), ...definedFields(patch) } : patch;
    this.sql.run("INSERT OR REPLACE INTO pending_patches (id, patch) VALUES (?, ?)", patch.id, JSON.stringify(merged));
  }

  get(id: string): StoredRun | null {
    const row = this.sql.all<RunRow>("SELECT * FROM runs WHERE id = ?", id)[0];
    return row ? toStoredRun(row) : null;
  }

  /** One page of runs ordered by (start_time, id), newest first unless `order` is "asc". */
  query(query: RunQuery): StoredRun[] {
    const where: string[] = [];
    const params: (string | number | null)[] = [];
    const add = (sql: string, ...values: (string | number | null)[]) => {
      where.push(sql);
      params.push(...values);
    };
    if (query.ids?.length) add(`runs.id IN (${query.ids.map(() => "?").join(", ")})`, ...query.ids);
    if (query.trace_id) add("runs.trace_id = ?", query.trace_id);
    if (query.parent_run_id) add("runs.parent_run_id = ?", query.parent_run_id);
    if (query.run_type) add("runs.run_type = ?", query.run_type);
    if (query.is_root !== undefined) add("runs.is_root = ?", query.is_root ? 1 : 0);
    if (query.error !== undefined) add(query.error ? "runs.error IS NOT NULL" : "runs.error IS NULL");
    const descending = query.order !== "asc";
    // Stored times are `toISOString()` text; bounds must have the same form to compare as text.
    let start = query.start_time ? new Date(query.start_time).toISOString() : undefined;
    let end = query.end_time ? new Date(query.end_time).toISOString() : undefined;
    // The cursor's time is the bound the index seeks to: SQLite seeks to the first plain bound and
    // only filters by the row value, so a page deep into a day would otherwise rescan the day.
    if (query.after && descending) end = end !== undefined && end < query.after.start_time ? end : query.after.start_time;
    if (query.after && !descending) start = start !== undefined && start > query.after.start_time ? start : query.after.start_time;
    if (start !== undefined) add("runs.start_time >= ?", start);
    if (end !== undefined) add("runs.start_time <= ?", end);
    for (const filter of query.filters ?? []) add(filter.sql, ...filter.params);
    if (query.after) {
      add(`(runs.start_time, runs.id) ${descending ? "<" : ">"} (?, ?)`, query.after.start_time, query.after.id);
    }
    const direction = descending ? "DESC" : "ASC";
    const sql = `SELECT * FROM runs${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY runs.start_time ${direction}, runs.id ${direction} LIMIT ?`;
    return this.sql.all<RunRow>(sql, ...params, query.limit).map(toStoredRun);
  }

  /**
   * A page of rows for bulk export, in (start_time, id) order from `after`: runs that started in
   * [start, end) and match `filter`, only the requested columns, each aggregated into one value
   * (see ExportColumn) so a page costs SQLite's time, not a JavaScript object per row.
   */
  exportPage(query: ExportQuery): ExportPage {
    const fields = query.fields.filter((field) => Object.hasOwn(EXPORT_SHAPES, field));
    // The cursor's time is the lower bound the index seeks to (see query()): without it every page
    // would scan the day from its start, and an export of a day would be quadratic in its runs.
    const lower = query.after && query.after.start_time > query.start ? query.after.start_time : query.start;
    const where = ["runs.start_time >= ?", "runs.start_time < ?"];
    const params: SqlValue[] = [lower, query.end];
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
    const [head] = this.sql.all<{ rows: number; bytes: number }>(
      `SELECT count(*) AS rows, total(size) AS bytes FROM (SELECT ${size} AS size ${matching} LIMIT ?)`,
      ...params,
      query.limit + 1,
    );
    if (head.rows === 0) return { rows: 0, more: false, last: null, columns: {} };
    let rows = Math.min(head.rows, query.limit);
    if (head.bytes > query.maxBytes) {
      // Rarely: large runs. The page ends at the first row whose preceding rows reach maxBytes.
      const [cut] = this.sql.all<{ rows: number }>(
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
    const constant: Record<string, ExportColumn> = Object.fromEntries(fields.filter((field) => EXPORT_SHAPES[field] === "null").map((field) => [field, { constant: null }]));
    const read = fields.filter((field) => !Object.hasOwn(constant, field));
    const shapes = read.map((field) => EXPORT_SHAPES[field] as Exclude<ExportShape, "null">);
    const selected = read.map((field, i) => `${exportSql(field)} AS c${i}`);
    for (;;) {
      const last = this.sql.all<ExportCursor>(`SELECT runs.start_time, runs.id ${matching} LIMIT 1 OFFSET ?`, ...params, rows - 1)[0];
      const page = (columns: Record<string, ExportColumn>): ExportPage => ({ rows, more: head.rows > rows, last: { start_time: last.start_time, id: last.id }, columns: { ...columns, ...constant } });
      if (read.length === 0) return page({});
      if (rows === 1) {
        // One row is read as it is: a single value may exceed what an aggregate can hold.
        const [one] = this.sql.all(`SELECT ${selected.join(", ")} ${matching} LIMIT 1`, ...params);
        return page(Object.fromEntries(read.map((field, i) => [field, singleValue(one[`c${i}`], shapes[i], listsAsArrays)])));
      }
      try {
        // SQLite aggregates a subquery's rows in the order it yields them: the page's (start_time, id) order.
        const [row] = this.sql.all(
          `SELECT ${shapes.map((shape, i) => `${exportAggregate(`c${i}`, shape, listsAsArrays)} AS a${i}`).join(", ")}
          FROM (SELECT ${selected.join(", ")} ${matching} LIMIT ?)`,
          ...params,
          rows,
        );
        return page(Object.fromEntries(read.map((field, i) => {
          const text = String(row[`a${i}`]);
          return [field, shapes[i] === "text" || (shapes[i] === "list" && !listsAsArrays) ? { strings: text } : { values: text }];
        })));
      } catch (error) {
        // A column of this page is too big for one value once JSON-escaped: try half the rows.
        if (!TOO_BIG.test(String(error))) throw error;
        rows = Math.ceil(rows / 2);
      }
    }
  }

  /** A condition selecting runs whose trace's root matches `filter` (`trace_filter`). */
  static traceFilter(filter: CompiledFilter): CompiledFilter {
    // Inside the subquery `runs.` names the inner table, so the compiled filter applies to the root.
    return { sql: `runs.trace_id IN (SELECT runs.id FROM runs WHERE runs.is_root = 1 AND ${filter.sql})`, params: filter.params };
  }

  /** A condition selecting runs whose trace holds any run matching `filter` (`tree_filter`). */
  static treeFilter(filter: CompiledFilter): CompiledFilter {
    return { sql: `runs.trace_id IN (SELECT runs.trace_id FROM runs WHERE ${filter.sql})`, params: filter.params };
  }

  private record(id: string): RunRecord | null {
    const row = this.sql.all<RunRow>("SELECT * FROM runs WHERE id = ?", id)[0];
    return row ? toRecord(row) : null;
  }

  private write(run: RunRecord): void {
    const stored = derive(run, this.prices);
    const metadata = (run.extra?.metadata as Json | undefined) ?? {};
    this.sql.run(
      `INSERT OR REPLACE INTO runs (id, trace_id, parent_run_id, dotted_order, session_id, name, run_type, status, error,
        start_time, end_time, latency, inputs, outputs, extra, events, metadata, tags, input_kv, output_kv, parent_run_ids,
        thread_id, reference_example_id, total_tokens, prompt_tokens, completion_tokens, prompt_cost, completion_cost, total_cost, is_root,
        execution_order, updated_at)
       VALUES (${Array(32).fill("?").join(", ")})`,
      stored.id, stored.trace_id, stored.parent_run_id, stored.dotted_order, stored.session_id, stored.name, stored.run_type,
      stored.status, stored.error, stored.start_time, stored.end_time, stored.latency,
      stringify(run.inputs), stringify(run.outputs), stringify(run.extra), stringify(run.events),
      JSON.stringify(metadata), JSON.stringify(run.tags), JSON.stringify(flattenForFilters(run.inputs ?? {})),
      JSON.stringify(flattenForFilters(run.outputs ?? {})), JSON.stringify(stored.parent_run_ids), stored.thread_id,
      stored.reference_example_id, stored.total_tokens, stored.prompt_tokens, stored.completion_tokens, stored.prompt_cost, stored.completion_cost, stored.total_cost,
      stored.is_root ? 1 : 0, stored.execution_order, new Date().toISOString(),
    );
  }
}

const stringify = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** `parentTraceId`: for old-style posts with only `parent_run_id`, the parent's trace (or the parent itself). */
function fromPost(run: RunPost, sessionId: string, parentTraceId: string | null): RunRecord {
  return {
    id: run.id,
    trace_id: run.trace_id ?? (run.dotted_order ? run.dotted_order.slice(22, 58) : (parentTraceId ?? run.id)),
    parent_run_id: run.parent_run_id ?? (run.dotted_order ? (ancestorIds(run.dotted_order).at(-1) ?? null) : null),
    dotted_order: run.dotted_order ?? null,
    session_id: sessionId,
    name: run.name,
    run_type: run.run_type,
    status: run.status ?? null,
    error: run.error ?? null,
    start_time: run.start_time,
    end_time: run.end_time ?? null,
    inputs: run.inputs ?? null,
    outputs: run.outputs ?? null,
    extra: run.extra ?? null,
    events: run.events ?? null,
    tags: run.tags ?? [],
    reference_example_id: run.reference_example_id ?? null,
  };
}

/** A repeated post only fills what the stored run lacks, so a retried create never undoes a patch. */
function fillMissing(existing: RunRecord, fresh: RunRecord): RunRecord {
  const merged: Record<string, unknown> = { ...existing };
  for (const [key, value] of Object.entries(fresh)) {
    const current = merged[key];
    if (current === null || current === undefined || (Array.isArray(current) && current.length === 0)) merged[key] = value;
  }
  return merged as RunRecord;
}

function definedFields(patch: RunPatch): Partial<RunPatch> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
}

/** Patches set what they carry; `extra.metadata` merges so a patch adding usage keeps the post's keys. */
function applyPatch(run: RunRecord, patch: RunPatch): RunRecord {
  const next: RunRecord = { ...run };
  const set = definedFields(patch);
  for (const key of ["name", "run_type", "start_time", "end_time", "error", "inputs", "outputs", "events", "tags", "reference_example_id", "status", "dotted_order"] as const) {
    if (key in set) (next as Record<string, unknown>)[key] = set[key] ?? (key === "tags" ? [] : null);
  }
  if (set.extra) {
    const metadata = { ...((run.extra?.metadata as Json | undefined) ?? {}), ...((set.extra.metadata as Json | undefined) ?? {}) };
    next.extra = { ...(run.extra ?? {}), ...set.extra, metadata };
  }
  return next;
}

function derive(run: RunRecord, prices: ModelPrices): StoredRun {
  const metadata = (run.extra?.metadata as Json | undefined) ?? {};
  const threadKey = THREAD_KEYS.find((key) => typeof metadata[key] === "string" || typeof metadata[key] === "number");
  const usage = usageOf(run.outputs, run.extra, prices);
  const latency = run.end_time ? Math.max(0, (Date.parse(run.end_time) - Date.parse(run.start_time)) / 1000) : null;
  return {
    ...run,
    status: run.status ?? (run.error ? "error" : run.end_time ? "success" : "pending"),
    latency,
    is_root: run.parent_run_id === null,
    parent_run_ids: run.dotted_order ? ancestorIds(run.dotted_order) : run.parent_run_id ? [run.parent_run_id] : [],
    thread_id: threadKey ? String(metadata[threadKey]) : null,
    ...usage,
    execution_order: run.dotted_order ? run.dotted_order.split(".").length : 1,
  };
}

function toRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    trace_id: row.trace_id,
    parent_run_id: row.parent_run_id,
    dotted_order: row.dotted_order,
    session_id: row.session_id,
    name: row.name,
    run_type: row.run_type,
    // Derived statuses are recomputed on the next write; only a client-set status is kept as given.
    status: row.status === (row.error ? "error" : row.end_time ? "success" : "pending") ? null : row.status,
    error: row.error,
    start_time: row.start_time,
    end_time: row.end_time,
    inputs: parse<Json>(row.inputs),
    outputs: parse<Json>(row.outputs),
    extra: parse<Json>(row.extra),
    events: parse<Json[]>(row.events),
    tags: parse<string[]>(row.tags) ?? [],
    reference_example_id: row.reference_example_id,
  };
}

function toStoredRun(row: RunRow): StoredRun {
  return {
    ...toRecord(row),
    status: row.status,
    latency: row.latency,
    is_root: row.is_root === 1,
    parent_run_ids: parse<string[]>(row.parent_run_ids) ?? [],
    thread_id: row.thread_id,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    prompt_cost: row.prompt_cost,
    completion_cost: row.completion_cost,
    total_cost: row.total_cost,
    execution_order: row.execution_order ?? 1,
  };
}
