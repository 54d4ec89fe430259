// What a thread create, an agent run (traced) and a traced-run ingest cost: no D1 write, and calls
// only to per-thread, per-project and per-workspace objects (no object shared by every tenant).
import { describe, expect, it } from "vitest";
import { resetUsage, usageSnapshot } from "../../src/limits-guard/usage.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { hashBucket, RUN_LOCATOR_SHARDS } from "../../src/workspace/partition.ts";
import { call, json, rootRun, tracesStored } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

describe("the hot paths' shared load", () => {
  it("creates a thread without a D1 query or a call to a shared object", async () => {
    await post("/threads", {});
    resetUsage();
    expect((await post("/threads", {})).status).toBe(200);
    const usage = usageSnapshot();
    expect(usage.d1.reads).toBe(0);
    expect(usage.d1.writes).toBe(0);
    // Only per-thread, per-workspace and per-project objects.
    for (const name of Object.keys(usage.durableObjects)) expect(name).toMatch(/^(ThreadDO|WorkspaceDO:threads)$/);
  });

  it("runs an agent (traced) and ingests traced runs without a D1 write or a call to a shared object", async () => {
    const thread = await json<ThreadJson>(await post("/threads", {}));
    await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: "echo", input: { messages: [] } });
    resetUsage();
    const run = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: "echo",
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect(run.status).toBe(200);
    const id = crypto.randomUUID();
    const ingested = await post("/api/v1/runs/batch", {
      post: [
        { id, trace_id: id, name: "r", run_type: "chain", start_time: new Date().toISOString(), session_name: "count" },
      ],
    });
    expect(ingested.status).toBe(202);
    const usage = usageSnapshot();
    expect(usage.d1.writes).toBe(0);
    // The assistant was read for the first run: this isolate's copy answers the second.
    expect(usage.d1.reads).toBe(0);
    for (const name of Object.keys(usage.durableObjects))
      expect(name).toMatch(/^(ThreadDO|TraceShardDO|WorkspaceDO:(threads|traces|runs))$/);
    await tracesStored([thread.thread_id]);
  });

  it("counts an ingest's locator calls among the request's subrequests (they go through its bindings)", async () => {
    const runs = Array.from({ length: 40 }, () => rootRun("subrequests", new Date().toISOString()));
    const locators = new Set(runs.map((r) => hashBucket(r.id, RUN_LOCATOR_SHARDS))).size;
    resetUsage();
    expect((await post("/api/v1/runs/batch", { post: runs })).status).toBe(202);
    const { peak } = usageSnapshot();
    // One call per locator shard the runs hash to, and one to their trace shard, at least.
    expect(peak.subrequestsEntry).toBe("fetch");
    expect(peak.subrequests).toBeGreaterThanOrEqual(locators + 1);
  });
});
