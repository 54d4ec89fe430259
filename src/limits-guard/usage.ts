/**
 * The usage meter: the units Cloudflare bills and limits, counted by the Worker itself while the limits
 * guard is on (the bindings and entries it wraps are the meter's only sources, so nothing is wrapped
 * twice). From the last reset it counts Worker invocations, Durable Object requests by class, D1
 * queries and rows, Durable Object SQLite rows by class, queue messages, R2 class A/B operations and
 * the largest number of subrequests (and D1 queries) one invocation made.
 *
 * The counters live in module state, one set per isolate. Locally (`npm start`, the test suites) the
 * Worker and every Durable Object class it exports run in one isolate, so one set sees everything;
 * deployed, the guard (and so the meter) is off.
 *
 * `npm run bench` reads it around each scenario through `USAGE_PATH`, which only the guarded Worker
 * answers (see `usageResponse`).
 */

/** Where an invocation entered: one of the Worker's handlers, or a Durable Object's method. */
export type Entry = { worker: "fetch" | "scheduled" | "queue" } | { object: string; method: string };

export interface ObjectUsage {
  /** Requests the object's class received: RPC calls, fetches and alarms (each billed as one request). */
  calls: number;
  /** Of `calls`, alarm invocations. */
  alarms: number;
  /** SQLite rows read and written, as the cursors report them (`rowsRead`, `rowsWritten`); `setAlarm` writes one. */
  rowsRead: number;
  rowsWritten: number;
  /** `calls` by method name (`alarm`, `fetch`, RPC methods). */
  methods: Record<string, number>;
}

export interface UsageSnapshot {
  /** When the counting started (the last reset), and when this snapshot was taken (ISO 8601). */
  since: string;
  at: string;
  /** Worker invocations: HTTP requests to the fetch handler, Cron Trigger ticks, queue batches. */
  worker: { fetch: number; scheduled: number; queue: number };
  /** Per Durable Object class (its exported name). */
  durableObjects: Record<string, ObjectUsage>;
  /** D1 queries (a batch counts each statement) split by whether they write, and the rows D1 reports. */
  d1: { reads: number; writes: number; rowsRead: number; rowsWritten: number };
  /** Queue messages sent (`send` one, `sendBatch` one per message). */
  queue: { messages: number };
  /** R2 operations by class: A (put, list, multipart create/part/complete), B (get, head); deletes are free. */
  r2: { classA: number; classB: number };
  /** The most subrequests and D1 queries one invocation made, and which entry it was. */
  peak: { subrequests: number; subrequestsEntry: string | null; d1Queries: number; d1QueriesEntry: string | null };
}

type Counts = Omit<UsageSnapshot, "since" | "at">;

function empty(): Counts {
  return {
    worker: { fetch: 0, scheduled: 0, queue: 0 },
    durableObjects: {},
    d1: { reads: 0, writes: 0, rowsRead: 0, rowsWritten: 0 },
    queue: { messages: 0 },
    r2: { classA: 0, classB: 0 },
    peak: { subrequests: 0, subrequestsEntry: null, d1Queries: 0, d1QueriesEntry: null },
  };
}

let counts = empty();
let since = Date.now();

/** The counts since the last reset (a copy). */
export function usageSnapshot(): UsageSnapshot {
  return { since: new Date(since).toISOString(), at: new Date().toISOString(), ...structuredClone(counts) };
}

/** Starts counting from zero; returns what was counted until now. */
export function resetUsage(): UsageSnapshot {
  const snapshot = usageSnapshot();
  counts = empty();
  since = Date.now();
  return snapshot;
}

/** An entry's name in reports: `fetch`, or `ThreadDO.create`. */
export function entryName(entry: Entry): string {
  return "worker" in entry ? entry.worker : `${entry.object}.${entry.method}`;
}

function objectUsage(className: string): ObjectUsage {
  let usage = counts.durableObjects[className];
  if (!usage) {
    usage = { calls: 0, alarms: 0, rowsRead: 0, rowsWritten: 0, methods: {} };
    counts.durableObjects[className] = usage;
  }
  return usage;
}

/** One invocation began at `entry`. */
export function meterEntry(entry: Entry): void {
  if ("worker" in entry) {
    counts.worker[entry.worker]++;
    return;
  }
  const usage = objectUsage(entry.object);
  usage.calls++;
  if (entry.method === "alarm") usage.alarms++;
  usage.methods[entry.method] = (usage.methods[entry.method] ?? 0) + 1;
}

/** An invocation reached `subrequests` subrequests and `d1Queries` D1 queries so far. */
export function meterInvocation(entry: string, subrequests: number, d1Queries: number): void {
  const { peak } = counts;
  if (subrequests > peak.subrequests) {
    peak.subrequests = subrequests;
    peak.subrequestsEntry = entry;
  }
  if (d1Queries > peak.d1Queries) {
    peak.d1Queries = d1Queries;
    peak.d1QueriesEntry = entry;
  }
}

/** Rows a Durable Object of `className` read and wrote in its SQLite. */
export function meterObjectRows(className: string, rowsRead: number, rowsWritten: number): void {
  if (!rowsRead && !rowsWritten) return;
  const usage = objectUsage(className);
  usage.rowsRead += rowsRead;
  usage.rowsWritten += rowsWritten;
}

/** What D1 reports for one executed statement (`D1Result.meta`). */
export interface D1Meta {
  rows_read?: number;
  rows_written?: number;
}

/**
 * A statement that may write: it starts with a writing keyword, or is a `WITH` whose body writes.
 * (A write goes to the primary; a read may be served by a replica.)
 */
export function isWriteStatement(sql: string): boolean {
  const first = /^(?:\s+|--[^\n]*\n|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/.exec(sql)?.[1]?.toLowerCase() ?? "";
  if (first === "select" || first === "values" || first === "explain") return false;
  if (first === "with") return /\b(insert|update|delete|replace)\b/i.test(sql);
  return first !== "";
}

/** One D1 statement ran and reported `meta`. */
export function meterD1(sql: string, meta: D1Meta | undefined): void {
  const rowsWritten = meta?.rows_written ?? 0;
  const { d1 } = counts;
  if (rowsWritten > 0 || isWriteStatement(sql)) d1.writes++;
  else d1.reads++;
  d1.rowsRead += meta?.rows_read ?? 0;
  d1.rowsWritten += rowsWritten;
}

/** `count` messages were sent to a queue. */
export function meterQueueMessages(count: number): void {
  counts.queue.messages += count;
}

/** R2 Class A operations (billed at the higher rate), by the binding's method name. */
const R2_CLASS_A = new Set(["put", "list", "createMultipartUpload", "uploadPart", "complete"]);
/** R2 Class B operations. `delete` and `abort` are free. */
const R2_CLASS_B = new Set(["get", "head"]);

/** One call of an R2 bucket's (or multipart upload's) `method`. */
export function meterR2(method: string): void {
  if (R2_CLASS_A.has(method)) counts.r2.classA++;
  else if (R2_CLASS_B.has(method)) counts.r2.classB++;
}

/**
 * The meter's HTTP route, answered by the guarded Worker before its app (see `guardWorker`), so reading
 * the meter neither counts as a request nor touches a binding. It exists only while the guard is on,
 * and needs the deployment's organization-admin key, `BOOTSTRAP_API_KEY`, in `X-Api-Key`.
 * GET: the snapshot. POST: the snapshot, and counting starts again from zero.
 */
export const USAGE_PATH = "/__limits-guard/usage";

const jsonResponse = (body: unknown, status: number, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

/** Whether `given` is `expected`, compared through digests so the time does not depend on the input. */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Whether `request` is for the meter's route. */
export function isUsageRequest(request: Request): boolean {
  // The substring test first: every request of the guarded Worker asks.
  return request.url.includes(USAGE_PATH) && new URL(request.url).pathname === USAGE_PATH;
}

/** The meter route's answer (see `USAGE_PATH`). */
export async function usageResponse(request: Request, env: { BOOTSTRAP_API_KEY?: string }): Promise<Response> {
  const key = request.headers.get("X-Api-Key");
  if (!env.BOOTSTRAP_API_KEY || !key || !(await sameSecret(key, env.BOOTSTRAP_API_KEY))) {
    const detail = "X-Api-Key: the usage meter needs the organization-admin key (BOOTSTRAP_API_KEY)";
    return jsonResponse({ detail }, 401);
  }
  if (request.method === "GET") return jsonResponse(usageSnapshot(), 200);
  if (request.method === "POST") return jsonResponse(resetUsage(), 200);
  const detail = "method: the usage meter answers GET (read) and POST (read, then reset)";
  return jsonResponse({ detail }, 405, { Allow: "GET, POST" });
}
