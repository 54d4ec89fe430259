// The bench's units per operation: the usage meter as `npm start` serves it (its runtime is not the test
// suites'), read the way `npm run bench` reads it, and the price and ceiling arithmetic on top.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ceilingOf, D1, deploymentCeiling, LIMITS, placementOf } from "../../bench/ceilings.ts";
import { ANCHOR, anchorCost, CLOUDFLARE, cloudflareCost, QUEUE_OPS_PER_MESSAGE } from "../../bench/prices.ts";
import { figure } from "../../bench/report-units.ts";
import { probeStorage } from "../../bench/storage.ts";
import { ceilings, connectMeter, type UsageMeter, unitsPerOp } from "../../bench/usage.ts";
import { THREAD_INDEX_SHARDS } from "../../src/workspace/partition.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

describe("the usage meter under npm start", () => {
  let server: TestServer;
  let meter: UsageMeter | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    meter = await connectMeter(server.url, server.apiKey);
  }, 120_000);
  afterAll(async () => server?.stop());

  it("is there for the admin key only", async () => {
    expect(meter).toBeDefined();
    expect(await connectMeter(server.url, "lgp_not_the_admin_key")).toBeUndefined();
  });

  it("counts thread creates: requests, ThreadDO calls, D1 queries and rows, stored bytes", async () => {
    const headers = { "X-Api-Key": server.apiKey, "Content-Type": "application/json" };
    // Once first: the default tenancy is created on the first authenticated request.
    await fetch(`${server.url}/threads`, { method: "POST", headers, body: "{}" });
    await meter!.reset();
    const storage = probeStorage(server.persistTo);
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${server.url}/threads`, { method: "POST", headers, body: "{}" });
      expect(response.status).toBe(200);
    }
    const units = unitsPerOp(await meter!.read(), 3, 2, storage.after());
    expect(units.window.worker.fetch).toBe(3);
    expect(units.perOp.workerRequests).toBe(1);
    expect(units.window.durableObjects.ThreadDO).toMatchObject({ calls: 3, methods: { create: 3 } });
    expect(units.perOp.objects.ThreadDO.rowsWritten).toBeGreaterThan(0);
    // The thread index is in the workspace's partitions: no D1 at all, one index write per create.
    expect(units.window.d1.reads + units.window.d1.writes).toBe(0);
    expect(units.window.durableObjects["WorkspaceDO:threads"]).toMatchObject({ calls: 3 });
    // D1 is metered in this runtime too (its binding differs from the test suites'): an assistant is a D1 row.
    await meter!.reset();
    const created = await fetch(`${server.url}/assistants`, {
      method: "POST",
      headers,
      body: JSON.stringify({ graph_id: "echo" }),
    });
    expect(created.status).toBe(200);
    const d1 = (await meter!.read()).d1;
    expect(d1.writes).toBeGreaterThan(0);
    expect(d1.rowsWritten).toBeGreaterThan(0);
    // Three new thread objects were stored.
    expect(units.storage?.ThreadDO).toMatchObject({ newObjects: 3 });
    expect(units.storage?.ThreadDO?.grownBytes).toBeGreaterThan(0);
    expect(ceilings(units).find((c) => c.part === "ThreadDO")).toMatchObject({ perOp: 1, opsPerS: 1000 });
    // A workspace's thread index spreads over THREAD_INDEX_SHARDS objects: its ceiling is theirs together.
    expect(ceilingOf({ part: "WorkspaceDO:threads", perOp: 2 }).opsPerS).toBe((1000 * THREAD_INDEX_SHARDS) / 2);
    expect(placementOf("WorkspaceDO:store")).toMatchObject({ scope: "tenant", known: true });
  });
});

describe("prices", () => {
  it("prices units per operation as dollars per million operations", () => {
    const cost = cloudflareCost({
      workerRequests: 2,
      cpuMs: 10,
      objectRequests: 3,
      objectRowsRead: 1000,
      objectRowsWritten: 20,
      d1RowsRead: 10,
      d1RowsWritten: 4,
      queueMessages: 1,
      r2ClassA: 1,
      r2ClassB: 2,
    });
    expect(cost.lines).toEqual({
      "worker requests": 0.6,
      "worker CPU": 0.2,
      "DO requests": 0.44999999999999996,
      "DO rows read": 1,
      "DO rows written": 20,
      "D1 rows read": 0.01,
      "D1 rows written": 4,
      queues: 1.2000000000000002,
      "R2 class A": 4.5,
      "R2 class B": 0.72,
    });
    expect(cost.total).toBeCloseTo(0.6 + 0.2 + 0.45 + 1 + 20 + 0.01 + 4 + 1.2 + 4.5 + 0.72, 10);
    expect(QUEUE_OPS_PER_MESSAGE * CLOUDFLARE.queueOperations.usdPerMillion).toBeCloseTo(1.2, 10);
  });

  it("prices the same work at the anchor's rates, and nothing the anchor bills by uptime", () => {
    expect(anchorCost({ agentRuns: 2, nodes: 5 })).toEqual({ perRun: 10_000, perNode: 5_000 });
    expect(anchorCost({ tracedRuns: 100, traces: 1 })).toEqual({ perTrace: 500 });
    expect(anchorCost(undefined)).toEqual({});
    expect(ANCHOR.agentRun.usdPerMillion / 1e6).toBe(0.005);
    // Every price carries its source and date.
    for (const price of [...Object.values(CLOUDFLARE), ...Object.values(ANCHOR)]) {
      expect(price.source).toMatch(/\S/);
      expect(price.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });
});

describe("ceilings", () => {
  it("divides each documented limit by the load one operation puts on one object", () => {
    expect(ceilingOf({ part: "ThreadDO", perOp: 2 })).toMatchObject({ opsPerS: 500, placement: { scope: "entity" } });
    expect(ceilingOf({ part: D1, perOp: 4 })).toMatchObject({ opsPerS: LIMITS.d1QueriesPerS / 4 });
    expect(ceilingOf({ part: `${D1} writes`, perOp: 0 }).opsPerS).toBe(Number.POSITIVE_INFINITY);
    // A project-day splits (up to 64 shards by load, a new generation before 2 GiB): its load
    // spreads, and no shard fills 10 GB whatever the rate.
    const shard = ceilingOf({ part: "TraceShardDO", perOp: 1, largestObjectBytesPerOp: 6_400 });
    expect(shard.opsPerS).toBe(64_000);
    expect(shard.opsToFull).toBeUndefined();
    expect(shard.placement.splitsAtBytes).toBe(2 * 1024 ** 3);
    expect(ceilingOf({ part: D1, perOp: 1, largestObjectBytesPerOp: 1_000 })).toMatchObject({
      opsToFull: 10_000_000,
    });
    expect(ceilingOf({ part: D1, perOp: 1, largestObjectBytesPerOp: 1_000 }).sustainedOpsPerS).toBeUndefined();
  });

  it("treats a class it does not know as one object for the whole deployment", () => {
    expect(placementOf("SomethingNewDO")).toMatchObject({ scope: "deployment", known: false });
    expect(placementOf("WorkspaceDO")).toMatchObject({ scope: "tenant", known: true });
    expect(placementOf(`${D1} writes`)).toMatchObject({ scope: "deployment", known: true });
  });

  it("finds the lowest deployment-wide ceiling", () => {
    const low = deploymentCeiling([
      ceilingOf({ part: "ThreadDO", perOp: 10 }),
      ceilingOf({ part: "MetricsDO", perOp: 0.01 }),
      ceilingOf({ part: D1, perOp: 3 }),
    ]);
    expect(low).toMatchObject({ part: D1, opsPerS: 1000 / 3 });
    expect(deploymentCeiling([ceilingOf({ part: "ThreadDO", perOp: 1 })])).toBeUndefined();
  });

  it("prints figures readably", () => {
    expect(figure(1234567.8)).toBe("1,234,568");
    expect(figure(333.33)).toBe("333");
    expect(figure(12.34)).toBe("12.3");
    expect(figure(2)).toBe("2");
    expect(figure(0.014)).toBe("0.01");
    expect(figure(Number.POSITIVE_INFINITY)).toBe("unbounded");
    expect(figure(undefined)).toBe("-");
  });
});
