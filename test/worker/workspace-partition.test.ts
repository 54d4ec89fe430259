// Workspace partitions: a workspace's tables in their own Durable Object, reached with drizzle.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { storeItems } from "../../src/db/schema.ts";
import { resetUsage, usageSnapshot } from "../../src/limits-guard/usage.ts";
import { armPartition, workspaceDatabase } from "../../src/workspace/database.ts";
import { LEGACY_TABLES } from "../../src/workspace/migration.ts";
import { hashBucket, partitionName } from "../../src/workspace/partition.ts";

const item = (workspaceId: string, key: string, value: Record<string, unknown>) => ({
  workspaceId,
  namespace: "notes",
  key,
  value,
  createdAt: "2026-11-26T00:00:00.000Z",
  updatedAt: "2026-11-26T00:00:00.000Z",
});

describe("workspace partitions", () => {
  it("starts a new deployment with every legacy table marked moved, so no partition waits on D1", async () => {
    const done = await env.DB.prepare(
      "SELECT table_name FROM partition_migrations WHERE done_at IS NOT NULL ORDER BY table_name",
    ).all<{ table_name: string }>();
    expect(done.results.map((r) => r.table_name)).toEqual(Object.keys(LEGACY_TABLES).sort());
  });

  it("names one object per workspace and kind, and per shard of a spread kind", () => {
    expect(partitionName({ workspaceId: "ws", kind: "store" })).toBe("ws/store");
    expect(partitionName({ workspaceId: "ws", kind: "threads", shard: 3 })).toBe("ws/threads/3");
  });

  it("spreads keys over buckets evenly and stably", () => {
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[hashBucket(crypto.randomUUID(), 8)] += 1;
    for (const n of counts) expect(n).toBeGreaterThan(800);
    expect(hashBucket("thread-1", 8)).toBe(hashBucket("thread-1", 8));
  });

  it("runs drizzle queries on the partition's own tables, apart from other workspaces", async () => {
    const a = workspaceDatabase(env, { workspaceId: "wa", kind: "store" });
    const b = workspaceDatabase(env, { workspaceId: "wb", kind: "store" });
    await a
      .insert(storeItems)
      .values(item("wa", "k", { n: 1 }))
      .run();
    const [row] = await a.select().from(storeItems).where(eq(storeItems.key, "k")).all();
    expect(row.value).toEqual({ n: 1 });
    expect(await b.select().from(storeItems).all()).toEqual([]);
    const one = await a.select({ key: storeItems.key }).from(storeItems).get();
    expect(one).toEqual({ key: "k" });
    expect(await b.select({ key: storeItems.key }).from(storeItems).get()).toBeUndefined();
  });

  it("applies a batch atomically: one failing statement undoes the others", async () => {
    const db = workspaceDatabase(env, { workspaceId: "wc", kind: "store" });
    await db
      .insert(storeItems)
      .values(item("wc", "dup", { n: 1 }))
      .run();
    await expect(
      db.batch([
        db.insert(storeItems).values(item("wc", "fresh", { n: 2 })),
        db.insert(storeItems).values(item("wc", "dup", { n: 3 })),
      ]),
    ).rejects.toThrow(/UNIQUE|constraint/i);
    const keys = await db.select({ key: storeItems.key }).from(storeItems).all();
    expect(keys).toEqual([{ key: "dup" }]);
    const [inserted, read] = await db.batch([
      db
        .insert(storeItems)
        .values(item("wc", "fresh", { n: 2 }))
        .returning({ key: storeItems.key }),
      db
        .select({ value: storeItems.value })
        .from(storeItems)
        .where(and(eq(storeItems.workspaceId, "wc"), eq(storeItems.key, "fresh"))),
    ]);
    expect(inserted).toEqual([{ key: "fresh" }]);
    expect(read).toEqual([{ value: { n: 2 } }]);
  });

  it("meters each partition's requests and rows under its kind", async () => {
    resetUsage();
    const db = workspaceDatabase(env, { workspaceId: "wm", kind: "store" });
    await db
      .insert(storeItems)
      .values(item("wm", "k", { n: 1 }))
      .run();
    await db.select().from(storeItems).all();
    const usage = usageSnapshot().durableObjects["WorkspaceDO:store"];
    expect(usage.calls).toBe(2);
    expect(usage.methods).toEqual({ exec: 2 });
    expect(usage.rowsWritten).toBeGreaterThanOrEqual(1);
  });

  it("arms the alarm no later than asked, keeping an earlier time", async () => {
    const partition = { workspaceId: "wd", kind: "crons" } as const;
    const stub = env.WORKSPACE.getByName(partitionName(partition));
    const soon = Date.now() + 60_000;
    await armPartition(env, partition, soon);
    await armPartition(env, partition, soon + 60_000);
    // The crons alarm runs, finds no cron in this partition, and sets nothing again.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
  });
});
