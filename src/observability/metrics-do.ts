import { DurableObject } from "cloudflare:workers";
import { LATENCY_BUCKETS, type Series } from "./metrics.ts";

/**
 * One shard of the HTTP metrics' totals: the isolates that picked it add their counts here, and
 * `/metrics` sums every shard (`METRICS_SHARDS`, see src/http/metrics.ts).
 */
export class MetricsDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS http_series (
      method TEXT NOT NULL, route TEXT NOT NULL, status INTEGER NOT NULL,
      count INTEGER NOT NULL, sum_seconds REAL NOT NULL, buckets TEXT NOT NULL,
      PRIMARY KEY (method, route, status))`);
  }

  /** Adds one isolate's deltas to the totals, atomically. */
  add(deltas: Series[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const delta of deltas) {
        const current = this.ctx.storage.sql
          .exec<{ count: number; sum_seconds: number; buckets: string }>(
            "SELECT count, sum_seconds, buckets FROM http_series WHERE method = ? AND route = ? AND status = ?",
            delta.method,
            delta.route,
            delta.status,
          )
          .toArray()[0];
        const buckets = current
          ? (JSON.parse(current.buckets) as number[])
          : new Array(LATENCY_BUCKETS.length + 1).fill(0);
        delta.buckets.forEach((n, i) => (buckets[i] = (buckets[i] ?? 0) + n));
        this.ctx.storage.sql.exec(
          `INSERT INTO http_series (method, route, status, count, sum_seconds, buckets) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (method, route, status) DO UPDATE SET count = excluded.count, sum_seconds = excluded.sum_seconds, buckets = excluded.buckets`,
          delta.method,
          delta.route,
          delta.status,
          (current?.count ?? 0) + delta.count,
          (current?.sum_seconds ?? 0) + delta.sumSeconds,
          JSON.stringify(buckets),
        );
      }
    });
  }

  snapshot(): Series[] {
    return this.ctx.storage.sql
      .exec<{ method: string; route: string; status: number; count: number; sum_seconds: number; buckets: string }>(
        "SELECT method, route, status, count, sum_seconds, buckets FROM http_series",
      )
      .toArray()
      .map((row) => ({
        method: row.method,
        route: row.route,
        status: row.status,
        count: row.count,
        sumSeconds: row.sum_seconds,
        buckets: JSON.parse(row.buckets) as number[],
      }));
  }
}
