import {
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_IN_VALUES,
  MAX_FILTER_PARAMS,
  MAX_FILTER_SQL_BYTES,
  MAX_FILTER_SQL_DEPTH,
} from "../../core/limits.ts";
import { type Filter, parseFilter } from "./check.ts";
import { type CompiledFilter, compiledDepth, compileFilter, conditionCount } from "./compile.ts";
import { FilterError } from "./parse.ts";

/**
 * The one check of a query's filters, shared by `/runs/query`, `/runs/stats`, `/api/v2/runs/query`,
 * bulk exports and `/runs/query/validate`, so validate accepts exactly what the queries run: each
 * filter parses, and together they compile into SQL that SQLite (D1, Durable Objects) accepts
 * (bound values, statement length, expression depth).
 */

export const FILTER_FIELDS = ["filter", "trace_filter", "tree_filter"] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export type FilterProblem = { field: FilterField; message: string; position: number };

export type CheckedFilters = {
  compiled: Partial<Record<FilterField, CompiledFilter>>;
  errors: FilterProblem[];
};

function checkOne(text: string): Filter {
  const filter = parseFilter(text);
  const walk = (node: Filter): void => {
    if (node.op === "and" || node.op === "or") node.args.forEach(walk);
    else if (node.op === "not") walk(node.arg);
    else if (node.op === "in" && node.values.length > MAX_FILTER_IN_VALUES)
      throw new FilterError(0, `in() with at most ${MAX_FILTER_IN_VALUES} values`, `${node.values.length} values`);
  };
  walk(filter);
  const depth = compiledDepth(filter);
  if (depth > MAX_FILTER_SQL_DEPTH)
    throw new FilterError(
      0,
      `a filter whose not() and nested calls compile to SQL at most ${MAX_FILTER_SQL_DEPTH} levels deep`,
      `${depth} levels`,
    );
  return filter;
}

/**
 * Checks the filters of one query (absent or blank ones are skipped) and compiles them. Errors name
 * their field; the bounds on the filters together are reported on the field that crosses them.
 */
export function checkQueryFilters(texts: Partial<Record<FilterField, string | null | undefined>>): CheckedFilters {
  const compiled: CheckedFilters["compiled"] = {};
  const errors: FilterProblem[] = [];
  let conditions = 0;
  let params = 0;
  let sqlBytes = 0;
  for (const field of FILTER_FIELDS) {
    const text = texts[field];
    if (!text?.trim()) continue;
    try {
      const filter = checkOne(text);
      conditions += conditionCount(filter);
      if (conditions > MAX_FILTER_CONDITIONS)
        throw new FilterError(
          0,
          `filters with at most ${MAX_FILTER_CONDITIONS} conditions together`,
          `${conditions} conditions`,
        );
      const result = compileFilter(filter);
      params += result.params.length;
      if (params > MAX_FILTER_PARAMS)
        throw new FilterError(0, `filters with at most ${MAX_FILTER_PARAMS} values together`, `${params} values`);
      sqlBytes += result.sql.length;
      if (sqlBytes > MAX_FILTER_SQL_BYTES)
        throw new FilterError(
          0,
          `filters that compile to at most ${MAX_FILTER_SQL_BYTES} bytes of SQL together`,
          `${sqlBytes} bytes`,
        );
      compiled[field] = result;
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      errors.push({ field, message: error.message, position: error.position });
    }
  }
  return { compiled, errors };
}

/** The errors as one `detail` line: `field: message; field: message`. */
export function filterProblemsDetail(errors: FilterProblem[]): string {
  return errors.map((error) => `${error.field}: ${error.message}`).join("; ");
}
