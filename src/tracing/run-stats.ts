import { STATS_MERGED_POINTS, STATS_SKETCH_POINTS } from "../core/limits.ts";
import type { SqlStore } from "../db/sql.ts";
import { FIRST_TOKEN_TIME_SQL } from "./export-page.ts";
import type { RunStats } from "./schemas.ts";

/**
 * `POST /runs/stats`: each shard sums its matching runs and hands over a quantile sketch of each
 * value percentiles need (latencies, first-token latencies, costs, tokens); the Worker merges the
 * shards' sketches and computes LangSmith's `RunStats` fields.
 *
 * A sketch is a list of (value, rank) points of the sorted values: every value while a shard has at
 * most STATS_SKETCH_POINTS of them (percentiles are then exact), else that many evenly spaced order
 * statistics, the smallest and largest included. Merging estimates each point's rank among all
 * values and keeps at most STATS_MERGED_POINTS, so memory is bounded whatever the number of runs
 * and shards; a percentile is then off by at most about 1% of the runs in rank. Counts, sums, the
 * average latency and the error and streaming rates are always exact.
 */

/** Points of the sorted values: `values[i]` is the value at 0-based rank `ranks[i]` among `n`. */
export type Sketch = { n: number; values: number[]; ranks: number[] };

/** What one shard contributes. Nulls are left out of the sketches. */
export type ShardRunStats = {
  run_count: number;
  error_count: number;
  streaming_count: number;
  total_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  last_run_start_time: string | null;
  latency_sum: number;
  latencies: Sketch;
  first_token_latencies: Sketch;
  costs: Sketch;
  tokens: Sketch;
  prompt_token_values: Sketch;
  completion_token_values: Sketch;
  /** Per feedback key: count, sum and count of numeric scores. */
  feedback: Record<string, { n: number; sum: number; scored: number }>;
};

/**
 * SQL selecting the sketch of `expression` over the matched runs whose `condition` holds: every
 * value up to STATS_SKETCH_POINTS, else the first row of each of that many equal rank steps.
 */
function sketchSql(expression: string, condition: string): string {
  const k = STATS_SKETCH_POINTS;
  return `(SELECT json_group_array(json_array(v, r - 1)) FROM (
      SELECT v, row_number() OVER (ORDER BY v) AS r, count(*) OVER () AS n FROM (SELECT ${expression} AS v FROM matched WHERE ${condition}))
    WHERE n <= ${k} OR r = 1 OR ((r - 1) * ${k - 1}) / (n - 1) > ((r - 2) * ${k - 1}) / (n - 1))`;
}

/**
 * The sums and sketches of the runs matching `where`. First-token latencies come from julianday()
 * differences, exact to about 0.1 ms, so they are rounded to milliseconds.
 */
export function shardRunStats(sql: SqlStore, where: string[], params: (string | number | null)[]): ShardRunStats {
  const clause = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  const firstToken = FIRST_TOKEN_TIME_SQL;
  const firstTokenLatency = "round((julianday(first_token_time) - julianday(start_time)) * 86400.0, 3)";
  const [row] = sql.all<Record<string, string | number | null>>(
    `WITH matched AS (SELECT runs.id, runs.start_time, runs.error, runs.latency, runs.total_tokens, runs.prompt_tokens,
        runs.completion_tokens, runs.total_cost, runs.prompt_cost, runs.completion_cost, ${firstToken} AS first_token_time
      FROM runs${clause})
    SELECT count(*) AS run_count,
      coalesce(sum(error IS NOT NULL), 0) AS error_count,
      coalesce(sum(julianday(first_token_time) IS NOT NULL), 0) AS streaming_count,
      coalesce(sum(total_tokens), 0) AS total_tokens,
      coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
      coalesce(sum(completion_tokens), 0) AS completion_tokens,
      sum(total_cost) AS total_cost, sum(prompt_cost) AS prompt_cost, sum(completion_cost) AS completion_cost,
      max(start_time) AS last_run_start_time,
      coalesce(sum(latency), 0) AS latency_sum,
      ${sketchSql("latency", "latency IS NOT NULL")} AS latencies,
      ${sketchSql(firstTokenLatency, "julianday(first_token_time) IS NOT NULL")} AS first_token_latencies,
      ${sketchSql("total_cost", "total_cost IS NOT NULL")} AS costs,
      ${sketchSql("total_tokens", "total_tokens IS NOT NULL")} AS tokens,
      ${sketchSql("prompt_tokens", "prompt_tokens IS NOT NULL")} AS prompt_token_values,
      ${sketchSql("completion_tokens", "completion_tokens IS NOT NULL")} AS completion_token_values,
      (SELECT json_group_object(key, json_object('n', n, 'sum', total, 'scored', scored)) FROM (
        SELECT feedback.key AS key, count(*) AS n, coalesce(sum(feedback.score), 0) AS total, count(feedback.score) AS scored
        FROM feedback WHERE feedback.run_id IN (SELECT id FROM matched) GROUP BY feedback.key)) AS feedback,
      count(latency) AS latency_n, count(julianday(first_token_time)) AS first_token_n, count(total_cost) AS cost_n,
      count(total_tokens) AS tokens_n, count(prompt_tokens) AS prompt_n, count(completion_tokens) AS completion_n
    FROM matched`,
    ...params,
  );
  const sketch = (text: unknown, n: unknown): Sketch => {
    const points = (typeof text === "string" ? (JSON.parse(text) as [number, number][]) : []).sort(
      (a, b) => a[1] - b[1],
    );
    return { n: num(n), values: points.map((p) => p[0]), ranks: points.map((p) => p[1]) };
  };
  const num = (value: unknown) => (typeof value === "number" ? value : 0);
  const maybe = (value: unknown) => (typeof value === "number" ? value : null);
  return {
    run_count: num(row?.run_count),
    error_count: num(row?.error_count),
    streaming_count: num(row?.streaming_count),
    total_tokens: num(row?.total_tokens),
    prompt_tokens: num(row?.prompt_tokens),
    completion_tokens: num(row?.completion_tokens),
    total_cost: maybe(row?.total_cost),
    prompt_cost: maybe(row?.prompt_cost),
    completion_cost: maybe(row?.completion_cost),
    last_run_start_time: typeof row?.last_run_start_time === "string" ? row.last_run_start_time : null,
    latency_sum: num(row?.latency_sum),
    latencies: sketch(row?.latencies, row?.latency_n),
    first_token_latencies: sketch(row?.first_token_latencies, row?.first_token_n),
    costs: sketch(row?.costs, row?.cost_n),
    tokens: sketch(row?.tokens, row?.tokens_n),
    prompt_token_values: sketch(row?.prompt_token_values, row?.prompt_n),
    completion_token_values: sketch(row?.completion_token_values, row?.completion_n),
    feedback: typeof row?.feedback === "string" ? (JSON.parse(row.feedback) as ShardRunStats["feedback"]) : {},
  };
}

/**
 * One sketch of the values of several: each point's rank among all values is its rank in its own
 * sketch plus the values before it in the others (ties ordered by sketch), exact when the inputs
 * are; then at most STATS_MERGED_POINTS points are kept, evenly spaced by rank, the ends included.
 */
export function mergeSketches(sketches: Sketch[], most = STATS_MERGED_POINTS): Sketch {
  const n = sketches.reduce((sum, s) => sum + s.n, 0);
  // All points by value, ties by sketch: sweeping them, each sketch's values seen so far are the
  // ones before the current point (its last seen point's rank + 1).
  const order: [number, number, number][] = [];
  sketches.forEach((sketch, i) => {
    sketch.values.forEach((value, j) => {
      order.push([value, i, sketch.ranks[j]]);
    });
  });
  order.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const seen = new Array<number>(sketches.length).fill(0);
  let before = 0;
  const points: [number, number][] = [];
  for (const [value, i, rank] of order) {
    points.push([value, Math.min(rank + before - seen[i], n - 1)]);
    before += rank + 1 - seen[i];
    seen[i] = rank + 1;
  }
  points.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  let kept = points;
  if (points.length > most) {
    kept = [];
    let next = 0;
    for (let step = 0; step < most; step++) {
      const target = ((n - 1) * step) / (most - 1);
      while (next < points.length - 1 && points[next + 1][1] <= target) next++;
      if (kept.at(-1) !== points[next]) kept.push(points[next]);
    }
    if (kept.at(-1) !== points.at(-1)) kept.push(points.at(-1)!);
  }
  return { n, values: kept.map((p) => p[0]), ranks: kept.map((p) => p[1]) };
}

/** The `p`-quantile (0..1) of a sketch, linearly interpolated between ranks (exact for a whole list); null for none. */
export function sketchQuantile(sketch: Sketch, p: number): number | null {
  if (!sketch.values.length) return null;
  const target = (sketch.n - 1) * p;
  let i = 0;
  while (i < sketch.values.length - 1 && sketch.ranks[i + 1] <= target) i++;
  if (i === sketch.values.length - 1 || sketch.ranks[i] >= target) return sketch.values[i];
  const [r0, r1] = [sketch.ranks[i], sketch.ranks[i + 1]];
  const [v0, v1] = [sketch.values[i], sketch.values[i + 1]];
  return v0 + ((v1 - v0) * (target - r0)) / (r1 - r0);
}

const addCost = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);

/** Several shards' stats as one: sums added, sketches merged (bounded), so a request folds shards as they answer. */
export function foldRunStats(parts: ShardRunStats[]): ShardRunStats {
  const sum = (pick: (part: ShardRunStats) => number) => parts.reduce((total, p) => total + pick(p), 0);
  const feedback: ShardRunStats["feedback"] = {};
  for (const part of parts)
    for (const [key, entry] of Object.entries(part.feedback)) {
      const merged = (feedback[key] ??= { n: 0, sum: 0, scored: 0 });
      merged.n += entry.n;
      merged.sum += entry.sum;
      merged.scored += entry.scored;
    }
  const last = parts
    .map((p) => p.last_run_start_time)
    .filter((t) => t !== null)
    .sort()
    .at(-1);
  const folded: ShardRunStats = {
    run_count: sum((p) => p.run_count),
    error_count: sum((p) => p.error_count),
    streaming_count: sum((p) => p.streaming_count),
    total_tokens: sum((p) => p.total_tokens),
    prompt_tokens: sum((p) => p.prompt_tokens),
    completion_tokens: sum((p) => p.completion_tokens),
    total_cost: parts.reduce<number | null>((total, p) => addCost(total, p.total_cost), null),
    prompt_cost: parts.reduce<number | null>((total, p) => addCost(total, p.prompt_cost), null),
    completion_cost: parts.reduce<number | null>((total, p) => addCost(total, p.completion_cost), null),
    last_run_start_time: last ?? null,
    latency_sum: sum((p) => p.latency_sum),
    latencies: mergeSketches(parts.map((p) => p.latencies)),
    first_token_latencies: mergeSketches(parts.map((p) => p.first_token_latencies)),
    costs: mergeSketches(parts.map((p) => p.costs)),
    tokens: mergeSketches(parts.map((p) => p.tokens)),
    prompt_token_values: mergeSketches(parts.map((p) => p.prompt_token_values)),
    completion_token_values: mergeSketches(parts.map((p) => p.completion_token_values)),
    feedback,
  };
  return folded;
}

/** The `p`-quantile (0..1) of sorted values, linearly interpolated; null for none. */
export function quantile(sorted: number[], p: number): number | null {
  return sketchQuantile({ n: sorted.length, values: sorted, ranks: sorted.map((_, i) => i) }, p);
}

export function mergeRunStats(parts: ShardRunStats[]): RunStats {
  const all = foldRunStats(parts);
  const runCount = all.run_count;
  return {
    run_count: runCount,
    latency_p50: sketchQuantile(all.latencies, 0.5),
    latency_p99: sketchQuantile(all.latencies, 0.99),
    latency_avg: all.latencies.n ? all.latency_sum / all.latencies.n : null,
    first_token_p50: sketchQuantile(all.first_token_latencies, 0.5),
    first_token_p99: sketchQuantile(all.first_token_latencies, 0.99),
    total_tokens: all.total_tokens,
    prompt_tokens: all.prompt_tokens,
    completion_tokens: all.completion_tokens,
    median_tokens: sketchQuantile(all.tokens, 0.5),
    prompt_tokens_p50: sketchQuantile(all.prompt_token_values, 0.5),
    completion_tokens_p50: sketchQuantile(all.completion_token_values, 0.5),
    tokens_p99: sketchQuantile(all.tokens, 0.99),
    prompt_tokens_p99: sketchQuantile(all.prompt_token_values, 0.99),
    completion_tokens_p99: sketchQuantile(all.completion_token_values, 0.99),
    last_run_start_time: all.last_run_start_time,
    feedback_stats: Object.fromEntries(
      Object.entries(all.feedback).map(([key, { n, sum, scored }]) => [key, { n, avg: scored ? sum / scored : null }]),
    ),
    run_facets: [],
    error_rate: runCount ? all.error_count / runCount : null,
    streaming_rate: runCount ? all.streaming_count / runCount : null,
    total_cost: all.total_cost,
    prompt_cost: all.prompt_cost,
    completion_cost: all.completion_cost,
    cost_p50: sketchQuantile(all.costs, 0.5),
    cost_p99: sketchQuantile(all.costs, 0.99),
  };
}
