// Inside the thread's Durable Object (threads/object/): the thread record, the one row the object keeps about its thread.
import { utf8Length } from "../../core/bytes.ts";
import { MAX_THREAD_ROW_STATE_BYTES } from "../../core/limits.ts";
import type { SqlStore } from "../../db/sql.ts";
import type { CheckpointerManifest } from "../../deployment/manifest.ts";
import type { ThreadJson, ThreadStatus, TtlSetting, TtlStrategy } from "../types.ts";

/** The thread row a ThreadDO keeps about itself (one row: a DO holds exactly one thread). */
export interface ThreadRecord {
  threadId: string;
  workspaceId: string;
  createdAt: string;
  updatedAt: string;
  stateUpdatedAt: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  /**
   * The config the thread's latest run started with (assistant's, then thread's, then request's),
   * without server-set ids. Shown by the API, and the config graph factories are built with for the
   * thread's state reads and updates.
   */
  config: Record<string, unknown>;
  /**
   * What run requests set, merged: the thread's layer in its next run's config. Kept apart from
   * `config` so a patched assistant wins over values an earlier run copied from it.
   */
  requestConfig: Record<string, unknown>;
  /** null until the thread has state. */
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown[]>;
  error: string | null;
  ttl: TtlSetting | null;
  /** The D1 index has not caught up with this row yet (the alarm retries, unless `indexError`). */
  indexDirty: boolean;
  /**
   * Why D1 refused this row for good (see `isPermanentWriteError`): the index stays stale and the
   * alarm does not retry until the record changes (each save clears it and tries again).
   */
  indexError?: string | null;
  /** The short-lived thread of a stateless run: never indexed, deleted when its run ends. */
  temporary?: boolean;
  /**
   * `values` and `interrupts` were too large for the row: they live only in the latest checkpoint
   * (the row keeps no values, and interrupts as ids only), and reads take them from there.
   */
  valuesOversize?: boolean;
}

/**
 * Rows are capped at 2 MB in production (D1 and Durable Object SQLite): the row's values and
 * interrupts together take at most MAX_THREAD_ROW_STATE_BYTES, and less when the other columns leave
 * less room under ROW_BYTES; larger state stays in the (chunked) checkpoints only.
 */
const ROW_BYTES = 1_900_000;

/** A thread's first record, idle and without state: created `at`, with what its creator sets. */
/**
 * A new thread's record. The one place a thread gets its TTL at creation: the one the request gave, else
 * the deployment's default (langgraph.json `checkpointer.ttl`, see `defaultThreadTtl`), counted like any
 * TTL from the thread's last update.
 */
export function newThreadRecord(
  fields: Pick<ThreadRecord, "threadId" | "workspaceId" | "metadata" | "temporary"> & { ttl?: TtlSetting },
  at: string,
  defaultTtl: TtlSetting | null,
): ThreadRecord {
  return {
    threadId: fields.threadId,
    workspaceId: fields.workspaceId,
    createdAt: at,
    updatedAt: at,
    stateUpdatedAt: at,
    metadata: fields.metadata,
    status: "idle",
    config: {},
    requestConfig: {},
    values: null,
    interrupts: {},
    error: null,
    ttl: fields.ttl ?? defaultTtl,
    indexDirty: false,
    // Only a run's thread says whether it is temporary.
    ...(fields.temporary === undefined ? {} : { temporary: fields.temporary }),
  };
}

/**
 * The TTL of threads created without one: langgraph.json `checkpointer.ttl` `default_ttl` with its
 * `strategy`; none when the deployment sets no `default_ttl`. `sweep_interval_minutes` and `sweep_limit`
 * play no part: each thread expires on its own Durable Object alarm at its expiry, not on a sweep.
 */
export function defaultThreadTtl(settings: CheckpointerManifest): TtlSetting | null {
  const ttl = settings.ttl;
  return ttl && ttl.defaultTtlMinutes !== null ? { ttl: ttl.defaultTtlMinutes, strategy: ttl.strategy } : null;
}

/** Interrupts as their ids only: what the row keeps of interrupts too large for it (see `pendingInterruptIds`). */
export function interruptIds(interrupts: Record<string, unknown[]>): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(interrupts).map(([task, list]) => [
      task,
      list.map((entry) =>
        entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string"
          ? { id: (entry as { id: string }).id }
          : {},
      ),
    ]),
  );
}

/**
 * The row's values and interrupts as JSON within `budget` bytes: whole, or (oversize) without values
 * and with interrupts as ids only. A record read back oversize holds null values: it stays oversize.
 */
export function stateColumns(
  record: Pick<ThreadRecord, "values" | "interrupts" | "valuesOversize">,
  budget: number,
): { values: string | null; interrupts: string; oversize: boolean } {
  const values = record.values === null ? null : JSON.stringify(record.values);
  const interrupts = JSON.stringify(record.interrupts);
  const bytes = (values === null ? 0 : utf8Length(values)) + utf8Length(interrupts);
  const oversize = (values === null && (record.valuesOversize ?? false)) || bytes > budget;
  if (!oversize) return { values, interrupts, oversize };
  return { values: null, interrupts: JSON.stringify(interruptIds(record.interrupts)), oversize };
}

interface ThreadRow {
  thread_id: string;
  workspace_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: string;
  status: ThreadStatus;
  config: string;
  request_config: string | null;
  state_values: string | null;
  interrupts: string;
  error: string | null;
  ttl_minutes: number | null;
  ttl_strategy: TtlStrategy | null;
  index_dirty: number;
  temporary: number;
  values_oversize: number;
  index_error: string | null;
  [column: string]: string | number | null;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS thread (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  thread_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  state_updated_at TEXT NOT NULL,
  metadata TEXT NOT NULL,
  status TEXT NOT NULL,
  config TEXT NOT NULL,
  state_values TEXT,
  interrupts TEXT NOT NULL,
  error TEXT,
  ttl_minutes REAL,
  ttl_strategy TEXT,
  index_dirty INTEGER NOT NULL DEFAULT 0,
  temporary INTEGER NOT NULL DEFAULT 0,
  values_oversize INTEGER NOT NULL DEFAULT 0,
  request_config TEXT,
  index_error TEXT
)`;

/** Columns added after the first release: a thread stored before them gets them on first use. */
const ADDED_COLUMNS = [
  { name: "request_config", definition: "request_config TEXT" },
  { name: "index_error", definition: "index_error TEXT" },
];

export class ThreadRecords {
  #schemaReady = false;
  /**
   * The record as last read or written (null: no thread; undefined: not read yet). Only this class
   * writes the thread table, so the copy stays true; a run reads the record a dozen times. Its nested
   * values are shared between readers, who replace fields rather than mutate them.
   */
  #cached: ThreadRecord | null | undefined;
  /** The thread table was found missing (so the next write creates it whole). */
  #tableAbsent = false;

  constructor(private readonly sql: SqlStore) {}

  /** Reads never create tables: a lookup of a thread that does not exist leaves the DO empty. */
  read(): ThreadRecord | null {
    if (this.#cached === undefined) this.#cached = this.#load();
    return this.#cached && { ...this.#cached };
  }

  #load(): ThreadRecord | null {
    if (!this.#schemaReady) {
      const exists = this.sql.all("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'thread'");
      if (exists.length === 0) {
        this.#tableAbsent = true;
        return null;
      }
      this.#addMissingColumns();
      this.#schemaReady = true;
    }
    const row = this.sql.all<ThreadRow>("SELECT * FROM thread WHERE singleton = 1")[0];
    return row ? fromRow(row) : null;
  }

  write(record: ThreadRecord): void {
    // Should the write throw, the next read goes to storage.
    this.#cached = undefined;
    if (!this.#schemaReady) {
      this.sql.run(SCHEMA);
      // A table this call just created has every column already.
      if (!this.#tableAbsent) this.#addMissingColumns();
      this.#schemaReady = true;
    }
    const metadata = JSON.stringify(record.metadata);
    const config = JSON.stringify(record.config);
    const requestConfig = JSON.stringify(record.requestConfig);
    const others =
      utf8Length(metadata) + utf8Length(config) + utf8Length(requestConfig) + utf8Length(record.error ?? "");
    const state = stateColumns(record, Math.max(0, Math.min(MAX_THREAD_ROW_STATE_BYTES, ROW_BYTES - others)));
    record.valuesOversize = state.oversize;
    const row: ThreadRow = {
      thread_id: record.threadId,
      workspace_id: record.workspaceId,
      created_at: record.createdAt,
      updated_at: record.updatedAt,
      state_updated_at: record.stateUpdatedAt,
      metadata,
      status: record.status,
      config,
      request_config: requestConfig,
      state_values: state.values,
      interrupts: state.interrupts,
      error: record.error,
      ttl_minutes: record.ttl?.ttl ?? null,
      ttl_strategy: record.ttl?.strategy ?? null,
      index_dirty: record.indexDirty ? 1 : 0,
      temporary: record.temporary ? 1 : 0,
      values_oversize: state.oversize ? 1 : 0,
      index_error: record.indexError ?? null,
    };
    const columns = Object.keys(row);
    this.sql.run(
      `INSERT OR REPLACE INTO thread (singleton, ${columns.join(", ")}) VALUES (1${", ?".repeat(columns.length)})`,
      ...Object.values(row),
    );
    // Exactly what a read of the row returns (JSON values, not the caller's objects).
    this.#cached = fromRow(row);
  }

  #addMissingColumns(): void {
    const [table] = this.sql.all<{ sql: string }>(
      "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'thread'",
    );
    for (const column of ADDED_COLUMNS) {
      if (table && !new RegExp(`\\b${column.name}\\b`).test(table.sql))
        this.sql.run(`ALTER TABLE thread ADD COLUMN ${column.definition}`);
    }
  }

  /** Clears the index flag, unless the record changed (or was deleted) since `updatedAt`. */
  markIndexed(updatedAt: string): void {
    const current = this.read();
    if (!current) return;
    this.sql.run("UPDATE thread SET index_dirty = 0 WHERE singleton = 1 AND updated_at = ?", updatedAt);
    if (current.updatedAt === updatedAt && this.#cached) this.#cached = { ...this.#cached, indexDirty: false };
  }

  /** Records that D1 refused the row for good, unless the record changed (or was deleted) since `updatedAt`. */
  markIndexFailed(updatedAt: string, reason: string): void {
    const current = this.read();
    if (!current) return;
    this.sql.run("UPDATE thread SET index_error = ? WHERE singleton = 1 AND updated_at = ?", reason, updatedAt);
    if (current.updatedAt === updatedAt && this.#cached) this.#cached = { ...this.#cached, indexError: reason };
  }

  /** Forgets the schema check and the cached record after the DO's storage was wiped. */
  reset(): void {
    this.#schemaReady = false;
    this.#cached = undefined;
    this.#tableAbsent = false;
  }
}

function fromRow(row: ThreadRow): ThreadRecord {
  return {
    threadId: row.thread_id,
    workspaceId: row.workspace_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    stateUpdatedAt: row.state_updated_at,
    metadata: JSON.parse(row.metadata),
    status: row.status,
    config: JSON.parse(row.config),
    // A thread stored before `request_config` kept only the request layer, in `config`.
    requestConfig: JSON.parse(row.request_config ?? row.config),
    values: row.state_values === null ? null : JSON.parse(row.state_values),
    interrupts: JSON.parse(row.interrupts),
    error: row.error,
    ttl: row.ttl_minutes === null ? null : { ttl: row.ttl_minutes, strategy: row.ttl_strategy ?? "delete" },
    indexDirty: row.index_dirty === 1,
    temporary: row.temporary === 1,
    valuesOversize: row.values_oversize === 1,
    indexError: row.index_error ?? null,
  };
}

export function ttlExpiry(record: ThreadRecord): number | null {
  return record.ttl ? Date.parse(record.updatedAt) + record.ttl.ttl * 60_000 : null;
}

export function threadJson(record: ThreadRecord, options: { includeTtl?: boolean } = {}): ThreadJson {
  const json: ThreadJson = {
    thread_id: record.threadId,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    state_updated_at: record.stateUpdatedAt,
    metadata: record.metadata,
    status: record.status,
    config: record.config,
    values: record.values ?? {},
    interrupts: record.interrupts,
    error: record.error,
  };
  if (options.includeTtl) {
    const expiry = ttlExpiry(record);
    json.ttl =
      record.ttl && expiry !== null
        ? { strategy: record.ttl.strategy, ttl_minutes: record.ttl.ttl, expires_at: new Date(expiry).toISOString() }
        : null;
  }
  return json;
}
