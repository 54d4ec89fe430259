// Inside the thread's Durable Object (threads/object/): the checkpoint tables in the object's SQLite.
import type { SqlStore } from "../../db/sql.ts";

/**
 * The tables of the checkpoint saver (checkpointer.ts). Layout (as the Postgres saver): `checkpoints`
 * holds each checkpoint without its channel values, `checkpoint_blobs` holds every channel value once
 * per (channel, version), so a channel that did not change is not stored again, and
 * `checkpoint_writes` holds the pending writes of each task. A serialized value above 1 MiB is split
 * across rows (`chunk`), because DO SQLite caps a row at 2 MB.
 */

// WITHOUT ROWID: a row lives in its primary key's b-tree, so an insert writes one row, not a row and
// its key's separate index entry (Cloudflare bills each). Tables made before keep their layout.
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT NOT NULL,
    checkpoint BLOB NOT NULL,
    channel_versions TEXT NOT NULL DEFAULT '{}',
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
  ) WITHOUT ROWID`,
  // list() across namespaces (no checkpoint_ns in the config) pages by checkpoint_id.
  `CREATE INDEX IF NOT EXISTS checkpoints_thread_id ON checkpoints (thread_id, checkpoint_id, checkpoint_ns)`,
  `CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    chunk INTEGER NOT NULL DEFAULT 0,
    type TEXT NOT NULL,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version, chunk)
  ) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    chunk INTEGER NOT NULL DEFAULT 0,
    channel TEXT NOT NULL,
    type TEXT NOT NULL,
    value BLOB,
    task_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, chunk)
  ) WITHOUT ROWID`,
];
const SCHEMA_OBJECTS = ["checkpoints", "checkpoints_thread_id", "checkpoint_blobs", "checkpoint_writes"];

/** Each checkpoint table's primary key, in order: what a reader pages by (the tables have no rowid). */
export const CHECKPOINT_TABLE_KEYS = {
  checkpoints: ["thread_id", "checkpoint_ns", "checkpoint_id"],
  checkpoint_blobs: ["thread_id", "checkpoint_ns", "channel", "version", "chunk"],
  checkpoint_writes: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "chunk"],
} as const;

/** True when every checkpoint table and index exists. Reads nothing but `sqlite_master`. */
export function hasCheckpointSchema(sql: SqlStore): boolean {
  const [row] = sql.all<{ n: number }>(
    `SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN (${SCHEMA_OBJECTS.map(() => "?").join(", ")})`,
    ...SCHEMA_OBJECTS,
  );
  return row?.n === SCHEMA_OBJECTS.length;
}

/** Creates the checkpoint tables (IF NOT EXISTS: idempotent). */
export function createCheckpointSchema(sql: SqlStore): void {
  for (const statement of SCHEMA) sql.run(statement);
}

export type CheckpointRow = {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Uint8Array | ArrayBuffer;
  channel_versions: string;
  metadata: string;
};

export type BlobRow = {
  channel: string;
  version: string;
  chunk: number;
  type: string;
  value: Uint8Array | ArrayBuffer | null;
};

export type WriteRow = {
  checkpoint_id: string;
  task_id: string;
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array | ArrayBuffer | null;
};

/** The columns of a checkpoint row, as readers select them. */
export const CHECKPOINT_COLUMNS =
  "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, channel_versions, metadata";
