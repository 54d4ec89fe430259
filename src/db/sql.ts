/**
 * The slice of SQLite the thread storage needs. Durable Object SQLite implements it in the Worker
 * (`durableObjectSql`); tests back it with node:sqlite so the same code runs LangGraph's checkpointer
 * contract suite in Node.
 */
export type SqlValue = string | number | null | Uint8Array | ArrayBuffer;
export type SqlRow = Record<string, SqlValue>;

export interface SqlStore {
  /** Every row of a query. */
  all<T extends SqlRow = SqlRow>(query: string, ...params: SqlValue[]): T[];
  /** The rows of a query one at a time, so a reader can stop early without materialising the rest. */
  iterate<T extends SqlRow = SqlRow>(query: string, ...params: SqlValue[]): Iterable<T>;
  /** Runs a statement for its effect. */
  run(query: string, ...params: SqlValue[]): void;
  /** Runs `fn` atomically: all of its statements apply, or none. `fn` must not await. */
  transaction<T>(fn: () => T): T;
}

/**
 * The part of `DurableObjectStorage` the adapter uses. Declared structurally so this file has no
 * Workers-only types and also type-checks (and runs in tests) under Node.
 */
export interface DurableObjectSqlStorage {
  sql: { exec(query: string, ...bindings: DurableObjectSqlValue[]): Iterable<unknown> & { toArray(): unknown[] } };
  transactionSync<T>(fn: () => T): T;
}
type DurableObjectSqlValue = string | number | null | ArrayBuffer;

/** DO SQLite binds BLOBs from ArrayBuffers only. */
function bindable(value: SqlValue): DurableObjectSqlValue {
  if (value instanceof Uint8Array) {
    return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
  }
  return value;
}

export function durableObjectSql(storage: DurableObjectSqlStorage): SqlStore {
  return {
    all: <T extends SqlRow>(query: string, ...params: SqlValue[]) =>
      storage.sql.exec(query, ...params.map(bindable)).toArray() as T[],
    iterate: <T extends SqlRow>(query: string, ...params: SqlValue[]) =>
      storage.sql.exec(query, ...params.map(bindable)) as Iterable<T>,
    run: (query, ...params) => void storage.sql.exec(query, ...params.map(bindable)),
    transaction: (fn) => storage.transactionSync(fn),
  };
}

/** BLOB columns come back as ArrayBuffer from DO SQLite and as Uint8Array from node:sqlite. */
export function toBytes(value: SqlValue): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError(`expected a BLOB, got ${value === null ? "null" : typeof value}`);
}
