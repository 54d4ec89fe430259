/**
 * The run table of a trace shard (one SQLite Durable Object per workspace, project and UTC day).
 * Filters compile against these columns (see filter/compile.ts). Small columns come first and the
 * large JSON ones last: in a row big enough to overflow its page, SQLite follows the overflow
 * pages only to reach columns stored after them, so reading the small columns stays cheap.
 */
export const RUNS_TABLE = `CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  parent_run_id TEXT,
  dotted_order TEXT,
  session_id TEXT NOT NULL,
  name TEXT NOT NULL,
  run_type TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  start_time TEXT NOT NULL,
  end_time TEXT,
  latency REAL,
  tags TEXT NOT NULL DEFAULT '[]',
  parent_run_ids TEXT NOT NULL DEFAULT '[]',
  thread_id TEXT,
  reference_example_id TEXT,
  total_tokens INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  prompt_cost REAL,
  completion_cost REAL,
  total_cost REAL,
  is_root INTEGER NOT NULL,
  execution_order INTEGER,
  updated_at TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  extra TEXT,
  events TEXT,
  input_kv TEXT NOT NULL DEFAULT '{}',
  output_kv TEXT NOT NULL DEFAULT '{}',
  inputs TEXT,
  outputs TEXT
)`;

/** UTF-8 bytes of a run's text columns of unbounded size, apart from inputs and outputs. */
export const RUN_TEXT_BYTES = ["name", "dotted_order", "error", "extra", "events", "tags", "parent_run_ids"]
  .map((c) => `coalesce(octet_length(${c}), 0)`)
  .join(" + ");
/** UTF-8 bytes of a run's inputs and outputs. */
export const RUN_PAYLOAD_BYTES = ["inputs", "outputs"].map((c) => `coalesce(octet_length(${c}), 0)`).join(" + ");

/**
 * Pages walk (start_time, id) in either direction; traces are read by (trace_id, dotted_order).
 * The page index also holds each run's text sizes, so an export page finds where its byte limit
 * falls from the index alone. Every index costs each ingested run a B-tree insert, so there are no
 * others.
 */
export const RUNS_INDEXES = [
  `CREATE INDEX IF NOT EXISTS runs_by_start ON runs (start_time, id, ${RUN_TEXT_BYTES}, ${RUN_PAYLOAD_BYTES})`,
  "CREATE INDEX IF NOT EXISTS runs_by_trace ON runs (trace_id, dotted_order)",
];

/** Patches that arrived before their post; merged into it when the post lands. */
export const PENDING_PATCHES_TABLE = `CREATE TABLE IF NOT EXISTS pending_patches (
  id TEXT PRIMARY KEY,
  patch TEXT NOT NULL
)`;

/** Files attached to runs, in chunks: a Durable Object SQLite value holds at most 2 MB. */
export const ATTACHMENTS_TABLE = `CREATE TABLE IF NOT EXISTS attachments (
  run_id TEXT NOT NULL,
  name TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  -- Null for an empty file: some SQLite bindings turn an empty byte array into NULL.
  data BLOB,
  PRIMARY KEY (run_id, name, chunk)
)`;

type Scalar = string | number | boolean | null;

/**
 * Inputs or outputs flattened for `input_key` / `input_value` filters: every dot-path to a scalar
 * (array indices dropped, as the UI's key filters name them) with the values found there, e.g.
 * `{"messages.content": ["hi", "hello"]}`.
 */
export function flattenForFilters(value: unknown): Record<string, Scalar[]> {
  const flat: Record<string, Scalar[]> = {};
  const walk = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, path);
    } else if (node !== null && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) walk(child, path ? `${path}.${key}` : key);
    } else if (path) {
      (flat[path] ??= []).push(node as Scalar);
    }
  };
  walk(value, "");
  return flat;
}
