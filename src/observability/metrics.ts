/**
 * HTTP metrics. Each isolate accumulates counts and latency histograms in memory and flushes the
 * deltas every few seconds to one of `METRICS_SHARDS` MetricsDOs, so /metrics reports the whole
 * deployment, not one isolate, and no single object takes every isolate's flushes.
 */

/** Upper bounds of the latency histogram, in seconds (Prometheus convention). */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface SeriesKey {
  method: string;
  route: string;
  status: number;
}

export interface Series extends SeriesKey {
  count: number;
  sumSeconds: number;
  /** Non-cumulative counts per bucket of LATENCY_BUCKETS, plus one overflow slot (+Inf). */
  buckets: number[];
}

const seriesId = (key: SeriesKey) => `${key.method} ${key.route} ${key.status}`;

export class MetricsBuffer {
  #series = new Map<string, Series>();

  record(key: SeriesKey, seconds: number): void {
    const id = seriesId(key);
    let series = this.#series.get(id);
    if (!series) {
      series = { ...key, count: 0, sumSeconds: 0, buckets: new Array(LATENCY_BUCKETS.length + 1).fill(0) };
      this.#series.set(id, series);
    }
    series.count += 1;
    series.sumSeconds += seconds;
    const bucket = LATENCY_BUCKETS.findIndex((bound) => seconds <= bound);
    series.buckets[bucket === -1 ? LATENCY_BUCKETS.length : bucket] += 1;
  }

  get size(): number {
    return this.#series.size;
  }

  /** Hands over everything recorded since the last drain. */
  drain(): Series[] {
    const drained = [...this.#series.values()];
    this.#series.clear();
    return drained;
  }

  /** Puts drained series back (after a failed flush), so no observation is lost. */
  restore(series: Series[]): void {
    for (const s of series) {
      const id = seriesId(s);
      const current = this.#series.get(id);
      if (!current) {
        this.#series.set(id, { ...s, buckets: [...s.buckets] });
        continue;
      }
      current.count += s.count;
      current.sumSeconds += s.sumSeconds;
      s.buckets.forEach((n, i) => (current.buckets[i] += n));
    }
  }
}

/** The deployment's totals from the metrics shards' snapshots: series with the same labels summed. */
export function sumSeries(snapshots: Series[][]): Series[] {
  const total = new MetricsBuffer();
  for (const snapshot of snapshots) total.restore(snapshot);
  return total.drain();
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** Prometheus text exposition format (version 0.0.4). */
export function renderPrometheus(series: Series[]): string {
  const sorted = [...series].sort(
    (a, b) => a.route.localeCompare(b.route) || a.method.localeCompare(b.method) || a.status - b.status,
  );
  const labels = (s: SeriesKey, extra = "") =>
    `method="${escapeLabel(s.method)}",route="${escapeLabel(s.route)}",status="${s.status}"${extra}`;
  const lines = [
    "# HELP http_requests_total HTTP requests answered, by method, route and status.",
    "# TYPE http_requests_total counter",
    ...sorted.map((s) => `http_requests_total{${labels(s)}} ${s.count}`),
    "# HELP http_request_duration_seconds HTTP request latency, by method, route and status.",
    "# TYPE http_request_duration_seconds histogram",
  ];
  for (const s of sorted) {
    let cumulative = 0;
    LATENCY_BUCKETS.forEach((bound, i) => {
      cumulative += s.buckets[i];
      lines.push(`http_request_duration_seconds_bucket{${labels(s, `,le="${bound}"`)}} ${cumulative}`);
    });
    lines.push(`http_request_duration_seconds_bucket{${labels(s, ',le="+Inf"')}} ${s.count}`);
    lines.push(`http_request_duration_seconds_sum{${labels(s)}} ${s.sumSeconds}`);
    lines.push(`http_request_duration_seconds_count{${labels(s)}} ${s.count}`);
  }
  return `${lines.join("\n")}\n`;
}
