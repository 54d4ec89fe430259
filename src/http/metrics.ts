import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { log } from "../observability/log.ts";
import { MetricsBuffer, type Series } from "../observability/metrics.ts";
import type { AppEnv } from "./app-env.ts";

const FLUSH_INTERVAL_MS = 5_000;
const buffer = new MetricsBuffer();
let lastFlush = Date.now();

function metricsStub(env: Env) {
  return env.METRICS.get(env.METRICS.idFromName("global"));
}

/** Sends this isolate's pending observations to the MetricsDO; on failure keeps them for next time. */
export async function flushMetrics(env: Env): Promise<void> {
  lastFlush = Date.now();
  const pending = buffer.drain();
  if (pending.length === 0) return;
  try {
    await metricsStub(env).add(pending);
  } catch (error) {
    buffer.restore(pending);
    log.warn("metrics flush failed", { error: String(error) });
  }
}

/** Deployment-wide totals, including what this isolate has not flushed yet. */
export async function collectMetrics(env: Env): Promise<Series[]> {
  await flushMetrics(env);
  return metricsStub(env).snapshot();
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
  buffer.record({ method: c.req.method, route, status: c.res.status }, (performance.now() - started) / 1000);
  if (Date.now() - lastFlush >= FLUSH_INTERVAL_MS) c.executionCtx.waitUntil(flushMetrics(c.env));
});
