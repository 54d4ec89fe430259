// A SqlStore over node:sqlite (Node 22), so the thread storage code runs in Node tests. It behaves like
// the Durable Object adapter: BLOB columns come back as ArrayBuffer and rows are plain objects.
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type { SqlRow, SqlStore, SqlValue } from "../../src/db/sql.ts";

export function nodeSql(db: DatabaseSync = new DatabaseSync(":memory:")): SqlStore & { db: DatabaseSync } {
  // Prepared once per query text, as DO SQLite caches its statements too.
  const statements = new Map<string, StatementSync>();
  const prepare = (query: string) => {
    let statement = statements.get(query);
    if (!statement) {
      statement = db.prepare(query);
      statements.set(query, statement);
    }
    return statement;
  };
  const bind = (params: SqlValue[]): SQLInputValue[] =>
    params.map((p) => (p instanceof ArrayBuffer ? new Uint8Array(p) : p));
  const row = (raw: Record<string, unknown>): SqlRow => {
    const out: SqlRow = {};
    for (const [key, value] of Object.entries(raw)) {
      out[key] = value instanceof Uint8Array ? toArrayBuffer(value) : (value as SqlValue);
    }
    return out;
  };
  return {
    db,
    all: <T extends SqlRow>(query: string, ...params: SqlValue[]) =>
      prepare(query)
        .all(...bind(params))
        .map((r) => row(r as Record<string, unknown>)) as T[],
    iterate: function* <T extends SqlRow>(query: string, ...params: SqlValue[]): Generator<T> {
      for (const r of prepare(query).iterate(...bind(params))) yield row(r as Record<string, unknown>) as T;
    },
    run: (query, ...params) => void prepare(query).run(...bind(params)),
    transaction(fn) {
      db.exec("BEGIN");
      try {
        const result = fn();
        db.exec("COMMIT");
        return result;
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    },
  };
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
