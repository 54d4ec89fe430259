import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { METRICS_SHARDS } from "../../src/core/limits.ts";
import { collectMetrics, IsolateMetrics, metricsShardName } from "../../src/http/metrics.ts";
import worker from "../../src/index.ts";
import { guardEnv } from "../../src/limits-guard/bindings.ts";
import { inInvocation, invocationCounts } from "../../src/limits-guard/invocation.ts";
import { guardLimits } from "../../src/limits-guard/limits.ts";
import {
  LATENCY_BUCKETS,
  MetricsBuffer,
  renderPrometheus,
  type Series,
  sumSeries,
} from "../../src/observability/metrics.ts";
import { BOOTSTRAP_KEY, call } from "./helpers.ts";

describe("metrics buffer", () => {
  it("buckets observations and keeps them across a failed flush", () => {
    const buffer = new MetricsBuffer();
    buffer.record({ method: "GET", route: "/ok", status: 200 }, 0.003);
    buffer.record({ method: "GET", route: "/ok", status: 200 }, 0.2);
    buffer.record({ method: "GET", route: "/ok", status: 200 }, 99);
    const drained = buffer.drain();
    expect(buffer.size).toBe(0);
    expect(drained).toHaveLength(1);
    expect(drained[0].count).toBe(3);
    expect(drained[0].buckets[0]).toBe(1);
    expect(drained[0].buckets[LATENCY_BUCKETS.indexOf(0.25)]).toBe(1);
    expect(drained[0].buckets[LATENCY_BUCKETS.length]).toBe(1);
    buffer.restore(drained);
    buffer.record({ method: "GET", route: "/ok", status: 200 }, 0.003);
    expect(buffer.drain()[0]).toMatchObject({ count: 4, sumSeconds: 0.003 + 0.2 + 99 + 0.003 });
  });

  it("renders cumulative Prometheus buckets and escapes labels", () => {
    const buffer = new MetricsBuffer();
    buffer.record({ method: "GET", route: '/a"b', status: 500 }, 0.02);
    buffer.record({ method: "GET", route: '/a"b', status: 500 }, 0.04);
    const text = renderPrometheus(buffer.drain());
    expect(text).toContain('http_requests_total{method="GET",route="/a\\"b",status="500"} 2');
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/a\\"b",status="500",le="0.01"} 0',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/a\\"b",status="500",le="0.025"} 1',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/a\\"b",status="500",le="0.05"} 2',
    );
    expect(text).toContain(
      'http_request_duration_seconds_bucket{method="GET",route="/a\\"b",status="500",le="+Inf"} 2',
    );
  });
});

describe("metrics shards", () => {
  const snapshot = async (index: number) =>
    (await env.METRICS.get(env.METRICS.idFromName(metricsShardName(index))).snapshot()) as Series[];

  it("spread the isolates' flushes: each isolate picks one shard at random, once", async () => {
    const picks = Array.from({ length: METRICS_SHARDS }, (_, i) => new IsolateMetrics(() => i / METRICS_SHARDS));
    expect(picks.map((isolate) => isolate.shard)).toEqual(Array.from({ length: METRICS_SHARDS }, (_, i) => i));
    expect(new IsolateMetrics(() => 0.999999).shard).toBe(METRICS_SHARDS - 1);

    let draws = 0;
    const isolate = new IsolateMetrics(() => {
      draws += 1;
      return 5 / METRICS_SHARDS;
    });
    for (const route of ["/spread/a", "/spread/b"]) {
      isolate.record({ method: "GET", route, status: 200 }, 0.01);
      await isolate.flush(env);
    }
    expect(draws).toBe(1);
    const flushed = (await snapshot(5)).filter((s) => s.route.startsWith("/spread/"));
    expect(flushed.map((s) => s.route).sort()).toEqual(["/spread/a", "/spread/b"]);
    for (const other of [0, 4, 6]) {
      expect((await snapshot(other)).some((s) => s.route.startsWith("/spread/"))).toBe(false);
    }
  });

  it("are summed by /metrics: two isolates on two shards count as one deployment", async () => {
    const first = new IsolateMetrics(() => 1 / METRICS_SHARDS);
    const second = new IsolateMetrics(() => (METRICS_SHARDS - 2) / METRICS_SHARDS);
    first.record({ method: "GET", route: "/summed", status: 200 }, 0.003);
    first.record({ method: "GET", route: "/summed", status: 200 }, 0.2);
    second.record({ method: "GET", route: "/summed", status: 200 }, 0.04);
    second.record({ method: "POST", route: "/summed", status: 201 }, 0.04);
    await first.flush(env);
    await second.flush(env);
    // Each shard holds only its isolate's part.
    expect((await snapshot(1)).find((s) => s.route === "/summed")?.count).toBe(2);
    expect((await snapshot(METRICS_SHARDS - 2)).filter((s) => s.route === "/summed")).toHaveLength(2);

    const text = await (await call("/metrics")).text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/summed",status="200"\} 3$/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/summed",status="201"\} 1$/m);
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{method="GET",route="\/summed",status="200",le="0.005"\} 1$/m,
    );
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{method="GET",route="\/summed",status="200",le="0.05"\} 2$/m,
    );
    const sum = text.match(/^http_request_duration_seconds_sum\{method="GET",route="\/summed",status="200"\} (\S+)$/m);
    expect(Number(sum?.[1])).toBeCloseTo(0.243, 9);
  });

  it("are read within the Free plan's 50 subrequests: one flush and one call per shard", async () => {
    const free = guardLimits({ LIMITS_GUARD: "free" })!;
    const counts = await inInvocation(free, null, async () => {
      await collectMetrics(guardEnv(env, free));
      return invocationCounts();
    });
    expect(counts?.subrequests).toBeLessThanOrEqual(METRICS_SHARDS + 1);
    expect(counts?.subrequests).toBeGreaterThanOrEqual(METRICS_SHARDS);
    expect(METRICS_SHARDS + 1).toBeLessThan(free.subrequests);
  });

  it("that does not answer fails the scrape with 503 instead of reporting lower totals", async () => {
    const broken = 3;
    const METRICS = {
      idFromName: (name: string) => env.METRICS.idFromName(name),
      get: (id: DurableObjectId) =>
        id.equals(env.METRICS.idFromName(metricsShardName(broken)))
          ? { add: async () => {}, snapshot: () => Promise.reject(new Error("Durable Object is overloaded")) }
          : env.METRICS.get(id),
    } as unknown as Env["METRICS"];
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request("http://platform.test/metrics", { headers: { "X-Api-Key": BOOTSTRAP_KEY } }),
      { ...env, METRICS },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      detail: `Metrics shard ${broken} of ${METRICS_SHARDS} did not answer; try again`,
    });
  });

  it("sum equal series and keep the others apart", () => {
    const a = new MetricsBuffer();
    a.record({ method: "GET", route: "/x", status: 200 }, 0.003);
    const b = new MetricsBuffer();
    b.record({ method: "GET", route: "/x", status: 200 }, 7);
    b.record({ method: "GET", route: "/x", status: 500 }, 7);
    const total = sumSeries([a.drain(), b.drain(), []]);
    expect(total).toHaveLength(2);
    expect(total.find((s) => s.status === 200)).toMatchObject({ count: 2, sumSeconds: 7.003 });
    expect(total.find((s) => s.status === 200)?.buckets.reduce((x, y) => x + y)).toBe(2);
  });
});
