/**
 * The 2 MB value and row limit and the 32-argument limit, checked on a statement before it runs and on
 * the rows it reads back. The errors read as SQLite's (what D1 and Durable Object SQLite answer).
 */
import { utf8Length } from "../core/bytes.ts";
import { MAX_SQL_VALUE_BYTES } from "./limits.ts";
import { sqlShape } from "./sql-text.ts";

/** Where a statement runs: D1 prefixes SQLite's messages with "D1_ERROR: ". */
export type SqlEngine = "d1" | "durable-object";

export const TOO_BIG = "string or blob too big: SQLITE_TOOBIG";

export function sqlError(engine: SqlEngine, message: string): Error {
  return new Error(engine === "d1" ? `D1_ERROR: ${message}` : message);
}

/** An upper bound of a value's stored size, without looking at a string's characters. */
function boundBytes(value: unknown): number {
  if (typeof value === "string") return value.length * 3;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  return 8;
}

/** A value's stored size in bytes. */
export function valueBytes(value: unknown): number {
  if (typeof value === "string") return value.length * 3 <= MAX_SQL_VALUE_BYTES ? value.length : utf8Length(value);
  return boundBytes(value);
}

/** Whether values (one value, a row) together fit in `MAX_SQL_VALUE_BYTES`. */
function fits(values: Iterable<unknown>): boolean {
  let bound = 0;
  for (const value of values) bound += boundBytes(value);
  if (bound <= MAX_SQL_VALUE_BYTES) return true;
  let bytes = 0;
  for (const value of values) {
    bytes += typeof value === "string" ? utf8Length(value) : boundBytes(value);
    if (bytes > MAX_SQL_VALUE_BYTES) return false;
  }
  return true;
}

/**
 * The error a statement meets before it runs, or null: a function of more than 32 arguments, a bound
 * value over 2 MB, or a row it writes whose bound values add up to more than 2 MB.
 */
export function statementError(engine: SqlEngine, sql: string, params: readonly unknown[]): Error | null {
  const shape = sqlShape(sql);
  if (shape.tooManyArguments) {
    return sqlError(engine, `too many arguments on function ${shape.tooManyArguments}: SQLITE_ERROR`);
  }
  for (const param of params) if (!fits([param])) return sqlError(engine, TOO_BIG);
  if (shape.rows) {
    for (const row of shape.rows) {
      if (!fits(row.map((index) => params[index]))) return sqlError(engine, TOO_BIG);
    }
  }
  return null;
}

/**
 * The error of a row read back over 2 MB, or null. No such row can exist in production: SQLite refuses
 * to build a value over the limit, so this catches rows assembled in SQL (`||`, json_set, aggregates).
 */
export function rowError(engine: SqlEngine, row: unknown): Error | null {
  if (row === null || typeof row !== "object" || row instanceof ArrayBuffer || ArrayBuffer.isView(row)) {
    return fits([row]) ? null : sqlError(engine, TOO_BIG);
  }
  const values = Array.isArray(row) ? row : Object.values(row);
  return fits(values) ? null : sqlError(engine, TOO_BIG);
}

/** The first error of `rows`, or null. */
export function rowsError(engine: SqlEngine, rows: readonly unknown[] | undefined): Error | null {
  if (!rows) return null;
  for (const row of rows) {
    const error = rowError(engine, row);
    if (error) return error;
  }
  return null;
}
