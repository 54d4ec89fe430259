import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { fireDueCrons } from "../../src/crons/service.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { hashBucket, type Partition, partitionName, THREAD_INDEX_SHARDS } from "../../src/workspace/partition.ts";
import type { RankedPage, RankedScan } from "../../src/workspace/ranked-scan.ts";
import { until } from "../fixtures/until.ts";

export const BOOTSTRAP_KEY = "lgp_test_bootstrap_key";

/** A request to the Worker, with the bootstrap key unless `key` says otherwise, and `json` as its body. */
export function workerRequest(path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}): Request {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? BOOTSTRAP_KEY : init.key;
  if (key) headers.set("X-Api-Key", key);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return new Request(`http://platform.test${path}`, { ...init, headers, body });
}

/** Sends a request through the Worker's own fetch handler. */
export function call(
  path: string,
  init: RequestInit & { key?: string | null; json?: unknown } = {},
): Promise<Response> {
  return exports.default.fetch(workerRequest(path, init));
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/**
 * Bulk export `id` once it is Completed, polled (every 25 ms, 5 s at most); a Failed export fails
 * the test with its runs' errors.
 */
export async function completedExport<T extends { status: string } = { status: string; tenant_id: string }>(
  id: string,
): Promise<T> {
  const exported = await until(
    async () => json<T>(await call(`/api/v1/bulk-exports/${id}`)),
    (e) => e.status === "Completed" || e.status === "Failed",
    5_000,
  );
  if (exported.status === "Failed")
    throw new Error(JSON.stringify(await json(await call(`/api/v1/bulk-exports/${id}/runs`))));
  return exported;
}

/**
 * Every minute of the first day of a month half a year away: a cron whose occurrences a test fires
 * itself (`fireCrons`), which its partition's alarm does not reach while the tests run.
 */
export const FAR_SCHEDULE = `* * 1 ${((new Date().getUTCMonth() + 6) % 12) + 1} *`;

/**
 * Fires the workspace's crons due at `at`, as its crons partition's alarm would at that time (the
 * alarm itself runs at the real time). Answers how many runs started.
 */
export async function fireCrons(at: Date, workspaceId = DEFAULT_WORKSPACE_ID): Promise<number> {
  const db = workspaceDatabase(env, { workspaceId, kind: "crons" });
  return (await fireDueCrons(env, db, workspaceId, at)).started;
}

/**
 * Runs a statement on a workspace's thread index shards, for tests that reach around the API (the
 * shard holding `threadId`, or every shard).
 */
export async function inThreadIndex(
  sql: string,
  params: unknown[] = [],
  options: { workspaceId?: string; threadId?: string } = {},
): Promise<void> {
  const workspaceId = options.workspaceId ?? DEFAULT_WORKSPACE_ID;
  const shards =
    options.threadId === undefined
      ? Array.from({ length: THREAD_INDEX_SHARDS }, (_, i) => i)
      : [hashBucket(options.threadId, THREAD_INDEX_SHARDS)];
  for (const shard of shards) {
    const partition = { workspaceId, kind: "threads", shard } as const;
    await env.WORKSPACE.getByName(partitionName(partition)).exec(partition, [{ sql, params, method: "run" }]);
  }
}

/** A root traced run of `project` starting at `start` (ISO), as the SDKs post it. */
export function rootRun(project: string, start: string) {
  const id = crypto.randomUUID();
  const stamp = start.replace(/[-:]/g, "").replace(".", "").replace("Z", "000Z");
  return {
    id,
    trace_id: id,
    dotted_order: `${stamp}${id}`,
    name: "r",
    run_type: "chain",
    start_time: start,
    session_name: project,
  };
}

/**
 * Waits until the traces of these threads' runs are stored: each run's trace in its shard, and every
 * run of it found by id (its locator written). A run's trace is written after its result, in the
 * background: a file with a runtime of its own that ends first closes the runtime with that work in
 * flight, which fails the suite's teardown. (An agent run's trace is one batch unless it is megabytes.)
 */
export async function tracesStored(threadIds: string[]): Promise<void> {
  const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
  const project = env.AGENT_TRACING_PROJECT;
  for (const threadId of threadIds) {
    const runs = await until(
      async () => json<{ run_id: string; status: string }[]>(await call(`/threads/${threadId}/runs`)),
      (list) => list.every((run) => run.status !== "pending" && run.status !== "running"),
    );
    for (const run of runs) {
      const root = await until(
        async () => {
          const [session] = await json<{ id: string }[]>(
            await call(`/api/v1/sessions?name=${encodeURIComponent(project)}`),
          );
          if (!session) return undefined;
          const filter = `and(eq(metadata_key, "run_id"), eq(metadata_value, "${run.run_id}"))`;
          const found = await json<{ runs: { id: string }[] }>(
            await post("/api/v1/runs/query", { session: [session.id], is_root: true, filter }),
          );
          return found.runs[0];
        },
        (found) => found !== undefined,
      );
      const traced = await json<{ runs: { id: string }[] }>(
        await post("/api/v1/runs/query", { trace: root!.id, limit: 100 }),
      );
      for (const { id } of traced.runs)
        await until(
          async () => (await call(`/api/v1/runs/${id}`)).status,
          (status) => status === 200,
        );
    }
  }
}

/**
 * `bindings` whose partition objects report each search by similarity (`rank`) they run: the scan it
 * was given and the page it answered, in `ranks`, for tests that count what a search read.
 */
export function observingRanks<B extends { WORKSPACE: typeof env.WORKSPACE }>(bindings: B) {
  const ranks: { scan: RankedScan; page: RankedPage }[] = [];
  const observed: B = {
    ...bindings,
    WORKSPACE: new Proxy(bindings.WORKSPACE, {
      get(target, property) {
        if (property !== "getByName") return Reflect.get(target, property, target);
        return (name: string) =>
          new Proxy(target.getByName(name), {
            get(stub, method) {
              if (method !== "rank") return Reflect.get(stub, method, stub);
              return async (partition: Partition, scan: RankedScan) => {
                const page = (await stub.rank(partition, scan)) as RankedPage;
                ranks.push({ scan, page });
                return page;
              };
            },
          });
      },
    }),
  };
  return { bindings: observed, ranks };
}
