import { isObject } from "./json.ts";

/**
 * Authorization filters, as the deployment's handlers return them, and how stored metadata is
 * tested against them: in code (`matchesFilter`) or in a D1 search (`filterAsContainment`).
 */

/** A filter from an authorization handler: `{key: value}`, `{key: {$eq: v}}`, `{key: {$contains: v}}`. */
export type AuthFilter = Record<string, unknown>;

/** Does `metadata` pass the filter? Every key must match; a missing key never does. */
export function matchesFilter(metadata: Record<string, unknown>, filter: AuthFilter | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([key, condition]) => {
    if (!(key in metadata)) return false;
    const actual = metadata[key];
    if (isObject(condition)) {
      const operators = condition as { $eq?: unknown; $contains?: unknown };
      if ("$contains" in operators) {
        if (!Array.isArray(actual)) return false;
        return [operators.$contains]
          .flat()
          .every((wanted) => actual.some((item) => JSON.stringify(item) === JSON.stringify(wanted)));
      }
      if ("$eq" in operators) return JSON.stringify(actual) === JSON.stringify(operators.$eq);
    }
    return JSON.stringify(actual) === JSON.stringify(condition);
  });
}

/** The filter as a metadata containment query (for D1 searches): `$contains` becomes array containment. */
export function filterAsContainment(filter: AuthFilter | undefined): Record<string, unknown> | undefined {
  if (!filter) return undefined;
  return Object.fromEntries(
    Object.entries(filter).map(([key, condition]) => {
      if (isObject(condition)) {
        const operators = condition as { $eq?: unknown; $contains?: unknown };
        if ("$contains" in operators) return [key, [operators.$contains].flat()];
        if ("$eq" in operators) return [key, operators.$eq];
      }
      return [key, condition];
    }),
  );
}

/**
 * The caller's authorization, bound to one request: runs the handler for `event` (which may change
 * `value`) and returns its filter. API-key callers have no handler and get no filter.
 */
export type Authorizer = (event: string, value: Record<string, unknown>) => Promise<AuthFilter | undefined>;
