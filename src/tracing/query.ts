import { and, desc, eq, gte, inArray, lte, type SQL } from "drizzle-orm";
import { DomainError } from "../core/errors.ts";
import type { Database } from "../db/client.ts";
import { traceShards } from "../db/schema.ts";
import { parseFilter } from "./filter/check.ts";
import { type CompiledFilter, compileFilter } from "./filter/compile.ts";
import { FilterError } from "./filter/parse.ts";
import { locateRun } from "./ingest.ts";
import { mergeRunStats, type RunStats, type ShardRunStats } from "./run-stats.ts";
import type { RunsPage, RunsQuery } from "./schemas.ts";
import { ShardRuns, type StoredTracedRun, type TracedRunQuery } from "./shard-runs.ts";
import { type TraceShardDO, traceShardName } from "./trace-shard-do.ts";

/**
 * `POST /runs/query`: picks the day shards that can hold matching runs, walks them day by day in
 * the requested order (days never overlap, so pages concatenate), merges the projects of one day by
 * (start_time, id), and pages with an opaque keyset cursor.
 */

/** A filter that does not parse: the field it came from and the parser's positioned message. */
export class QueryFilterError extends Error {}

/** Bound values a query's filters and ids may use together (D1 and DO SQLite bind at most 100; 10 stay for the fixed conditions). */
const MAX_QUERY_VALUES = 90;

type Cursor = { start_time: string; id: string };

const encodeCursor = (cursor: Cursor) => btoa(JSON.stringify([cursor.start_time, cursor.id])).replace(/=+$/, "");

export function decodeCursor(text: string): Cursor | null {
  try {
    const [start_time, id] = JSON.parse(atob(text)) as unknown[];
    return typeof start_time === "string" && typeof id === "string" ? { start_time, id } : null;
  } catch {
    return null;
  }
}

function compiled(field: string, text: string | undefined): CompiledFilter | null {
  if (!text?.trim()) return null;
  try {
    return compileFilter(parseFilter(text));
  } catch (error) {
    if (error instanceof FilterError) throw new QueryFilterError(`${field}: ${error.message}`);
    throw error;
  }
}

/** The conditions every shard applies, built once per request. */
export function shardQuery(query: RunsQuery, after: Cursor | undefined): Omit<TracedRunQuery, "limit"> {
  const filters: CompiledFilter[] = [];
  const filter = compiled("filter", query.filter);
  if (filter) filters.push(filter);
  const trace = compiled("trace_filter", query.trace_filter);
  if (trace) filters.push(ShardRuns.traceFilter(trace));
  const tree = compiled("tree_filter", query.tree_filter);
  if (tree) filters.push(ShardRuns.treeFilter(tree));
  // `query` is LangSmith's free-text search: the filter search(query) over the run's text.
  if (query.query?.trim()) filters.push(compileFilter({ op: "search", attribute: null, text: query.query.trim() }));
  // Each filter is capped on its own; together with ids and the fixed conditions they must still
  // fit one statement's 100 bound parameters.
  const values = filters.reduce((sum, f) => sum + f.params.length, 0) + (query.id?.length ?? 0);
  if (values > MAX_QUERY_VALUES) {
    throw new QueryFilterError(
      `filter, trace_filter, tree_filter and id together may hold at most ${MAX_QUERY_VALUES} values; these hold ${values}`,
    );
  }
  return {
    filters,
    ids: query.id,
    trace_id: query.trace,
    parent_run_id: query.parent_run,
    run_type: query.run_type,
    is_root: query.is_root,
    error: query.error,
    start_time: query.start_time,
    end_time: query.end_time,
    order: query.order,
    after,
  };
}

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
export function wireRun(run: StoredTracedRun): Record<string, unknown> {
  return { ...run, dotted_order: run.dotted_order ?? "", app_path: `/projects/p/${run.session_id}/r/${run.id}` };
}

/** Runs with only the selected fields (and ALWAYS_SELECTED), or whole. */
function project(run: StoredTracedRun, select: string[] | undefined): Record<string, unknown> {
  const full = wireRun(run);
  if (!select?.length) return full;
  return Object.fromEntries(
    [...new Set([...ALWAYS_SELECTED, ...select])].filter((key) => key in full).map((key) => [key, full[key]]),
  );
}

/**
 * The shards (project × day) that can hold runs of `query`, newest day first: narrowed by project,
 * by the located run for id/trace/parent_run, by day, and by the cursor's day.
 */
export async function matchingShards(
  db: Database,
  workspaceId: string,
  query: Pick<RunsQuery, "session" | "trace" | "parent_run" | "id" | "start_time" | "end_time" | "order">,
  after: Cursor | undefined,
): Promise<{ projectId: string; day: string }[]> {
  let projects = query.session;
  const anchor = query.trace ?? query.parent_run ?? (query.id?.length === 1 ? query.id[0] : undefined);
  if (anchor) {
    const location = await locateRun(db, workspaceId, anchor);
    if (!location) return [];
    projects = projects ? projects.filter((p) => p === location.projectId) : [location.projectId];
  }
  const where: SQL[] = [eq(traceShards.workspaceId, workspaceId)];
  if (projects) where.push(inArray(traceShards.projectId, projects.length ? projects : [""]));
  if (query.start_time) where.push(gte(traceShards.day, new Date(query.start_time).toISOString().slice(0, 10)));
  if (query.end_time) where.push(lte(traceShards.day, new Date(query.end_time).toISOString().slice(0, 10)));
  if (after)
    where.push(
      query.order === "desc"
        ? lte(traceShards.day, after.start_time.slice(0, 10))
        : gte(traceShards.day, after.start_time.slice(0, 10)),
    );
  return db
    .select()
    .from(traceShards)
    .where(and(...where))
    .orderBy(desc(traceShards.day))
    .all();
}

export async function queryRuns(
  db: Database,
  shards: DurableObjectNamespace<TraceShardDO>,
  workspaceId: string,
  query: RunsQuery,
): Promise<RunsPage> {
  const after = query.cursor ? (decodeCursor(query.cursor) ?? undefined) : undefined;
  const conditions = shardQuery(query, after);

  const rows = await matchingShards(db, workspaceId, query, after);

  const days = new Map<string, string[]>();
  for (const row of query.order === "desc" ? rows : rows.reverse())
    (days.get(row.day) ?? days.set(row.day, []).get(row.day)!).push(row.projectId);

  const wanted = query.limit + 1;
  const found: StoredTracedRun[] = [];
  for (const [day, projectIds] of days) {
    const pages = await Promise.all(
      projectIds.map(async (projectId) => {
        const text = await shards
          .getByName(traceShardName(workspaceId, projectId, day))
          .query({ ...conditions, limit: wanted - found.length });
        return JSON.parse(text) as StoredTracedRun[];
      }),
    );
    const merged = pages.flat().sort((a, b) => {
      const order =
        a.start_time < b.start_time ? -1 : a.start_time > b.start_time ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      return query.order === "desc" ? -order : order;
    });
    found.push(...merged.slice(0, wanted - found.length));
    if (found.length >= wanted) break;
  }

  const page = found.slice(0, query.limit);
  const last = page.at(-1);
  const next = found.length > query.limit && last ? encodeCursor({ start_time: last.start_time, id: last.id }) : null;
  return { runs: page.map((run) => project(run, query.select)), cursors: { next, prev: null } };
}

const STATS_SHARDS_AT_ONCE = 32;

/** Shards (project-days) one stats request reads: each is a call, and a request has a bounded number. */
const MAX_STATS_SHARDS = 500;

/**
 * `POST /runs/stats`: the filters of `/runs/query` (its limit, cursor, select and order do not
 * apply), summed over every matching shard.
 */
export async function runStats(
  db: Database,
  shards: DurableObjectNamespace<TraceShardDO>,
  workspaceId: string,
  query: RunsQuery,
): Promise<RunStats> {
  const { after: _after, order: _order, ...conditions } = shardQuery(query, undefined);
  const rows = await matchingShards(db, workspaceId, query, undefined);
  if (rows.length > MAX_STATS_SHARDS) {
    throw new DomainError(
      "invalid",
      `These filters cover ${rows.length} project-days of runs; run stats read at most ${MAX_STATS_SHARDS}: narrow them with session, start_time or end_time`,
    );
  }
  const parts: ShardRunStats[] = [];
  // A bounded number of shard calls in flight at once.
  for (let i = 0; i < rows.length; i += STATS_SHARDS_AT_ONCE) {
    parts.push(
      ...(await Promise.all(
        rows
          .slice(i, i + STATS_SHARDS_AT_ONCE)
          .map((row) => shards.getByName(traceShardName(workspaceId, row.projectId, row.day)).stats(conditions)),
      )),
    );
  }
  return mergeRunStats(parts);
}
