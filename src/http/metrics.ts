import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { unavailable } from "../core/errors.ts";
import { METRICS_SHARDS } from "../core/limits.ts";
import { log } from "../observability/log.ts";
import { MetricsBuffer, type Series, type SeriesKey, sumSeries } from "../observability/metrics.ts";
import type { AppEnv } from "./app-env.ts";

const FLUSH_INTERVAL_MS = 5_000;

/**
 * The name of metrics shard `index`. Shard 0 keeps the name of the single object that held every
 * count before the shards, so a deployment's totals carry over.
 */
export const metricsShardName = (index: number) => (index === 0 ? "global" : `shard-${index}`);

function shardStub(env: Env, index: number) {
  return env.METRICS.get(env.METRICS.idFromName(metricsShardName(index)));
}

/** One isolate's metrics: what it recorded since its last flush, and the shard it flushes to. */
export class IsolateMetrics {
  readonly buffer = new MetricsBuffer();
  #lastFlush = Date.now();
  #shard: number | undefined;

  constructor(private readonly random: () => number = Math.random) {}

  /** Picked on first use: Workers refuse random values in the global scope, where this isolate's instance is made. */
  get shard(): number {
    this.#shard ??= Math.min(METRICS_SHARDS - 1, Math.floor(this.random() * METRICS_SHARDS));
    return this.#shard;
  }

  record(key: SeriesKey, seconds: number): void {
    this.buffer.record(key, seconds);
  }

  get flushDue(): boolean {
    return Date.now() - this.#lastFlush >= FLUSH_INTERVAL_MS;
  }

  /** Sends the pending observations to this isolate's shard; on failure keeps them for next time. */
  async flush(env: Env): Promise<void> {
    this.#lastFlush = Date.now();
    const pending = this.buffer.drain();
    if (pending.length === 0) return;
    try {
      await shardStub(env, this.shard).add(pending);
    } catch (error) {
      this.buffer.restore(pending);
      log.warn("metrics flush failed", { error: String(error), shard: this.shard });
    }
  }
}

const isolate = new IsolateMetrics();

/** Sends this isolate's pending observations to its metrics shard. */
export function flushMetrics(env: Env): Promise<void> {
  return isolate.flush(env);
}

/**
 * Deployment-wide totals, including what this isolate has not flushed yet: every shard's, summed. A
 * shard that does not answer fails the scrape (503) rather than report totals that went down.
 */
export async function collectMetrics(env: Env): Promise<Series[]> {
  await flushMetrics(env);
  const snapshots = await Promise.all(
    Array.from({ length: METRICS_SHARDS }, (_, index) =>
      shardStub(env, index)
        .snapshot()
        .catch((error: unknown) => {
          log.warn("metrics shard unavailable", { error: String(error), shard: index });
          throw unavailable(`Metrics shard ${index} of ${METRICS_SHARDS} did not answer; try again`);
        }),
    ),
  );
  return sumSeries(snapshots);
}

/**
 * Times every request and counts it by method, route pattern (never the raw path, to bound label
 * cardinality) and status.
 */
export const httpMetrics = createMiddleware<AppEnv>(async (c, next) => {
  const started = performance.now();
  await next();
  // The last matched route is the endpoint even when a middleware before it answered (401, 413).
  const matched = matchedRoutes(c).at(-1)?.path;
  const route = !matched || matched === "*" || matched === "/*" ? "unmatched" : matched;
  isolate.record({ method: c.req.method, route, status: c.res.status }, (performance.now() - started) / 1000);
  if (isolate.flushDue) c.executionCtx.waitUntil(flushMetrics(c.env));
});
