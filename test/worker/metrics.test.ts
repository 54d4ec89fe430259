import { describe, expect, it } from "vitest";
import { LATENCY_BUCKETS, MetricsBuffer, renderPrometheus } from "../../src/observability/metrics.ts";

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
