// The limits guard's usage meter (src/limits-guard/usage.ts) counts what Cloudflare bills and limits.
import { env, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { guardEnv } from "../../src/limits-guard/bindings.ts";
import { guardD1 } from "../../src/limits-guard/d1.ts";
import { inInvocation } from "../../src/limits-guard/invocation.ts";
import { guardLimits } from "../../src/limits-guard/limits.ts";
import {
  isWriteStatement,
  resetUsage,
  USAGE_PATH,
  type UsageSnapshot,
  usageSnapshot,
} from "../../src/limits-guard/usage.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { BOOTSTRAP_KEY, call, json } from "./helpers.ts";

const PAID = guardLimits({ LIMITS_GUARD: "paid" })!;

beforeEach(() => void resetUsage());

describe("the usage meter", () => {
  it("counts a thread create: one request, one ThreadDO call, the rows its SQLite wrote", async () => {
    const response = await call("/threads", { method: "POST", json: { metadata: { meter: "create" } } });
    expect(response.status).toBe(200);
    const { thread_id } = await json<{ thread_id: string }>(response);
    const usage = usageSnapshot();
    expect(usage.worker).toEqual({ fetch: 1, scheduled: 0, queue: 0 });
    const thread = usage.durableObjects.ThreadDO;
    expect(thread).toMatchObject({ calls: 1, alarms: 0, methods: { create: 1 } });
    // Every row the object holds now was written by this create (a new object starts empty), and
    // each table's index entries are rows written too: at least as many rows written as are stored.
    const stored = await runInDurableObject(
      env.THREAD.getByName(`${DEFAULT_WORKSPACE_ID}:${thread_id}`),
      (_instance, state) => {
        const tables = state.storage.sql
          .exec<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'",
          )
          .toArray();
        let rows = 0;
        for (const { name } of tables)
          rows += state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${name}"`).one().n;
        return rows;
      },
    );
    expect(stored).toBeGreaterThan(0);
    expect(thread.rowsWritten).toBeGreaterThanOrEqual(stored);
  });

  it("counts Durable Object SQLite rows as the cursors report them, and a setAlarm as one row", async () => {
    const stub = env.METRICS.getByName("usage-meter-rows");
    await runInDurableObject(stub, async (instance) => {
      // The instance's `ctx` is the guarded one the exported class hands its object.
      const { storage } = (instance as unknown as { ctx: DurableObjectState }).ctx;
      storage.sql.exec("CREATE TABLE meter_probe (a INTEGER)");
      resetUsage();
      storage.sql.exec("INSERT INTO meter_probe (a) VALUES (1), (2), (3)");
      expect(usageSnapshot().durableObjects.MetricsDO).toMatchObject({ rowsRead: 0, rowsWritten: 3 });
      // A query steps as it is read: what the cursor has read so far is counted, drained or not.
      const cursor = storage.sql.exec("SELECT a FROM meter_probe");
      cursor.next();
      const partly = cursor.rowsRead;
      expect(partly).toBeGreaterThan(0);
      expect(usageSnapshot().durableObjects.MetricsDO.rowsRead).toBe(partly);
      expect(storage.sql.exec("SELECT a FROM meter_probe").toArray()).toHaveLength(3);
      expect(usageSnapshot().durableObjects.MetricsDO.rowsRead).toBe(partly + 3);
      for (const _row of storage.sql.exec("SELECT a FROM meter_probe").raw());
      expect(usageSnapshot().durableObjects.MetricsDO.rowsRead).toBe(partly + 6);
      await storage.setAlarm(Date.now() + 3_600_000);
      await storage.deleteAlarm();
      expect(usageSnapshot().durableObjects.MetricsDO).toMatchObject({ rowsRead: partly + 6, rowsWritten: 4 });
    });
  });

  it("counts D1 queries as reads or writes, with the rows D1 reports, through every call shape", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS meter_d1 (id INTEGER PRIMARY KEY, a TEXT)");
    const db = guardD1(env.DB, PAID);
    resetUsage();
    await db.prepare("INSERT INTO meter_d1 (id, a) VALUES (?, ?), (?, ?)").bind(1, "x", 2, "y").run();
    // D1 reports a read per row an INSERT checks against its primary key.
    expect(usageSnapshot().d1).toEqual({ reads: 0, writes: 1, rowsRead: 2, rowsWritten: 2 });
    // raw() and first() hide D1's meta from the caller (drizzle reads through raw()): still counted.
    expect(await db.prepare("SELECT a FROM meter_d1 ORDER BY id").raw()).toEqual([["x"], ["y"]]);
    expect(await db.prepare("SELECT a FROM meter_d1 WHERE id = ?").bind(2).first("a")).toBe("y");
    expect(usageSnapshot().d1).toEqual({ reads: 2, writes: 1, rowsRead: 5, rowsWritten: 2 });
    await db.batch([
      db.prepare("UPDATE meter_d1 SET a = ? WHERE id = ?").bind("z", 1),
      db.prepare("SELECT count(*) AS n FROM meter_d1"),
    ]);
    const d1 = usageSnapshot().d1;
    expect(d1).toMatchObject({ reads: 3, writes: 2, rowsWritten: 3 });
    expect(d1.rowsRead).toBeGreaterThan(5);
  });

  it("tells writes from reads by the statement", () => {
    expect(isWriteStatement("SELECT 1")).toBe(false);
    expect(isWriteStatement("  -- note\n select * from t")).toBe(false);
    expect(isWriteStatement("WITH x AS (SELECT 1) SELECT * FROM x")).toBe(false);
    expect(isWriteStatement("with x as (select 1) insert into t select * from x")).toBe(true);
    expect(isWriteStatement('insert into "threads" ("a") values (?)')).toBe(true);
    expect(isWriteStatement("/* c */ DELETE FROM t")).toBe(true);
    expect(isWriteStatement("update t set updated_at = 1")).toBe(true);
  });

  it("counts queue messages, R2 operations by class, and the most subrequests of one invocation", async () => {
    const guarded = guardEnv(env, PAID);
    await inInvocation(
      PAID,
      null,
      async () => {
        await guarded.QUEUE.send({ kind: "usage-meter-test" });
        await guarded.QUEUE.sendBatch([{ body: { kind: "usage-meter-test" } }, { body: { kind: "usage-meter-test" } }]);
        const bucket = guarded.EXPORT_TEST_BUCKET;
        await bucket.put("meter/a", "a");
        await bucket.get("meter/a").then((object) => object?.text());
        await bucket.head("meter/a");
        await bucket.list({ prefix: "meter/" });
        const upload = await bucket.createMultipartUpload("meter/b");
        const part = await upload.uploadPart(1, "b");
        await upload.complete([part]);
        await bucket.delete(["meter/a", "meter/b"]);
      },
      { worker: "fetch" },
    );
    const usage = usageSnapshot();
    expect(usage.queue).toEqual({ messages: 3 });
    // Class A: put, list, createMultipartUpload, uploadPart, complete; class B: get, head; delete is free.
    expect(usage.r2).toEqual({ classA: 5, classB: 2 });
    expect(usage.worker.fetch).toBe(1);
    expect(usage.peak).toMatchObject({ subrequests: 10, subrequestsEntry: "fetch" });
  });
});

describe("the usage meter's route", () => {
  const meter = (init: RequestInit & { key?: string | null } = {}) => call(USAGE_PATH, init);

  it("answers the admin key only, and is not counted itself", async () => {
    expect((await meter({ key: null })).status).toBe(401);
    const wrong = await meter({ key: "lgp_not_the_admin_key" });
    expect(wrong.status).toBe(401);
    expect((await json<{ detail: string }>(wrong)).detail).toContain("X-Api-Key");
    await call("/ok");
    // POST answers what was counted, then starts again.
    const before = await json<UsageSnapshot>(await meter({ method: "POST", key: BOOTSTRAP_KEY }));
    expect(before.worker.fetch).toBe(1);
    const after = await json<UsageSnapshot>(await meter());
    // (The queue consumer may run meanwhile: only the meter's own requests are sure not to count.)
    expect(after.worker.fetch).toBe(0);
    expect(Date.parse(after.since)).toBeGreaterThanOrEqual(Date.parse(before.since));
    expect((await meter({ method: "DELETE" })).status).toBe(405);
  });
});
