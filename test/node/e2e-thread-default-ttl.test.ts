// langgraph.json `checkpointer.ttl` (test/node/fixtures/thread-ttl/): threads created without a `ttl`
// (POST /threads, a run's `if_not_exists: "create"`, a stateless run kept with `on_completion: "keep"`)
// get `default_ttl` with the configured `strategy` (here keep_latest, 3 s), an explicit `ttl` wins, a
// copy keeps its source's. The fixture's sweep interval is an hour: expiry comes on each thread's own
// alarm at its expiry, not at a sweep.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../fixtures/until.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  deployment = await startDeployment("test/node/fixtures/thread-ttl/langgraph.json");
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
}, 60_000);

/** The fixture's `default_ttl`, minutes (3 s). */
const DEFAULT_TTL = 0.05;

type Thread = {
  thread_id: string;
  updated_at: string;
  values: { total?: number } | null;
  ttl?: { strategy: string; ttl_minutes: number; expires_at: string } | null;
};

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${deployment.url}${path}`, {
    method,
    headers: { "X-Api-Key": deployment.apiKey, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBe(200);
  return JSON.parse(text) as T;
}

const withTtl = (threadId: string) => api<Thread>("GET", `/threads/${threadId}?include=ttl`);
const history = (threadId: string) => api<unknown[]>("POST", `/threads/${threadId}/history`, { limit: 10 });
const run = (threadId: string, extra: Record<string, unknown> = {}) =>
  api("POST", `/threads/${threadId}/runs/wait`, { assistant_id: "counter", input: { total: 1 }, ...extra });

/** The TTL the thread shows counts `minutes` from its last update, with `strategy`. */
function expectTtl(thread: Thread, strategy: string, minutes: number) {
  expect(thread.ttl).toMatchObject({ strategy, ttl_minutes: minutes });
  expect(Date.parse(thread.ttl!.expires_at) - Date.parse(thread.updated_at)).toBe(minutes * 60_000);
}

describe("checkpointer.ttl default_ttl", () => {
  it("applies to threads created without a ttl, and its strategy is what expiry does", async () => {
    const defaulted = await api<Thread>("POST", "/threads", {});
    const explicit = await api<Thread>("POST", "/threads", { ttl: { ttl: 30, strategy: "delete" } });
    await run(defaulted.thread_id);
    await run(explicit.thread_id);

    expectTtl(await withTtl(defaulted.thread_id), "keep_latest", DEFAULT_TTL);
    expectTtl(await withTtl(explicit.thread_id), "delete", 30);

    // Expired: keep_latest compacts the thread to its latest checkpoint (delete would have removed it).
    await until(
      () => history(defaulted.thread_id),
      (checkpoints) => checkpoints.length === 1,
    );
    const kept = await withTtl(defaulted.thread_id);
    expect(kept.values).toEqual({ total: 2 });
    expectTtl(kept, "keep_latest", DEFAULT_TTL);
    // The explicit TTL (30 minutes) has not expired: the thread keeps every checkpoint of its run.
    expect(await history(explicit.thread_id)).toHaveLength(3);
  });

  it("applies to threads a run creates, stateful or kept stateless", async () => {
    const created = crypto.randomUUID();
    await run(created, { if_not_exists: "create" });
    expectTtl(await withTtl(created), "keep_latest", DEFAULT_TTL);

    const stateless = await api<{ run_id: string; thread_id: string }>("POST", "/runs", {
      assistant_id: "counter",
      input: { total: 1 },
      on_completion: "keep",
    });
    await api("GET", `/threads/${stateless.thread_id}/runs/${stateless.run_id}/join`);
    expectTtl(await withTtl(stateless.thread_id), "keep_latest", DEFAULT_TTL);
  });

  it("a copy keeps its source's TTL, the default or an explicit one", async () => {
    const defaulted = await api<Thread>("POST", "/threads", {});
    const explicit = await api<Thread>("POST", "/threads", { ttl: { ttl: 30, strategy: "delete" } });
    expectTtl(
      await withTtl((await api<Thread>("POST", `/threads/${defaulted.thread_id}/copy`)).thread_id),
      "keep_latest",
      DEFAULT_TTL,
    );
    expectTtl(
      await withTtl((await api<Thread>("POST", `/threads/${explicit.thread_id}/copy`)).thread_id),
      "delete",
      30,
    );
  });

  it("a PATCH replaces the default TTL, or removes it with null", async () => {
    const thread = await api<Thread>("POST", "/threads", {});
    await api("PATCH", `/threads/${thread.thread_id}`, { ttl: { ttl: 10, strategy: "delete" } });
    expectTtl(await withTtl(thread.thread_id), "delete", 10);
    await api("PATCH", `/threads/${thread.thread_id}`, { ttl: null });
    expect((await withTtl(thread.thread_id)).ttl).toBeNull();
  });
});
