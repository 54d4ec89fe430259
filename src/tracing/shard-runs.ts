import { chunked } from "../core/batches.ts";
import { splitBytes } from "../db/chunks.ts";
import { type SqlStore, type SqlValue, toBytes } from "../db/sql.ts";
import { MAX_BOUND_PARAMS, placeholders } from "../db/sql-batch.ts";
import { FIRST_TOKEN_TIME_SQL } from "./export-page.ts";
import type { CompiledFilter } from "./filter/compile.ts";
import { ancestorIds, type ModelPrices, usageOf } from "./run-input.ts";
import type { RunPatch, RunPost, TracingRun } from "./schemas.ts";
import { createFeedbackTable } from "./shard-feedback.ts";
import {
  ATTACHMENTS_TABLE,
  flattenForFilters,
  PENDING_PATCHES_TABLE,
  RUNS_INDEXES,
  RUNS_TABLE,
} from "./shard-schema.ts";
import { endsBeforeStart, secondsBetween, storedForm, toStoredTime } from "./times.ts";

/**
 * The runs of one trace shard (workspace × project × UTC day): idempotent posts and patches in any
 * order, derived fields computed on every write, and keyset-paged queries with compiled filters.
 * Plain storage code over `SqlStore`, so the TraceShardDO stays thin and Node tests run it as is.
 */

type Json = Record<string, unknown>;

/** What the shard keeps of a run; everything else is derived from it on write. */
type TracedRunRecord = {
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

/** A patch a shard did not apply, and why. */
export type RefusedPatch = { id: string; detail: string };

/**
 * A run as the shard answers `GET /runs/{id}` and `POST /runs/query`: a TracingRun (schemas.ts)
 * before the way out gives it `app_path`, `feedback_stats` and `s3_urls` and makes an unknown
 * `dotted_order` a string (run-projection.ts).
 */
export type StoredTracedRun = Omit<TracingRun, "dotted_order" | "app_path" | "feedback_stats" | "s3_urls"> & {
  dotted_order: string | null;
};

type TracedRunRow = {
  id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  session_id: string;
  name: string;
  run_type: string;
  status: string;
  error: string | null;
  start_time: string;
  end_time: string | null;
  latency: number | null;
  inputs: string | null;
  outputs: string | null;
  extra: string | null;
  events: string | null;
  metadata: string;
  tags: string;
  parent_run_ids: string;
  thread_id: string | null;
  reference_example_id: string | null;
  total_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  is_root: number;
  execution_order: number | null;
  updated_at: string;
  /** Only in rows read with RUN_COLUMNS. */
  first_token_time?: string | null;
};

export type TracedRunQuery = {
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

/** What reads of whole runs select: the stored columns and the derived first_token_time. */
const RUN_COLUMNS = `runs.*, ${FIRST_TOKEN_TIME_SQL} AS first_token_time`;

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** Metadata keys the langsmith SDKs look a run's conversation thread up by (LangGraph sets `thread_id`). */
const THREAD_KEYS = ["thread_id", "session_id", "conversation_id"];

export class ShardRuns {
  constructor(
    private readonly sql: SqlStore,
    /** Prices per model for runs whose usage carries no costs. */
    private readonly prices: ModelPrices = {},
  ) {
    sql.run(RUNS_TABLE);
    for (const index of RUNS_INDEXES) sql.run(index);
    sql.run(PENDING_PATCHES_TABLE);
    sql.run(ATTACHMENTS_TABLE);
    createFeedbackTable(sql);
  }

  /** Stores (or replaces) a run's attachment. Attachments may arrive before their run. */
  putAttachment(attachment: { run_id: string; name: string; mime_type: string; data: Uint8Array }): void {
    this.sql.transaction(() => {
      this.sql.run("DELETE FROM attachments WHERE run_id = ? AND name = ?", attachment.run_id, attachment.name);
      const size = attachment.data.byteLength;
      for (const [chunk, data] of splitBytes(attachment.data).entries()) {
        this.sql.run(
          "INSERT INTO attachments (run_id, name, mime_type, size, chunk, data) VALUES (?, ?, ?, ?, ?, ?)",
          attachment.run_id,
          attachment.name,
          attachment.mime_type,
          size,
          chunk,
          data,
        );
      }
    });
  }

  /** A run's attachments without their bytes. */
  attachmentsOf(runId: string): { name: string; mime_type: string; size: number }[] {
    return this.sql.all<{ name: string; mime_type: string; size: number }>(
      "SELECT name, mime_type, size FROM attachments WHERE run_id = ? AND chunk = 0 ORDER BY name",
      runId,
    );
  }

  /** One attachment with its bytes, or null. */
  attachment(runId: string, name: string): { mime_type: string; data: Uint8Array } | null {
    const chunks = this.sql.all<{ mime_type: string; size: number; data: SqlValue }>(
      "SELECT mime_type, size, data FROM attachments WHERE run_id = ? AND name = ? ORDER BY chunk",
      runId,
      name,
    );
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
  ingest(posts: RunPost[], patches: RunPatch[], sessionId: string): RefusedPatch[] {
    return this.sql.transaction(() => {
      const stored = this.#existing(
        "runs",
        [...posts, ...patches].map((run) => run.id),
      );
      const waiting = this.#existing(
        "pending_patches",
        posts.map((run) => run.id),
      );
      for (const run of posts) {
        this.#post(run, sessionId, stored.has(run.id), waiting.has(run.id));
        stored.add(run.id);
        waiting.delete(run.id);
      }
      return patches.flatMap((patch) => this.#patch(patch, stored.has(patch.id)) ?? []);
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

  /** Which of `ids` have a row in `table` (runs or pending_patches); MAX_BOUND_PARAMS ids per statement. */
  #existing(table: "runs" | "pending_patches", ids: string[]): Set<string> {
    const found = new Set<string>();
    for (const chunk of chunked(ids, MAX_BOUND_PARAMS)) {
      for (const row of this.sql.all<{ id: string }>(
        `SELECT id FROM ${table} WHERE id IN (${placeholders(chunk.length)})`,
        ...chunk,
      ))
        found.add(row.id);
    }
    return found;
  }

  #post(run: RunPost, sessionId: string, stored: boolean, waiting: boolean): void {
    const parentTrace =
      run.parent_run_id && !run.trace_id && !run.dotted_order
        ? (this.record(run.parent_run_id)?.trace_id ?? run.parent_run_id)
        : null;
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

  /** Applies a patch, or refuses it (and changes nothing) when it would end the run before its start. */
  #patch(patch: RunPatch, stored: boolean): RefusedPatch | null {
    const existing = stored ? this.record(patch.id) : null;
    if (existing) {
      const next = applyPatch(existing, patch);
      if (next.end_time && endsBeforeStart(next.start_time, next.end_time))
        return { id: patch.id, detail: `end_time: ${next.end_time} is before start_time ${next.start_time}` };
      this.write(next);
      return null;
    }
    const pending = this.sql.all<{ patch: string }>("SELECT patch FROM pending_patches WHERE id = ?", patch.id)[0];
    const merged = pending ? { ...(JSON.parse(pending.patch) as RunPatch), ...definedFields(patch) } : patch;
    this.sql.run("INSERT OR REPLACE INTO pending_patches (id, patch) VALUES (?, ?)", patch.id, JSON.stringify(merged));
    return null;
  }

  /** A run's trace_id and dotted_order, or null when the run is unknown or has no dotted_order. */
  lineage(id: string): { trace_id: string; dotted_order: string } | null {
    const row = this.sql.all<{ trace_id: string; dotted_order: string | null }>(
      "SELECT trace_id, dotted_order FROM runs WHERE id = ?",
      id,
    )[0];
    return row?.dotted_order ? { trace_id: row.trace_id, dotted_order: row.dotted_order } : null;
  }

  get(id: string): StoredTracedRun | null {
    const row = this.sql.all<TracedRunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`, id)[0];
    return row ? toStoredTracedRun(row) : null;
  }

  /** One page of runs ordered by (start_time, id), newest first unless `order` is "asc". */
  query(query: TracedRunQuery): StoredTracedRun[] {
    return [...this.rows(query)];
  }

  /** The runs of a page one by one, read from SQLite as they are consumed. */
  *rows(query: TracedRunQuery): Generator<StoredTracedRun> {
    const { where, params } = this.conditions(query);
    const descending = query.order !== "asc";
    const direction = descending ? "DESC" : "ASC";
    const sql = `SELECT ${RUN_COLUMNS} FROM runs${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY runs.start_time ${direction}, runs.id ${direction} LIMIT ?`;
    for (const row of this.sql.iterate<TracedRunRow>(sql, ...params, query.limit)) yield toStoredTracedRun(row);
  }

  /** The WHERE conditions of a query (without its limit), shared by pages and stats. */
  conditions(query: Omit<TracedRunQuery, "limit">): { where: string[]; params: (string | number | null)[] } {
    const where: string[] = [];
    const params: (string | number | null)[] = [];
    const add = (sql: string, ...values: (string | number | null)[]) => {
      where.push(sql);
      params.push(...values);
    };
    // One JSON parameter for any number of ids (SQLite binds at most 100 per statement).
    if (query.ids?.length) add("runs.id IN (SELECT value FROM json_each(?))", JSON.stringify(query.ids));
    if (query.trace_id) add("runs.trace_id = ?", query.trace_id);
    if (query.parent_run_id) add("runs.parent_run_id = ?", query.parent_run_id);
    if (query.run_type) add("runs.run_type = ?", query.run_type);
    if (query.is_root !== undefined) add("runs.is_root = ?", query.is_root ? 1 : 0);
    if (query.error !== undefined) add(query.error ? "runs.error IS NOT NULL" : "runs.error IS NULL");
    const descending = query.order !== "asc";
    // Stored times are microsecond text (times.ts); bounds must have the same form to compare as text.
    let start = query.start_time ? toStoredTime(query.start_time) : undefined;
    let end = query.end_time ? toStoredTime(query.end_time) : undefined;
    // The cursor's time is the bound the index seeks to: SQLite seeks to the first plain bound and
    // only filters by the row value, so a page deep into a day would otherwise rescan the day.
    if (query.after && descending)
      end = end !== undefined && end < query.after.start_time ? end : query.after.start_time;
    if (query.after && !descending)
      start = start !== undefined && start > query.after.start_time ? start : query.after.start_time;
    if (start !== undefined) add("runs.start_time >= ?", start);
    if (end !== undefined) add("runs.start_time <= ?", end);
    for (const filter of query.filters ?? []) add(filter.sql, ...filter.params);
    if (query.after) {
      add(`(runs.start_time, runs.id) ${descending ? "<" : ">"} (?, ?)`, query.after.start_time, query.after.id);
    }
    return { where, params };
  }

  /** A condition selecting runs whose trace's root matches `filter` (`trace_filter`). */
  static traceFilter(filter: CompiledFilter): CompiledFilter {
    // Inside the subquery `runs.` names the inner table, so the compiled filter applies to the root.
    return {
      sql: `runs.trace_id IN (SELECT runs.id FROM runs WHERE runs.is_root = 1 AND ${filter.sql})`,
      params: filter.params,
    };
  }

  /** A condition selecting runs whose trace holds any run matching `filter` (`tree_filter`). */
  static treeFilter(filter: CompiledFilter): CompiledFilter {
    return { sql: `runs.trace_id IN (SELECT runs.trace_id FROM runs WHERE ${filter.sql})`, params: filter.params };
  }

  private record(id: string): TracedRunRecord | null {
    const row = this.sql.all<TracedRunRow>("SELECT * FROM runs WHERE id = ?", id)[0];
    return row ? toRecord(row) : null;
  }

  private write(run: TracedRunRecord): void {
    const stored = derive(run, this.prices);
    const metadata = (run.extra?.metadata as Json | undefined) ?? {};
    this.sql.run(
      `INSERT OR REPLACE INTO runs (id, trace_id, parent_run_id, dotted_order, session_id, name, run_type, status, error,
        start_time, end_time, latency, inputs, outputs, extra, events, metadata, tags, input_kv, output_kv, parent_run_ids,
        thread_id, reference_example_id, total_tokens, prompt_tokens, completion_tokens, prompt_cost, completion_cost, total_cost, is_root,
        execution_order, updated_at)
       VALUES (${placeholders(32)})`,
      stored.id,
      stored.trace_id,
      stored.parent_run_id,
      stored.dotted_order,
      stored.session_id,
      stored.name,
      stored.run_type,
      stored.status,
      stored.error,
      stored.start_time,
      stored.end_time,
      stored.latency,
      stringify(run.inputs),
      stringify(run.outputs),
      stringify(run.extra),
      stringify(run.events),
      JSON.stringify(metadata),
      JSON.stringify(run.tags),
      JSON.stringify(flattenForFilters(run.inputs ?? {})),
      JSON.stringify(flattenForFilters(run.outputs ?? {})),
      JSON.stringify(stored.parent_run_ids),
      stored.thread_id,
      stored.reference_example_id,
      stored.total_tokens,
      stored.prompt_tokens,
      stored.completion_tokens,
      stored.prompt_cost,
      stored.completion_cost,
      stored.total_cost,
      stored.is_root ? 1 : 0,
      stored.execution_order,
      new Date().toISOString(),
    );
  }
}

const stringify = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** `parentTraceId`: for old-style posts with only `parent_run_id`, the parent's trace (or the parent itself). */
function fromPost(run: RunPost, sessionId: string, parentTraceId: string | null): TracedRunRecord {
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
function fillMissing(existing: TracedRunRecord, fresh: TracedRunRecord): TracedRunRecord {
  const merged: Record<string, unknown> = { ...existing };
  for (const [key, value] of Object.entries(fresh)) {
    const current = merged[key];
    if (current === null || current === undefined || (Array.isArray(current) && current.length === 0))
      merged[key] = value;
  }
  return merged as TracedRunRecord;
}

function definedFields(patch: RunPatch): Partial<RunPatch> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
}

/** Patches set what they carry; `extra.metadata` merges so a patch adding usage keeps the post's keys. */
function applyPatch(run: TracedRunRecord, patch: RunPatch): TracedRunRecord {
  const next: TracedRunRecord = { ...run };
  const set = definedFields(patch);
  for (const key of [
    "name",
    "run_type",
    "start_time",
    "end_time",
    "error",
    "inputs",
    "outputs",
    "events",
    "tags",
    "reference_example_id",
    "status",
    "dotted_order",
  ] as const) {
    if (key in set) (next as Record<string, unknown>)[key] = set[key] ?? (key === "tags" ? [] : null);
  }
  if (set.extra) {
    const metadata = {
      ...((run.extra?.metadata as Json | undefined) ?? {}),
      ...((set.extra.metadata as Json | undefined) ?? {}),
    };
    next.extra = { ...(run.extra ?? {}), ...set.extra, metadata };
  }
  return next;
}

function derive(run: TracedRunRecord, prices: ModelPrices): Omit<StoredTracedRun, "first_token_time"> {
  const metadata = (run.extra?.metadata as Json | undefined) ?? {};
  const threadKey = THREAD_KEYS.find((key) => typeof metadata[key] === "string" || typeof metadata[key] === "number");
  const usage = usageOf(run.outputs, run.extra, prices);
  const latency = run.end_time ? secondsBetween(run.start_time, run.end_time) : null;
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

function toRecord(row: TracedRunRow): TracedRunRecord {
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
    start_time: storedForm(row.start_time),
    end_time: row.end_time === null ? null : storedForm(row.end_time),
    inputs: parse<Json>(row.inputs),
    outputs: parse<Json>(row.outputs),
    extra: parse<Json>(row.extra),
    events: parse<Json[]>(row.events),
    tags: parse<string[]>(row.tags) ?? [],
    reference_example_id: row.reference_example_id,
  };
}

function toStoredTracedRun(row: TracedRunRow): StoredTracedRun {
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
    first_token_time: row.first_token_time ?? null,
  };
}
