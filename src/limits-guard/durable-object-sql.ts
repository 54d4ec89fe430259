/**
 * A Durable Object's state whose SQLite enforces what local workerd does not: 2 MB values and rows and
 * 32 arguments per function. Everything else of the state and its storage is the object itself.
 * The usage meter counts the rows each cursor reports (`rowsRead`, `rowsWritten`) under the object's
 * class, and one row written per `setAlarm` (as Cloudflare bills it).
 */
import { rowError, rowsError, statementError } from "./sql-values.ts";
import { meterObjectRows } from "./usage.ts";

/** Calls a native method on its own object, whatever object it was read through. */
function member(target: object, property: string | symbol): unknown {
  const value = Reflect.get(target, property, target);
  return typeof value === "function" ? value.bind(target) : value;
}

function check(error: Error | null): void {
  if (error) throw error;
}

/**
 * Adds what `cursor` has read and written since the last call to its class's usage. A statement that
 * returns no rows runs whole in `exec`; a query steps as it is read, so this runs after each step.
 */
function rowMeter(cursor: SqlStorageCursor<Record<string, SqlStorageValue>>, className: () => string): () => void {
  let read = 0;
  let written = 0;
  return () => {
    const { rowsRead, rowsWritten } = cursor;
    meterObjectRows(className(), rowsRead - read, rowsWritten - written);
    read = rowsRead;
    written = rowsWritten;
  };
}

/** A cursor (or its `raw()` iterator) whose rows are checked, and metered by `meter`, as they are read. */
function guardCursor<C extends object>(cursor: C, meter: () => void): C {
  const next = (cursor as unknown as Iterator<unknown>).next.bind(cursor);
  const proxy: C = new Proxy(cursor, {
    get(target, property) {
      switch (property) {
        case "next":
          return () => {
            const step = next();
            meter();
            if (!step.done) check(rowError("durable-object", step.value));
            return step;
          };
        case "toArray":
          return () => {
            const rows = (target as unknown as { toArray(): unknown[] }).toArray();
            meter();
            check(rowsError("durable-object", rows));
            return rows;
          };
        case "one":
          return () => {
            const row = (target as unknown as { one(): unknown }).one();
            meter();
            check(rowError("durable-object", row));
            return row;
          };
        case "raw":
          return () => guardCursor((target as unknown as { raw(): object }).raw(), meter);
        case Symbol.iterator:
          return () => proxy;
        default:
          return member(target, property);
      }
    },
  });
  return proxy;
}

function guardSql(sql: SqlStorage, className: () => string): SqlStorage {
  const exec = (query: string, ...bindings: unknown[]) => {
    check(statementError("durable-object", query, bindings));
    const cursor = sql.exec(query, ...bindings);
    const meter = rowMeter(cursor, className);
    meter();
    return guardCursor(cursor, meter);
  };
  return new Proxy(sql, { get: (target, property) => (property === "exec" ? exec : member(target, property)) });
}

function guardStorage(storage: DurableObjectStorage, className: () => string): DurableObjectStorage {
  const sql = guardSql(storage.sql, className);
  const setAlarm = (...args: Parameters<DurableObjectStorage["setAlarm"]>) => {
    meterObjectRows(className(), 0, 1);
    return storage.setAlarm(...args);
  };
  return new Proxy(storage, {
    get: (target, property) =>
      property === "sql" ? sql : property === "setAlarm" ? setAlarm : member(target, property),
  });
}

/** `ctx` whose `storage.sql` is guarded, and metered under the name `className` gives at the time. */
export function guardState(ctx: DurableObjectState, className: () => string): DurableObjectState {
  const storage = guardStorage(ctx.storage, className);
  return new Proxy(ctx, { get: (target, property) => (property === "storage" ? storage : member(target, property)) });
}
