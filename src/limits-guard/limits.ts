/**
 * The Cloudflare limits the local runtime does not enforce and the limits guard does (see
 * `guardWorker`). Each number is Cloudflare's own, with its source; the guard fails a request past it
 * the way Cloudflare fails it, so a path that would break deployed breaks `npm test` too.
 */

/**
 * Largest string or BLOB value, and largest row, in D1 and in Durable Object SQLite.
 * D1 limits (developers.cloudflare.com/d1/platform/limits): "Maximum string, BLOB or table row size
 * 2,000,000 bytes (2 MB)"; Durable Objects limits, SQL storage: the same 2 MB.
 */
export const MAX_SQL_VALUE_BYTES = 2_000_000;

/** D1 limits: "Maximum arguments per SQL function 32"; Durable Objects SQL storage: the same. */
export const MAX_SQL_FUNCTION_ARGS = 32;

/** What one invocation (a Worker request, tick or queue batch; a Durable Object request or alarm) may do. */
export interface InvocationLimits {
  plan: "paid" | "free";
  /**
   * Subrequests: D1 queries, Durable Object calls, R2 operations, queue sends and outbound fetches.
   * Workers limits (developers.cloudflare.com/workers/platform/limits): "For subrequests to internal
   * services like Workers KV and Durable Objects, the subrequest limit is 1,000 per request" (Paid);
   * 50 per request on the Free plan.
   */
  subrequests: number;
  /** D1 limits: "Queries per Worker invocation (read subrequest limits) 1000 (Workers Paid) / 50 (Free)". */
  d1Queries: number;
}

const PLANS: Record<InvocationLimits["plan"], InvocationLimits> = {
  paid: { plan: "paid", subrequests: 1000, d1Queries: 1000 },
  free: { plan: "free", subrequests: 50, d1Queries: 50 },
};

/**
 * The `LIMITS_GUARD` var: "paid" or "free" turns the guard on with that plan's limits (the local
 * runtime of `npm start`, `npm run dev` and every test suite set "paid"); unset or "off" leaves it
 * off, as a deployment should, where Cloudflare enforces the limits itself.
 */
export function guardLimits(env: { LIMITS_GUARD?: string }): InvocationLimits | null {
  const mode = env.LIMITS_GUARD;
  if (mode === undefined || mode === "" || mode === "off") return null;
  const limits = Object.hasOwn(PLANS, mode) ? PLANS[mode as InvocationLimits["plan"]] : undefined;
  if (!limits) throw new Error(`LIMITS_GUARD must be "paid", "free" or "off", got ${JSON.stringify(mode)}`);
  return limits;
}
