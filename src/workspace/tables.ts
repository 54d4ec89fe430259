import type { PartitionKind } from "./partition.ts";

/**
 * The SQLite schema of each partition kind, as numbered steps: an object applies the steps it has not
 * yet applied when it is first used (its `_schema` table remembers how many), so a step is never
 * edited once deployed, only followed by new ones. The tables are the ones `src/db/schema.ts` declares
 * for drizzle (the same definitions serve D1 and the partitions), and keep their `workspace_id` column
 * so the queries are the same wherever a table lives.
 */
export const PARTITION_SCHEMA: Record<PartitionKind, readonly string[]> = {
  // The thread index (src/threads/search-index.ts), one shard: no workspace column, and WITHOUT ROWID
  // so a row is one b-tree entry (no separate key index) and each index below ends with thread_id,
  // which serves the search's (column, thread_id) order. Only the indexes the queries need: each
  // costs a row write per index write.
  threads: [
    `CREATE TABLE threads (
      thread_id TEXT PRIMARY KEY NOT NULL, status TEXT NOT NULL, metadata TEXT NOT NULL, "values" TEXT,
      values_indexed INTEGER DEFAULT true NOT NULL, state_bytes INTEGER DEFAULT 0 NOT NULL, config TEXT NOT NULL,
      interrupts TEXT NOT NULL, error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
      state_updated_at TEXT NOT NULL) WITHOUT ROWID`,
    "CREATE INDEX threads_created_idx ON threads (created_at)",
    "CREATE INDEX threads_updated_idx ON threads (updated_at)",
    "CREATE INDEX threads_status_idx ON threads (status, created_at)",
  ],
  store: [
    `CREATE TABLE store_items (
      workspace_id TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, ttl_minutes INTEGER, expires_at TEXT,
      PRIMARY KEY (workspace_id, namespace, key))`,
    // Only items with a TTL: the sweep and the next expiry read it, and an item without one writes no index row.
    "CREATE INDEX store_items_expires_idx ON store_items (expires_at) WHERE expires_at IS NOT NULL",
    // The semantic index (src/store/vectors.ts): an item's vectors, one per indexed field, as 4-byte
    // floats with their magnitude (computed once at write, so a search reads a vector once).
    `CREATE TABLE store_vectors (
      namespace TEXT NOT NULL, key TEXT NOT NULL, field TEXT NOT NULL, vector BLOB NOT NULL, magnitude REAL NOT NULL,
      PRIMARY KEY (namespace, key, field))`,
    // However an item goes (deleted, swept at expiry), its vectors go with it, in the same statement.
    `CREATE TRIGGER store_items_vectors_delete AFTER DELETE ON store_items BEGIN
      DELETE FROM store_vectors WHERE namespace = old.namespace AND key = old.key; END`,
    // With a Vectorize index (src/store/vectorize.ts): each vector's id there, so a match finds its
    // item, and a replaced or deleted item's ids can be deleted there. Null without the binding.
    "ALTER TABLE store_vectors ADD COLUMN vectorize_id TEXT",
    "CREATE INDEX store_vectors_vectorize_idx ON store_vectors (vectorize_id) WHERE vectorize_id IS NOT NULL",
  ],
  crons: [
    `CREATE TABLE crons (
      workspace_id TEXT NOT NULL, cron_id TEXT PRIMARY KEY NOT NULL, assistant_id TEXT NOT NULL, thread_id TEXT,
      schedule TEXT NOT NULL, timezone TEXT NOT NULL, payload TEXT NOT NULL, metadata TEXT NOT NULL,
      enabled INTEGER NOT NULL, on_run_completed TEXT, end_time TEXT, user_id TEXT, next_run_date TEXT,
      disabled_reason TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
    // A disabled cron has no next run, so the due scan and the next alarm need only the scheduled ones.
    "CREATE INDEX crons_due_idx ON crons (next_run_date) WHERE next_run_date IS NOT NULL",
    // workspace_id is the same in every row of a partition: search's default order needs created_at alone.
    "CREATE INDEX crons_created_idx ON crons (created_at)",
  ],
  traces: [
    `CREATE TABLE tracing_projects (
      id TEXT NOT NULL, workspace_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT, extra TEXT,
      reference_dataset_id TEXT, default_dataset_id TEXT, trace_tier TEXT, start_time TEXT NOT NULL,
      end_time TEXT, created_at TEXT NOT NULL, PRIMARY KEY (workspace_id, id))`,
    "CREATE UNIQUE INDEX tracing_projects_name_idx ON tracing_projects (workspace_id, name)",
    `CREATE TABLE trace_shards (
      workspace_id TEXT NOT NULL, project_id TEXT NOT NULL, day TEXT NOT NULL,
      PRIMARY KEY (workspace_id, project_id, day))`,
    `CREATE TABLE trace_feedback (
      id TEXT NOT NULL, workspace_id TEXT NOT NULL, run_id TEXT, trace_id TEXT, project_id TEXT, day TEXT,
      key TEXT NOT NULL, score REAL, value TEXT, comment TEXT, correction TEXT, feedback_source TEXT,
      feedback_group_id TEXT, comparative_experiment_id TEXT, created_at TEXT NOT NULL, modified_at TEXT NOT NULL,
      PRIMARY KEY (workspace_id, id))`,
    "CREATE INDEX trace_feedback_run_idx ON trace_feedback (workspace_id, run_id)",
    "CREATE INDEX trace_feedback_created_idx ON trace_feedback (workspace_id, created_at)",
    `CREATE INDEX trace_feedback_waiting_idx ON trace_feedback (workspace_id, created_at)
      WHERE day IS NULL AND run_id IS NOT NULL`,
    // The generations of split project-days (tracing/splits.ts, tracing/generations.ts).
    `CREATE TABLE trace_shard_generations (
      workspace_id TEXT NOT NULL, project_id TEXT NOT NULL, day TEXT NOT NULL, generation INTEGER NOT NULL,
      buckets INTEGER NOT NULL, from_ms INTEGER NOT NULL, PRIMARY KEY (workspace_id, project_id, day, generation))`,
  ],
  runs: [
    // WITHOUT ROWID: one row written per run located. `expires_at` (epoch ms): when its trace shard's
    // retention ends (null: rows moved from D1, kept).
    `CREATE TABLE trace_run_locations (
      workspace_id TEXT NOT NULL, run_id TEXT NOT NULL, project_id TEXT NOT NULL, day TEXT NOT NULL,
      expires_at INTEGER, PRIMARY KEY (workspace_id, run_id)) WITHOUT ROWID`,
    "CREATE INDEX trace_run_locations_expiry_idx ON trace_run_locations (expires_at) WHERE expires_at IS NOT NULL",
  ],
  a2a: [
    `CREATE TABLE a2a_tasks (
      task_id TEXT PRIMARY KEY NOT NULL, workspace_id TEXT NOT NULL, thread_id TEXT NOT NULL,
      assistant_id TEXT NOT NULL, created_at TEXT NOT NULL)`,
  ],
};
