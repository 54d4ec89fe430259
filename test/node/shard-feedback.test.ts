// The trace shard's feedback copy in node:sqlite: feedback_stats, the export's feedback_stats column,
// feedback filters and the shard part of run stats.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { STATS_MERGED_POINTS, STATS_SKETCH_POINTS } from "../../src/core/limits.ts";
import { shardColumns } from "../../src/export/columns.ts";
import { readExportPage } from "../../src/tracing/export-page.ts";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { compileFilter } from "../../src/tracing/filter/compile.ts";
import {
  mergeRunStats,
  mergeSketches,
  quantile,
  type Sketch,
  shardRunStats,
  sketchQuantile,
} from "../../src/tracing/run-stats.ts";
import { RunPostSchema } from "../../src/tracing/schemas.ts";
import { deleteFeedback, feedbackStatsOf, putFeedback } from "../../src/tracing/shard-feedback.ts";
import { ShardRuns } from "../../src/tracing/shard-runs.ts";
import { nodeSql } from "./node-sqlite.ts";

const SESSION = "00000000-0000-4000-8000-000000000001";

function run(name: string, start: string, end: string, fields: Record<string, unknown> = {}) {
  return RunPostSchema.parse({ id: randomUUID(), name, run_type: "llm", start_time: start, end_time: end, ...fields });
}

function setup() {
  const sql = nodeSql();
  const runs = new ShardRuns(sql);
  const a = run("a", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:01.000Z");
  const b = run("b", "2026-11-20T10:00:05.000Z", "2026-11-20T10:00:09.000Z", {
    error: "x",
    events: [{ name: "new_token", time: "2026-11-20T10:00:05.250Z" }],
  });
  runs.ingest([a, b], [], SESSION);
  putFeedback(sql, [
    { id: randomUUID(), run_id: a.id, key: "thumbs", score: 1, value: null },
    { id: randomUUID(), run_id: a.id, key: "thumbs", score: 0, value: '"meh"' },
    { id: "f-b", run_id: b.id, key: "label", score: null, value: '"spam"' },
  ]);
  return { sql, runs, a, b };
}

describe("shard feedback", () => {
  it("computes feedback_stats per key, null scores and string values included", () => {
    const { sql, a, b } = setup();
    const stats = feedbackStatsOf(sql, [a.id, b.id, randomUUID()]);
    expect(stats.get(a.id)).toEqual({ thumbs: { n: 2, avg: 0.5, stdev: 0.5, values: { meh: 1 } } });
    expect(stats.get(b.id)).toEqual({ label: { n: 1, avg: null, stdev: null, values: { spam: 1 } } });
    expect(stats.size).toBe(2);
    deleteFeedback(sql, "f-b");
    expect(feedbackStatsOf(sql, [b.id]).size).toBe(0);
  });

  it("exports feedback_stats as JSON text, null without feedback", () => {
    const { sql, a, b } = setup();
    deleteFeedback(sql, "f-b");
    const page = readExportPage(sql, {
      start: "2026-11-20T00:00:00.000Z",
      end: "2026-11-21T00:00:00.000Z",
      limit: 10,
      maxBytes: 1e9,
      columns: shardColumns(["id", "feedback_stats"]),
    });
    const ids = JSON.parse((page.columns.id as { strings: string }).strings) as string[];
    const stats = JSON.parse((page.columns.feedback_stats as { strings: string }).strings) as (string | null)[];
    expect(ids).toEqual([a.id, b.id]);
    expect(JSON.parse(stats[0]!)).toEqual({ thumbs: { n: 2, avg: 0.5 } });
    expect(stats[1]).toBeNull();
  });

  it("filters runs by feedback_key and feedback_score on the same feedback", () => {
    const { runs, a, b } = setup();
    const names = (text: string) =>
      runs.query({ limit: 10, filters: [compileFilter(parseFilter(text))] }).map((r) => r.name);
    expect(names('eq(feedback_key, "thumbs")')).toEqual(["a"]);
    expect(names('and(eq(feedback_key, "label"), eq(feedback_score, 1))')).toEqual([]);
    expect(names("eq(feedback_score, null)")).toEqual(["b"]);
    expect(names('or(eq(feedback_key, "label"), gte(feedback_score, 1))')).toEqual(["b", "a"]);
    expect(names('search(feedback_key, "lab")')).toEqual(["b"]);
    expect(a.id).not.toBe(b.id);
  });

  it("sums a shard's runs and merges shards into RunStats", () => {
    const { sql, runs } = setup();
    const { where, params } = runs.conditions({});
    const part = shardRunStats(sql, where, params);
    expect(part).toMatchObject({
      run_count: 2,
      error_count: 1,
      streaming_count: 1,
      first_token_latencies: { n: 1, values: [0.25], ranks: [0] },
    });
    expect(part.latencies).toEqual({ n: 2, values: [1, 4], ranks: [0, 1] });
    const stats = mergeRunStats([part, part]);
    expect(stats).toMatchObject({
      run_count: 4,
      latency_p50: 2.5,
      latency_avg: 2.5,
      error_rate: 0.5,
      streaming_rate: 0.5,
      first_token_p50: 0.25,
      feedback_stats: { thumbs: { n: 4, avg: 0.5 }, label: { n: 2, avg: null } },
      total_cost: null,
      last_run_start_time: "2026-11-20T10:00:05.000000Z",
    });
    expect(mergeRunStats([])).toMatchObject({ run_count: 0, latency_p50: null, error_rate: null });
    expect(quantile([1, 2, 3, 4], 0.99)).toBeCloseTo(3.97);
  });

  it("counts every run but hands over at most STATS_SKETCH_POINTS values per list, percentiles within 1%", () => {
    const sql = nodeSql();
    const runs = new ShardRuns(sql);
    const count = STATS_SKETCH_POINTS * 3 + 7;
    // Latencies 1 ms .. count ms, in a shuffled order of ids.
    const many = Array.from({ length: count }, (_, i) =>
      run(`r${i}`, "2026-11-20T10:00:00.000Z", new Date(Date.parse("2026-11-20T10:00:00.000Z") + i + 1).toISOString()),
    );
    for (let i = 0; i < many.length; i += 1000) runs.ingest(many.slice(i, i + 1000), [], SESSION);
    const stats = shardRunStats(sql, [], []);
    expect(stats.run_count).toBe(count);
    expect(stats.latencies.n).toBe(count);
    expect(stats.latencies.values).toHaveLength(STATS_SKETCH_POINTS);
    expect(stats.latencies.values[0]).toBe(0.001);
    expect(stats.latencies.values.at(-1)).toBe(count / 1000);
    const merged = mergeRunStats([stats, stats, stats]);
    const exact = (p: number) =>
      quantile(
        Array.from({ length: count * 3 }, (_, i) => (Math.floor(i / 3) + 1) / 1000),
        p,
      )!;
    expect(Math.abs(merged.latency_p50! - exact(0.5))).toBeLessThan((count / 1000) * 0.01);
    expect(Math.abs(merged.latency_p99! - exact(0.99))).toBeLessThan((count / 1000) * 0.01);
    // The average comes from the exact sum.
    expect(merged.latency_avg).toBeCloseTo((count + 1) / 2 / 1000, 9);
  });

  it("merges sketches exactly while they hold every value, and keeps at most STATS_MERGED_POINTS", () => {
    const whole = (values: number[]): Sketch => {
      const sorted = [...values].sort((a, b) => a - b);
      return { n: sorted.length, values: sorted, ranks: sorted.map((_, i) => i) };
    };
    const a = [5, 1, 3, 3, 9];
    const b = [3, 2, 8];
    const merged = mergeSketches([whole(a), whole(b)]);
    expect(merged).toEqual(whole([...a, ...b]));
    for (const p of [0, 0.25, 0.5, 0.9, 0.99, 1])
      expect(sketchQuantile(merged, p)).toBe(
        quantile(
          [...a, ...b].sort((x, y) => x - y),
          p,
        ),
      );
    // Many shards of many values: bounded, and still close.
    const parts = Array.from({ length: 40 }, (_, s) => whole(Array.from({ length: 500 }, (_, i) => s * 500 + i)));
    const big = mergeSketches(parts);
    expect(big.n).toBe(20_000);
    expect(big.values.length).toBeLessThanOrEqual(STATS_MERGED_POINTS + 1);
    expect(Math.abs(sketchQuantile(big, 0.5)! - 9999.5)).toBeLessThan(200);
    expect(Math.abs(sketchQuantile(big, 0.99)! - 19_799.01)).toBeLessThan(200);
  });
});
