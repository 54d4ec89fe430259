import { and, desc, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import { badRequest, DomainError } from "../core/errors.ts";
import { MAX_QUERY_PAGE_BYTES, onFreePlan, type PlanVars, SHARD_CALLS_PER_REQUEST } from "../core/limits.ts";
import { inJsonList } from "../db/json-filter.ts";
import { traceShards } from "../db/schema.ts";
import type { WorkspaceBindings } from "../workspace/database.ts";
import { locateRun, type TracesDatabase } from "./directory.ts";
import { type CompiledFilter, compileFilter } from "./filter/compile.ts";
import { checkQueryFilters, filterProblemsDetail } from "./filter/query-filters.ts";
import { generationsOf } from "./generations.ts";
import { projectRun } from "./run-projection.ts";
import { foldRunStats, mergeRunStats, type ShardRunStats } from "./run-stats.ts";
import type { RunStats, RunsPage, RunsQuery } from "./schemas.ts";
import { ShardRuns, type StoredTracedRun, type TracedRunQuery } from "./shard-runs.ts";
import { type Generation, splitsUpTo, traceSplitsOfDay } from "./splits.ts";
import { type TraceShardDO, traceShardName } from "./trace-shard-do.ts";

/**
 * `POST /runs/query`: picks the day shards that can hold matching runs, walks them day by day in
 * the requested order (days never overlap, so pages concatenate), merges the shards of one day (its
 * projects, and each project-day's splits, see splits.ts) by (start_time, id), and pages with an
 * opaque keyset cursor.
 *
 * A page is bounded three ways, and a bounded page still ends with a cursor that continues exactly
 * where it stopped: `limit` runs; `MAX_QUERY_PAGE_BYTES` of run JSON (each shard answers at most
 * its share, so no RPC nears the 32 MiB cap); and the request's budget of shard calls
 * (`SHARD_CALLS_PER_REQUEST`): when the next day's shards would pass it, the walk stops before that
 * day and the cursor points at the day's end, so a page may hold fewer runs than `limit`, or none,
 * and still have a `next` cursor. Only a null `next` means there are no more runs.
 */

/** `(start_time, id)` of the last run served; id "" marks a day boundary (every run of the day is still to come). */
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

/** The request's bounds: shard calls by Workers plan, and page bytes. */
export type QueryBudget = { shardCalls: number; pageBytes: number };

export function queryBudget(env: PlanVars & { QUERY_PAGE_BYTES?: string | number }): QueryBudget {
  const configured = Number(env.QUERY_PAGE_BYTES);
  return {
    shardCalls: onFreePlan(env) ? SHARD_CALLS_PER_REQUEST.free : SHARD_CALLS_PER_REQUEST.paid,
    pageBytes:
      Number.isFinite(configured) && configured > 0 ? Math.min(configured, MAX_QUERY_PAGE_BYTES) : MAX_QUERY_PAGE_BYTES,
  };
}

/** The conditions every shard applies, built once per request. */
export function shardQuery(query: RunsQuery, after: Cursor | undefined): Omit<TracedRunQuery, "limit"> {
  // The same check as /runs/query/validate: what it accepts runs here, what it refuses is refused here.
  const { compiled, errors } = checkQueryFilters(query);
  // A filter that does not parse: 400 naming the field it came from, with the parser's positioned message.
  if (errors.length) throw badRequest(filterProblemsDetail(errors));
  const filters: CompiledFilter[] = [];
  if (compiled.filter) filters.push(compiled.filter);
  if (compiled.trace_filter) filters.push(ShardRuns.traceFilter(compiled.trace_filter));
  if (compiled.tree_filter) filters.push(ShardRuns.treeFilter(compiled.tree_filter));
  // `query` is LangSmith's free-text search: the filter search(query) over the run's text (one value).
  if (query.query?.trim()) filters.push(compileFilter({ op: "search", attribute: null, text: query.query.trim() }));
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
 * The shards (project × day) that can hold runs of `query`, newest day first: narrowed by project,
 * by the located run for id/trace/parent_run, by day, and by the cursor's day.
 */
export async function matchingShards(
  db: TracesDatabase,
  workspaceId: string,
  query: Pick<RunsQuery, "session" | "trace" | "parent_run" | "id" | "start_time" | "end_time" | "order">,
  after: Cursor | undefined,
  directory: WorkspaceBindings,
): Promise<{ projectId: string; day: string }[]> {
  let projects = query.session;
  const anchor = query.trace ?? query.parent_run ?? (query.id?.length === 1 ? query.id[0] : undefined);
  if (anchor) {
    const location = await locateRun(directory, workspaceId, anchor);
    if (!location) return [];
    projects = projects ? projects.filter((p) => p === location.projectId) : [location.projectId];
  }
  const where: SQL[] = [eq(traceShards.workspaceId, workspaceId)];
  if (projects) where.push(inJsonList(traceShards.projectId, projects));
  if (query.start_time) where.push(gte(traceShards.day, new Date(query.start_time).toISOString().slice(0, 10)));
  if (query.end_time) where.push(lte(traceShards.day, new Date(query.end_time).toISOString().slice(0, 10)));
  if (after) {
    const day = after.start_time.slice(0, 10);
    // A day-boundary cursor (id "") going back in time has finished its own day.
    where.push(
      query.order === "desc"
        ? after.id === ""
          ? lt(traceShards.day, day)
          : lte(traceShards.day, day)
        : gte(traceShards.day, day),
    );
  }
  return db
    .select()
    .from(traceShards)
    .where(and(...where))
    .orderBy(desc(traceShards.day))
    .all();
}

/** One shard of a project-day: its split key (splits.ts). */
export type ShardSplit = { projectId: string; day: string; split: string };

/**
 * Every split of the project-days `rows` that can hold runs of `query`: the trace's bucket in each
 * generation for a `trace` query, and no generation that starts after its `end_time`.
 */
export async function splitsOf(
  env: WorkspaceBindings,
  workspaceId: string,
  rows: readonly { projectId: string; day: string }[],
  query: Pick<RunsQuery, "trace" | "end_time">,
): Promise<ShardSplit[]> {
  const generations = rows.length ? await generationsOf(env, workspaceId, rows) : new Map<string, Generation[]>();
  return rows.flatMap(({ projectId, day }) => {
    const known = generations.get(`${projectId}/${day}`) ?? [];
    const splits = query.trace ? traceSplitsOfDay(day, known, query.trace) : splitsUpTo(day, known, query.end_time);
    return splits.map((split) => ({ projectId, day, split }));
  });
}

/** What a shard answers for one page (see TraceShardDO.query); `next` is the first run it left out. */
type ShardRunsPage = { next: Cursor | null; sizes: number[]; runs: StoredTracedRun[] };

const compareRuns = (order: "asc" | "desc") => (a: StoredTracedRun, b: StoredTracedRun) => {
  const ascending =
    a.start_time < b.start_time ? -1 : a.start_time > b.start_time ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return order === "desc" ? -ascending : ascending;
};

/** The first instant of the UTC day after `day` (YYYY-MM-DD), in the stored time form. */
function nextDayStart(day: string): string {
  const next = new Date(`${day}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return `${next.toISOString().slice(0, 10)}T00:00:00.000000Z`;
}

export async function queryRuns(
  db: TracesDatabase,
  shards: DurableObjectNamespace<TraceShardDO>,
  workspaceId: string,
  query: RunsQuery,
  budget: QueryBudget = queryBudget({}),
  directory: WorkspaceBindings,
): Promise<RunsPage> {
  const after = query.cursor ? (decodeCursor(query.cursor) ?? undefined) : undefined;
  const conditions = shardQuery(query, after);

  const rows = await matchingShards(db, workspaceId, query, after, directory);
  const splits = await splitsOf(directory, workspaceId, rows, query);

  const days = new Map<string, ShardSplit[]>();
  for (const split of query.order === "desc" ? splits : splits.reverse())
    (days.get(split.day) ?? days.set(split.day, []).get(split.day)!).push(split);

  const wanted = query.limit + 1;
  const order = query.order;
  const found: StoredTracedRun[] = [];
  let bytes = 0;
  let calls = 0;
  /** Where the next page starts when this one stopped early (bytes or shard calls). */
  let resume: Cursor | null = null;
  for (const [day, daySplits] of days) {
    if (calls + daySplits.length > budget.shardCalls) {
      if (calls === 0)
        throw new DomainError(
          "invalid",
          `The runs of ${day} are in ${daySplits.length} trace shards (projects, and the splits of busy project-days); one request reads at most ${budget.shardCalls}: narrow the query with session, or with an end_time before the day's later splits`,
        );
      // Every day before this one was read whole: continue at this day's end.
      resume = { start_time: order === "desc" ? nextDayStart(day) : `${day}T00:00:00.000000Z`, id: "" };
      break;
    }
    calls += daySplits.length;
    // Each shard gets its share of the bytes left. With several shards none returns a run past its
    // share, so the page stays within its bytes however many shards the day has.
    const share = Math.max(1, Math.floor((budget.pageBytes - bytes) / daySplits.length));
    const readShard = async ({ projectId, split }: ShardSplit, maxBytes: number, atLeastOne: boolean) =>
      JSON.parse(
        await shards
          .getByName(traceShardName(workspaceId, projectId, split))
          .query({ ...conditions, limit: wanted - found.length, maxBytes, select: query.select, atLeastOne }),
      ) as ShardRunsPage;
    const pages = await Promise.all(daySplits.map((split) => readShard(split, share, daySplits.length === 1)));
    const compare = compareRuns(order);
    // A shard that stopped early may hold more runs before the others' later ones: the merged day is
    // only complete before the earliest run a shard left out.
    const boundaryOf = (all: ShardRunsPage[]) =>
      all.reduce<Cursor | null>(
        (first, page) =>
          page.next && (!first || compare(page.next as StoredTracedRun, first as StoredTracedRun) < 0)
            ? page.next
            : first,
        null,
      );
    const mergedBefore = (all: ShardRunsPage[], boundary: Cursor | null) => {
      const runs = all.flatMap((page) => page.runs).sort(compare);
      return boundary ? runs.filter((run) => compare(run, boundary as StoredTracedRun) < 0) : runs;
    };
    let boundary = boundaryOf(pages);
    let merged = mergedBefore(pages, boundary);
    if (!merged.length && !found.length && boundary) {
      // Every share was smaller than its shard's next run: the shard holding the earliest of them is
      // read again alone with the whole budget, which always returns that run.
      const index = pages.findIndex((page) => page.next === boundary);
      calls += 1;
      pages[index] = await readShard(daySplits[index], budget.pageBytes - bytes, true);
      boundary = boundaryOf(pages);
      merged = mergedBefore(pages, boundary);
    }
    const sizes = new Map<StoredTracedRun, number>();
    for (const page of pages) page.runs.forEach((run, i) => sizes.set(run, page.sizes[i]));
    let cut = boundary !== null;
    for (const run of merged) {
      if (found.length >= wanted) break;
      const size = sizes.get(run) ?? 0;
      if (found.length > 0 && bytes + size > budget.pageBytes) {
        cut = true;
        break;
      }
      found.push(run);
      bytes += size;
    }
    if (found.length >= wanted) break;
    if (cut) {
      const last = found.at(-1)!;
      resume = { start_time: last.start_time, id: last.id };
      break;
    }
  }

  const page = found.slice(0, query.limit);
  const last = page.at(-1);
  const next =
    found.length > query.limit && last
      ? encodeCursor({ start_time: last.start_time, id: last.id })
      : resume
        ? encodeCursor(resume)
        : null;
  return { runs: page.map((run) => projectRun(run, query.select)), cursors: { next, prev: null } };
}

/** Shard answers folded together at a time, so the Worker holds at most this many sketches at once. */
const STATS_SHARDS_AT_ONCE = 32;

/** Shards (project-days) one stats request reads: each is a call, and a request has a bounded number. */
const MAX_STATS_SHARDS = 500;

/**
 * `POST /runs/stats`: the filters of `/runs/query` (its limit, cursor, select and order do not
 * apply), summed over every matching shard.
 */
export async function runStats(
  db: TracesDatabase,
  shards: DurableObjectNamespace<TraceShardDO>,
  workspaceId: string,
  query: RunsQuery,
  budget: QueryBudget = queryBudget({}),
  directory: WorkspaceBindings,
): Promise<RunStats> {
  const { after: _after, order: _order, ...conditions } = shardQuery(query, undefined);
  const rows = await splitsOf(
    directory,
    workspaceId,
    await matchingShards(db, workspaceId, query, undefined, directory),
    query,
  );
  const most = Math.min(MAX_STATS_SHARDS, budget.shardCalls);
  if (rows.length > most) {
    throw new DomainError(
      "invalid",
      `These filters cover ${rows.length} trace shards (project-days and their splits); run stats read at most ${most}: narrow them with session, start_time or end_time`,
    );
  }
  // A bounded number of shard calls in flight at once; each batch is folded into the stats so far,
  // so the Worker holds one batch of sketches, never every shard's.
  let merged: ShardRunStats[] = [];
  for (const group of chunked(rows, STATS_SHARDS_AT_ONCE)) {
    const batch = await Promise.all(
      group.map((row) => shards.getByName(traceShardName(workspaceId, row.projectId, row.split)).stats(conditions)),
    );
    merged = [foldRunStats([...merged, ...batch])];
  }
  return mergeRunStats(merged);
}
