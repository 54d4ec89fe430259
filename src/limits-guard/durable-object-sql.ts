/**
 * A Durable Object's state whose SQLite enforces what local workerd does not: 2 MB values and rows and
 * 32 arguments per function. Everything else of the state and its storage is the object itself.
 */
import { rowError, rowsError, statementError } from "./sql-values.ts";

/** Calls a native method on its own object, whatever object it was read through. */
function member(target: object, property: string | symbol): unknown {
  const value = Reflect.get(target, property, target);
  return typeof value === "function" ? value.bind(target) : value;
}

function check(error: Error | null): void {
  if (error) throw error;
}

/** A cursor (or its `raw()` iterator) whose rows are checked as they are read. */
function guardCursor<C extends object>(cursor: C): C {
  const next = (cursor as unknown as Iterator<unknown>).next.bind(cursor);
  const proxy: C = new Proxy(cursor, {
    get(target, property) {
      switch (property) {
        case "next":
          return () => {
            const step = next();
            if (!step.done) check(rowError("durable-object", step.value));
            return step;
          };
        case "toArray":
          return () => {
            const rows = (target as unknown as { toArray(): unknown[] }).toArray();
            check(rowsError("durable-object", rows));
            return rows;
          };
        case "one":
          return () => {
            const row = (target as unknown as { one(): unknown }).one();
            check(rowError("durable-object", row));
            return row;
          };
        case "raw":
          return () => guardCursor((target as unknown as { raw(): object }).raw());
        case Symbol.iterator:
          return () => proxy;
        default:
          return member(target, property);
      }
    },
  });
  return proxy;
}

function guardSql(sql: SqlStorage): SqlStorage {
  const exec = (query: string, ...bindings: unknown[]) => {
    check(statementError("durable-object", query, bindings));
    return guardCursor(sql.exec(query, ...bindings));
  };
  return new Proxy(sql, { get: (target, property) => (property === "exec" ? exec : member(target, property)) });
}

function guardStorage(storage: DurableObjectStorage): DurableObjectStorage {
  const sql = guardSql(storage.sql);
  return new Proxy(storage, { get: (target, property) => (property === "sql" ? sql : member(target, property)) });
}

/** `ctx` whose `storage.sql` is guarded. */
export function guardState(ctx: DurableObjectState): DurableObjectState {
  const storage = guardStorage(ctx.storage);
  return new Proxy(ctx, { get: (target, property) => (property === "storage" ? storage : member(target, property)) });
}
