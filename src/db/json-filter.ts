import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { isObject } from "../core/json.ts";
import { pathStep } from "./json-path.ts";

/**
 * Leaf conditions per search (all JSON filters together). Each binds at most 3 parameters, and D1
 * allows 100 per statement, with a few more needed for workspace, status, ids and paging.
 */
export const MAX_FILTER_CONDITIONS = 28;

export class FilterTooLargeError extends Error {}

/**
 * `column IN (values)` with the whole list bound as one JSON parameter, read with json_each: any
 * number of values in one statement, where D1 and Durable Object SQLite bind at most 100 parameters.
 */
export const inJsonList = (column: SQLiteColumn, values: readonly (string | number)[]): SQL =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;

/**
 * The containment conditions of several JSON filters of one search, together within the limit
 * (a FilterTooLargeError otherwise, which routes turn into a 422). Every store searches through it.
 */
export function containments(...filters: [SQLiteColumn, Record<string, unknown> | null | undefined][]): SQL[] {
  const conditions = filters.flatMap(([column, filter]) => (filter ? containment(column, filter) : []));
  if (conditions.length > MAX_FILTER_CONDITIONS)
    throw new FilterTooLargeError(`JSON filters may hold at most ${MAX_FILTER_CONDITIONS} values together`);
  return conditions;
}

/**
 * JSONB-style containment (`stored @> filter`) as SQLite JSON conditions: every key of the filter
 * must exist with an equal value, nested objects recursively, and every element of a filter array
 * must appear in the stored array. Types are compared too, so "1" never matches 1.
 */
export function containment(column: SQLiteColumn, filter: Record<string, unknown>, path = "$"): SQL[] {
  const conditions: SQL[] = [];
  for (const [key, expected] of Object.entries(filter)) {
    const at = `${path}${pathStep(key)}`;
    if (isObject(expected)) {
      const nested = containment(column, expected, at);
      conditions.push(...(nested.length ? nested : [sql`json_type(${column}, ${at}) = 'object'`]));
    } else if (Array.isArray(expected)) {
      conditions.push(sql`json_type(${column}, ${at}) = 'array'`);
      for (const element of expected) {
        conditions.push(
          element !== null && typeof element === "object"
            ? sql`EXISTS (SELECT 1 FROM json_each(${column}, ${at}) AS e WHERE json(e.value) = json(${JSON.stringify(element)}))`
            : sql`EXISTS (SELECT 1 FROM json_each(${column}, ${at}) AS e WHERE e.type = ${jsonType(element)} AND e.value IS ${element})`,
        );
      }
    } else {
      conditions.push(scalarEquals(column, at, expected));
    }
  }
  return conditions;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "real";
  return "text";
}

function scalarEquals(column: SQLiteColumn, at: string, expected: unknown): SQL {
  if (expected === null || typeof expected === "boolean")
    return sql`json_type(${column}, ${at}) = ${jsonType(expected)}`;
  if (typeof expected === "number") {
    return sql`json_type(${column}, ${at}) IN ('integer', 'real') AND json_extract(${column}, ${at}) = ${expected}`;
  }
  return sql`json_type(${column}, ${at}) = 'text' AND json_extract(${column}, ${at}) = ${String(expected)}`;
}
