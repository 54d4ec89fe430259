import { chunked } from "../core/batches.ts";
import type { SqlStore, SqlValue } from "./sql.ts";

/**
 * Statements within SQLite's bound-parameter limit. D1 and Durable Object SQLite refuse a statement
 * that binds more than 100 values, so long id lists and multi-row INSERTs are cut here, and any other
 * list is bound as one JSON parameter instead (see db/json-filter.ts, tracing/filter/compile.ts).
 */

/** Values one statement may bind, in D1 and in Durable Object SQLite. */
export const MAX_BOUND_PARAMS = 100;

/** Ids one `IN (...)` list binds where the statement binds a few other values too. */
export const IDS_PER_STATEMENT = MAX_BOUND_PARAMS - 10;

/** `?, ?, ?` for `count` values. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

/** Rows of `columns` values one multi-row INSERT may bind (at least one). */
export const rowsPerStatement = (columns: number): number => Math.max(1, Math.floor(MAX_BOUND_PARAMS / columns));

/** Multi-row INSERT (`verb`: INSERT, INSERT OR REPLACE...), split so that no statement binds more than MAX_BOUND_PARAMS values. */
export function insertRows(sql: SqlStore, verb: string, table: string, columns: string[], rows: SqlValue[][]): void {
  const row = `(${placeholders(columns.length)})`;
  for (const batch of chunked(rows, rowsPerStatement(columns.length))) {
    sql.run(`${verb} INTO ${table} (${columns.join(", ")}) VALUES ${batch.map(() => row).join(", ")}`, ...batch.flat());
  }
}
