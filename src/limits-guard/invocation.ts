/**
 * Per-invocation counts of subrequests and D1 queries. Each entry the guard wraps (a Worker request,
 * tick or queue batch; a Durable Object's RPC call, fetch, alarm or WebSocket event) runs in its own
 * invocation; work it starts (awaits, waitUntil, streams) counts against it, as on Cloudflare.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { InvocationLimits } from "./limits.ts";
import { type Entry, entryName, meterEntry, meterInvocation } from "./usage.ts";

interface Invocation {
  limits: InvocationLimits;
  /** The Durable Object whose entry opened it (its calls to its own methods stay in it), or null. */
  owner: object | null;
  /** Where it entered (`fetch`, `ThreadDO.create`), for the usage meter's peaks. */
  entry: string;
  subrequests: number;
  d1Queries: number;
}

const current = new AsyncLocalStorage<Invocation>();

/**
 * Runs `work` as one invocation with `limits`, unless it is a call of `owner` to itself. An invocation
 * with an `entry` is counted by the usage meter (usage.ts).
 */
export function inInvocation<T>(limits: InvocationLimits, owner: object | null, work: () => T, entry?: Entry): T {
  const running = current.getStore();
  if (owner && running?.owner === owner) return work();
  if (entry) meterEntry(entry);
  return current.run({ limits, owner, entry: entry ? entryName(entry) : "", subrequests: 0, d1Queries: 0 }, work);
}

/** Workers' error past the subrequest limit. */
export const TOO_MANY_SUBREQUESTS = "Too many subrequests.";
/** D1's error past the query limit of an invocation. */
export const TOO_MANY_D1_QUERIES = "D1_ERROR: Too many API requests by single worker invocation.";

/** Counts one subrequest; the error when it is one too many, else null. Outside an invocation: null. */
export function countSubrequest(): Error | null {
  const invocation = current.getStore();
  if (!invocation) return null;
  if (++invocation.subrequests > invocation.limits.subrequests) return tooMany(TOO_MANY_SUBREQUESTS, invocation);
  if (invocation.entry) meterInvocation(invocation.entry, invocation.subrequests, invocation.d1Queries);
  return null;
}

/** Counts one D1 query, which is also a subrequest. */
export function countD1Query(): Error | null {
  const invocation = current.getStore();
  if (!invocation) return null;
  if (++invocation.d1Queries > invocation.limits.d1Queries) return tooMany(TOO_MANY_D1_QUERIES, invocation);
  return countSubrequest();
}

function tooMany(message: string, invocation: Invocation): Error {
  const { plan, subrequests, d1Queries } = invocation.limits;
  return new Error(message, {
    cause: `limits guard (${plan}): at most ${subrequests} subrequests and ${d1Queries} D1 queries per invocation`,
  });
}

/** The counts of the current invocation (tests, diagnostics), or null outside one. */
export function invocationCounts(): { subrequests: number; d1Queries: number } | null {
  const invocation = current.getStore();
  return invocation ? { subrequests: invocation.subrequests, d1Queries: invocation.d1Queries } : null;
}
