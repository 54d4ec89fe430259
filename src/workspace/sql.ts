import { drizzle, type SqliteRemoteDatabase } from "drizzle-orm/sqlite-proxy";
import { MAX_PARTITION_RESULT_BYTES } from "../core/limits.ts";
import type { PartitionKind } from "./partition.ts";
import { PARTITION_SCHEMA } from "./tables.ts";

/** One statement as drizzle's SQLite proxy hands it over: `method` says what shape of rows it wants. */
export interface SqlStatement {
  sql: string;
  params: unknown[];
  method: "run" | "all" | "values" | "get";
}

/** What drizzle's proxy expects back: every row as an array of column values; `get` gives one row (or none). */
export interface SqlResult {
  rows: unknown[];
}

type Bindable = string | number | null | ArrayBuffer;

/** DO SQLite binds strings, numbers, null and ArrayBuffers; drizzle also hands over booleans and byte views. */
export function bindable(value: unknown): Bindable {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) {
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
  }
  if (value === undefined) return null;
  return value as Bindable;
}

/** The message of a partition call whose rows pass MAX_PARTITION_RESULT_BYTES. */
export const PARTITION_RESULT_TOO_LARGE = "partition result too large";

/** Whether an error (or what it wraps: drizzle keeps the driver's as `cause`) is a too-large result. */
export function isPartitionResultTooLarge(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++)
    if (at.message.includes(PARTITION_RESULT_TOO_LARGE)) return true;
  return false;
}

/** Bytes a cell takes in the answer, from above (a string crosses RPC at up to two bytes per unit). */
const cellBytes = (value: unknown): number =>
  typeof value === "string" ? 2 * value.length : value instanceof ArrayBuffer ? value.byteLength : 8;

/**
 * Runs statements on a Durable Object's SQLite, several in one transaction (all apply or none, as a
 * D1 batch), and answers rows in the proxy's shape; the rows of all of them stay within
 * MAX_PARTITION_RESULT_BYTES.
 */
export function executeStatements(
  storage: DurableObjectStorage,
  statements: readonly SqlStatement[],
  observe?: StatementObserver,
): SqlResult[] {
  let bytes = 0;
  const run = () =>
    statements.map(({ sql, params }): SqlResult => {
      const rows: unknown[][] = [];
      for (const row of storage.sql.exec(sql, ...params.map(bindable)).raw()) {
        for (const cell of row) bytes += cellBytes(cell);
        if (bytes > MAX_PARTITION_RESULT_BYTES)
          throw new Error(`${PARTITION_RESULT_TOO_LARGE}: over ${MAX_PARTITION_RESULT_BYTES} bytes`);
        rows.push(row);
      }
      return { rows };
    });
  const results = statements.length > 1 ? storage.transactionSync(run) : run();
  // Told only once the statements are applied: a batch rolled back changed nothing.
  if (observe) statements.forEach(({ sql }, at) => observe(sql, results[at].rows as unknown[][]));
  return results.map(({ rows }, at) => {
    const { method } = statements[at];
    if (method === "run") return { rows: [] };
    return { rows: method === "get" ? (rows[0] as unknown[]) : rows };
  });
}

/** Told of each statement a batch applied: its SQL and every row it answered (whatever the method). */
export type StatementObserver = (sql: string, rows: readonly unknown[][]) => void;

/** The identity of the partition an object holds, as its `_schema` rows record it. */
export interface PartitionRecord {
  kind: PartitionKind;
  workspaceId: string;
  shard: number | null;
}

/**
 * Brings a kind's tables up to date in this object (the steps it has not applied yet, in one
 * transaction) and records which partition the object holds, so its alarm knows whose work it does.
 */
export function applyPartitionSchema(storage: DurableObjectStorage, record: PartitionRecord): void {
  storage.transactionSync(() => {
    storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS _schema (kind TEXT PRIMARY KEY, steps INTEGER NOT NULL, workspace_id TEXT NOT NULL, shard INTEGER)",
    );
    const applied = storage.sql
      .exec<{ steps: number }>("SELECT steps FROM _schema WHERE kind = ?", record.kind)
      .toArray()[0]?.steps;
    const steps = PARTITION_SCHEMA[record.kind];
    if (applied === steps.length) return;
    for (const step of steps.slice(applied ?? 0)) storage.sql.exec(step);
    storage.sql.exec(
      `INSERT INTO _schema (kind, steps, workspace_id, shard) VALUES (?, ?, ?, ?)
       ON CONFLICT (kind) DO UPDATE SET steps = excluded.steps`,
      record.kind,
      steps.length,
      record.workspaceId,
      record.shard,
    );
  });
}

/** The partitions this object holds (normally one). */
export function partitionRecords(storage: DurableObjectStorage): PartitionRecord[] {
  const exists = storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_schema'").toArray();
  if (!exists.length) return [];
  return storage.sql
    .exec<{ kind: PartitionKind; workspace_id: string; shard: number | null }>(
      "SELECT kind, workspace_id, shard FROM _schema",
    )
    .toArray()
    .map((row) => ({ kind: row.kind, workspaceId: row.workspace_id, shard: row.shard }));
}

/**
 * A drizzle client over one workspace partition: the same query builders as the D1 client, each
 * query (or batch, atomically) one call to the partition's Durable Object.
 */
export type WorkspaceDatabase = SqliteRemoteDatabase;

/** Something that runs statements and answers rows: the partition's object over RPC, or the object itself. */
export type SqlExecutor = (statements: SqlStatement[]) => Promise<SqlResult[]> | SqlResult[];

export function sqlDatabase(execute: SqlExecutor): WorkspaceDatabase {
  return drizzle(
    async (sql, params, method) => (await execute([{ sql, params, method }]))[0],
    async (statements) => execute(statements),
  );
}
