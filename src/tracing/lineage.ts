import { mapInBatches } from "../core/batches.ts";
import type { RunPost } from "./schemas.ts";

/**
 * `trace_id` and `dotted_order` for runs posted without a `dotted_order` (`Client.create_run(...)`
 * outside a trace, the JS `createRun` without auto-batching), derived as LangSmith derives them: a
 * root is its own trace and its dotted_order is its own segment; a child whose parent is known takes
 * the parent's trace and appends its segment to the parent's dotted_order.
 */

export type Lineage = { trace_id: string; dotted_order: string };

const ISO = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z$/;

/** One dotted_order segment: the UTC start time as `%Y%m%dT%H%M%S%fZ` (6 fractional digits), then the id. */
export function dottedOrderSegment(startTime: string, id: string): string | null {
  const millis = Date.parse(startTime);
  const match = ISO.exec(startTime) ?? (Number.isNaN(millis) ? null : ISO.exec(new Date(millis).toISOString()));
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction = ""] = match;
  return `${year}${month}${day}T${hour}${minute}${second}${fraction.padEnd(6, "0").slice(0, 6)}Z${id}`;
}

/** Derived dotted orders are at most this many levels deep (deeper children are left underived). */
const MAX_DERIVED_DEPTH = 32;
/** Parents outside the request looked up at most (one shard RPC each). */
export const MAX_OUTSIDE_PARENTS = 100;
const PARENT_LOOKUPS_AT_ONCE = 10;

/**
 * The lineage of each run of `runs` that has no dotted_order and whose lineage can be derived, by id.
 * Parents are looked for in the batch first, then with `stored` (one call per parent outside it). A
 * child whose parent is unknown, or whose `trace_id` contradicts its parent's, gets none.
 */
export async function deriveLineage(
  runs: RunPost[],
  stored: (id: string) => Promise<Lineage | null>,
): Promise<Map<string, Lineage>> {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const missing = runs.filter((run) => run.dotted_order === undefined);
  const outside = [
    ...new Set(missing.map((run) => run.parent_run_id).filter((id): id is string => !!id && !byId.has(id))),
  ];
  // Parents outside the batch are looked up a few at a time, and only so many: one request cannot fan
  // out into thousands of lookups. The others count as unknown.
  const found = new Map<string, Lineage | null>();
  const lookups = outside.slice(0, MAX_OUTSIDE_PARENTS);
  for (const [id, lineage] of await mapInBatches(
    lookups,
    PARENT_LOOKUPS_AT_ONCE,
    async (id) => [id, await stored(id)] as const,
  ))
    found.set(id, lineage);

  const resolved = new Map<string, Lineage | null>();
  const visiting = new Set<string>();
  const lineageOf = (id: string): Lineage | null => {
    if (resolved.has(id)) return resolved.get(id) ?? null;
    const run = byId.get(id);
    if (!run) return found.get(id) ?? null;
    if (visiting.has(id)) return null; // a parent cycle within the batch
    // A chain deeper than this within one request is not derived: dotted orders grow with depth.
    if (visiting.size >= MAX_DERIVED_DEPTH) return null;
    visiting.add(id);
    const lineage = ownLineage(run);
    visiting.delete(id);
    resolved.set(id, lineage);
    return lineage;
  };
  const ownLineage = (run: RunPost): Lineage | null => {
    if (run.dotted_order !== undefined)
      return { trace_id: run.trace_id ?? run.dotted_order.slice(22, 58), dotted_order: run.dotted_order };
    const segment = dottedOrderSegment(run.start_time, run.id);
    if (segment === null) return null;
    if (!run.parent_run_id)
      return run.trace_id === undefined || run.trace_id === run.id ? { trace_id: run.id, dotted_order: segment } : null;
    const parent = lineageOf(run.parent_run_id);
    if (!parent || (run.trace_id !== undefined && run.trace_id !== parent.trace_id)) return null;
    // Dotted orders grow with depth: a child deeper than the limit is left underived (bounded memory).
    if (parent.dotted_order.split(".").length >= MAX_DERIVED_DEPTH) return null;
    return { trace_id: parent.trace_id, dotted_order: `${parent.dotted_order}.${segment}` };
  };

  const derived = new Map<string, Lineage>();
  for (const run of missing) {
    const lineage = lineageOf(run.id);
    if (lineage) derived.set(run.id, lineage);
  }
  return derived;
}
