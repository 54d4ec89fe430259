import type { SqlStore } from "../db/sql.ts";
import { FIRST_TOKEN_TIME_SQL } from "./export-page.ts";

/**
 * `POST /runs/stats`: each shard sums its matching runs and hands over the values percentiles need
 * (latencies, first-token latencies, costs, tokens); the Worker merges the shards and computes
 * LangSmith's `RunStats` fields.
 */

/** What one shard contributes. Value lists are unsorted; nulls are left out. */
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
  latencies: number[];
  first_token_latencies: number[];
  costs: number[];
  tokens: number[];
  prompt_token_values: number[];
  completion_token_values: number[];
  /** Per feedback key: count, sum and count of numeric scores. */
  feedback: Record<string, { n: number; sum: number; scored: number }>;
};

/**
 * The sums and value lists of the runs matching `where`, in one pass of SQLite over them. First-token
 * latencies come from julianday() differences, exact to about 0.1 ms, so they are rounded to milliseconds.
 */
/** Runs per shard whose values feed the percentiles (sums and counts cover every run). */
export const STATS_SAMPLE_SIZE = 20_000;

export function shardRunStats(sql: SqlStore, where: string[], params: (string | number | null)[]): ShardRunStats {
  const clause = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  const firstToken = FIRST_TOKEN_TIME_SQL;
  const [row] = sql.all<Record<string, string | number | null>>(
    `WITH matched AS (SELECT runs.id, runs.start_time, runs.error, runs.latency, runs.total_tokens, runs.prompt_tokens,
        runs.completion_tokens, runs.total_cost, runs.prompt_cost, runs.completion_cost, ${firstToken} AS first_token_time
      FROM runs${clause}),
    -- The value lists behind percentiles: at most STATS_SAMPLE_SIZE runs, sampled at random beyond that,
    -- so the lists stay within SQLite's string size on any shard.
    sampled AS (SELECT * FROM matched ORDER BY random() LIMIT ${STATS_SAMPLE_SIZE})
    SELECT count(*) AS run_count,
      coalesce(sum(error IS NOT NULL), 0) AS error_count,
      coalesce(sum(julianday(first_token_time) IS NOT NULL), 0) AS streaming_count,
      coalesce(sum(total_tokens), 0) AS total_tokens,
      coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
      coalesce(sum(completion_tokens), 0) AS completion_tokens,
      sum(total_cost) AS total_cost, sum(prompt_cost) AS prompt_cost, sum(completion_cost) AS completion_cost,
      max(start_time) AS last_run_start_time,
      (SELECT json_group_array(latency) FROM sampled WHERE latency IS NOT NULL) AS latencies,
      (SELECT json_group_array(round((julianday(first_token_time) - julianday(start_time)) * 86400.0, 3)) FROM sampled WHERE julianday(first_token_time) IS NOT NULL) AS first_token_latencies,
      (SELECT json_group_array(total_cost) FROM sampled WHERE total_cost IS NOT NULL) AS costs,
      (SELECT json_group_array(total_tokens) FROM sampled WHERE total_tokens IS NOT NULL) AS tokens,
      (SELECT json_group_array(prompt_tokens) FROM sampled WHERE prompt_tokens IS NOT NULL) AS prompt_token_values,
      (SELECT json_group_array(completion_tokens) FROM sampled WHERE completion_tokens IS NOT NULL) AS completion_token_values,
      (SELECT json_group_object(key, json_object('n', n, 'sum', total, 'scored', scored)) FROM (
        SELECT feedback.key AS key, count(*) AS n, coalesce(sum(feedback.score), 0) AS total, count(feedback.score) AS scored
        FROM feedback WHERE feedback.run_id IN (SELECT id FROM matched) GROUP BY feedback.key)) AS feedback
    FROM matched`,
    ...params,
  );
  const list = (text: unknown) => (typeof text === "string" ? (JSON.parse(text) as number[]) : []);
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
    latencies: list(row?.latencies),
    first_token_latencies: list(row?.first_token_latencies),
    costs: list(row?.costs),
    tokens: list(row?.tokens),
    prompt_token_values: list(row?.prompt_token_values),
    completion_token_values: list(row?.completion_token_values),
    feedback: typeof row?.feedback === "string" ? (JSON.parse(row.feedback) as ShardRunStats["feedback"]) : {},
  };
}

/** LangSmith's `RunStats` (the fields of `get_run_stats`). */
export type RunStats = {
  run_count: number;
  latency_p50: number | null;
  latency_p99: number | null;
  latency_avg: number | null;
  first_token_p50: number | null;
  first_token_p99: number | null;
  total_tokens: number;
  prompt_tokens: number;
  completion_tokens: number;
  median_tokens: number | null;
  prompt_tokens_p50: number | null;
  completion_tokens_p50: number | null;
  tokens_p99: number | null;
  prompt_tokens_p99: number | null;
  completion_tokens_p99: number | null;
  last_run_start_time: string | null;
  feedback_stats: Record<string, { n: number; avg: number | null }>;
  run_facets: unknown[];
  error_rate: number | null;
  streaming_rate: number | null;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  cost_p50: number | null;
  cost_p99: number | null;
};

/** The `p`-quantile (0..1) of sorted values, linearly interpolated; null for none. */
export function quantile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  const position = (sorted.length - 1) * p;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

const addCost = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);

export function mergeRunStats(parts: ShardRunStats[]): RunStats {
  const all = (pick: (part: ShardRunStats) => number[]) => parts.flatMap(pick).sort((a, b) => a - b);
  const latencies = all((p) => p.latencies);
  const firstTokens = all((p) => p.first_token_latencies);
  const costs = all((p) => p.costs);
  const tokens = all((p) => p.tokens);
  const prompt = all((p) => p.prompt_token_values);
  const completion = all((p) => p.completion_token_values);
  const runCount = parts.reduce((sum, p) => sum + p.run_count, 0);
  const sum = (pick: (part: ShardRunStats) => number) => parts.reduce((total, p) => total + pick(p), 0);
  const feedback: Record<string, { n: number; sum: number; scored: number }> = {};
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
  return {
    run_count: runCount,
    latency_p50: quantile(latencies, 0.5),
    latency_p99: quantile(latencies, 0.99),
    latency_avg: latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : null,
    first_token_p50: quantile(firstTokens, 0.5),
    first_token_p99: quantile(firstTokens, 0.99),
    total_tokens: sum((p) => p.total_tokens),
    prompt_tokens: sum((p) => p.prompt_tokens),
    completion_tokens: sum((p) => p.completion_tokens),
    median_tokens: quantile(tokens, 0.5),
    prompt_tokens_p50: quantile(prompt, 0.5),
    completion_tokens_p50: quantile(completion, 0.5),
    tokens_p99: quantile(tokens, 0.99),
    prompt_tokens_p99: quantile(prompt, 0.99),
    completion_tokens_p99: quantile(completion, 0.99),
    last_run_start_time: last ?? null,
    feedback_stats: Object.fromEntries(
      Object.entries(feedback).map(([key, { n, sum, scored }]) => [key, { n, avg: scored ? sum / scored : null }]),
    ),
    run_facets: [],
    error_rate: runCount ? sum((p) => p.error_count) / runCount : null,
    streaming_rate: runCount ? sum((p) => p.streaming_count) / runCount : null,
    total_cost: parts.reduce<number | null>((total, p) => addCost(total, p.total_cost), null),
    prompt_cost: parts.reduce<number | null>((total, p) => addCost(total, p.prompt_cost), null),
    completion_cost: parts.reduce<number | null>((total, p) => addCost(total, p.completion_cost), null),
    cost_p50: quantile(costs, 0.5),
    cost_p99: quantile(costs, 0.99),
  };
}
