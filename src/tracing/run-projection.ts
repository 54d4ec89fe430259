import type { TracingRunSelection } from "./schemas.ts";
import type { StoredTracedRun } from "./shard-runs.ts";

/**
 * Fields every returned run carries, whatever `select` names: the ones the SDKs' `Run` models
 * require (Python's needs name, start_time, run_type, trace_id and a dotted_order string) and the
 * rest of LangSmith's required `RunSchema` fields.
 */
const ALWAYS_SELECTED = [
  "id",
  "name",
  "start_time",
  "run_type",
  "trace_id",
  "dotted_order",
  "status",
  "session_id",
  "app_path",
];

/** A run as the v1 API returns it: `dotted_order` is a string even for a run whose lineage is unknown. */
export function wireRun<R extends StoredTracedRun>(
  run: R,
): Omit<R, "dotted_order"> & { dotted_order: string; app_path: string } {
  return { ...run, dotted_order: run.dotted_order ?? "", app_path: `/projects/p/${run.session_id}/r/${run.id}` };
}

/**
 * A run with only the selected fields (and ALWAYS_SELECTED), or whole. The shard projects its page
 * before measuring it, so a narrow `select` fits many more runs in a page's byte budget.
 */
export function projectRun(run: StoredTracedRun, select: string[] | undefined): TracingRunSelection {
  const full: Record<string, unknown> & TracingRunSelection = wireRun(run);
  if (!select?.length) return full;
  // Fields of the run itself, ALWAYS_SELECTED among them: a TracingRunSelection.
  return Object.fromEntries(
    [...new Set([...ALWAYS_SELECTED, ...select])].filter((key) => key in full).map((key) => [key, full[key]]),
  ) as TracingRunSelection;
}
