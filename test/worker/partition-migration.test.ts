// The move of a populated D1 (the layout before workspace partitions) into workspace partitions.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { domainErrorOf } from "../../src/core/errors.ts";
import { storeItems } from "../../src/db/schema.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import {
  handlePartitionMigration,
  LEGACY_TABLES,
  movePage,
  PARTITION_MIGRATION_MESSAGE,
  type PartitionMigrationMessage,
  startPartitionMigrations,
} from "../../src/workspace/migration.ts";
import type { Partition } from "../../src/workspace/partition.ts";
import { hashBucket, partitionName, RUN_LOCATOR_SHARDS, THREAD_INDEX_SHARDS } from "../../src/workspace/partition.ts";

const NOW = "2026-11-26T00:00:00.000Z";

/** An env whose queue only records what is sent, so no chain runs behind the test's back. */
function recordingEnv() {
  const sent: PartitionMigrationMessage[] = [];
  const queue = {
    send: async (body: PartitionMigrationMessage) => void sent.push(body),
    sendBatch: async () => {},
  };
  return { sent, env: Object.assign({}, env, { QUEUE: queue as unknown as Queue }) };
}

/** A partition's rows of a table, as objects of the table's columns. */
async function rowsIn(partition: Partition, table: string): Promise<Record<string, unknown>[]> {
  const columns = LEGACY_TABLES[table].into ?? LEGACY_TABLES[table].columns;
  const [result] = await env.WORKSPACE.getByName(partitionName(partition)).exec(partition, [
    { sql: `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM ${table}`, params: [], method: "all" },
  ]);
  return (result.rows as unknown[][]).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
}

async function d1Count(table: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>();
  return row?.n ?? 0;
}

async function seedLegacy(workspaces: string[], perWorkspace: number): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  for (const ws of workspaces) {
    for (let i = 0; i < perWorkspace; i++) {
      statements.push(
        env.DB.prepare(
          "INSERT INTO store_items (workspace_id, namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        ).bind(ws, "notes", `k${i}`, JSON.stringify({ i, ws }), NOW, NOW),
        env.DB.prepare(
          `INSERT INTO threads (workspace_id, thread_id, status, metadata, "values", config, interrupts, created_at, updated_at, state_updated_at)
           VALUES (?, ?, 'idle', ?, ?, '{}', '{}', ?, ?, ?)`,
        ).bind(ws, `${ws}-t${i}`, JSON.stringify({ i }), JSON.stringify({ n: i }), NOW, NOW, NOW),
        env.DB.prepare(
          "INSERT INTO trace_run_locations (workspace_id, run_id, project_id, day) VALUES (?, ?, ?, ?)",
        ).bind(ws, `${ws}-r${i}`, "p", "2026-11-26"),
      );
    }
  }
  await env.DB.batch(statements);
}

describe("partition migration", () => {
  // A new deployment's migration marks every (empty) legacy table done; these tests play an upgraded
  // one, whose tables had rows when the migration ran.
  beforeAll(async () => {
    await env.DB.prepare("DELETE FROM partition_migrations").run();
  });
  it("moves every legacy row into its partition and empties D1, page by page", async () => {
    await seedLegacy(["mw1", "mw2"], 150);
    for (const table of ["store_items", "threads", "trace_run_locations"]) {
      let pages = 0;
      while (await movePage(env, table)) pages += 1;
      // 300 rows at 200 per page.
      expect(pages).toBe(2);
      expect(await d1Count(table)).toBe(0);
    }
    const items = await rowsIn({ workspaceId: "mw1", kind: "store" }, "store_items");
    expect(items).toHaveLength(150);
    expect(JSON.parse(String(items.find((r) => r.key === "k7")?.value))).toEqual({ i: 7, ws: "mw1" });
    // Each thread and each run in the shard its id hashes to, and nowhere else.
    const threadId = "mw2-t42";
    const shard = hashBucket(threadId, THREAD_INDEX_SHARDS);
    const threads = await rowsIn({ workspaceId: "mw2", kind: "threads", shard }, "threads");
    expect(threads.map((t) => t.thread_id)).toContain(threadId);
    expect(threads.every((t) => hashBucket(String(t.thread_id), THREAD_INDEX_SHARDS) === shard)).toBe(true);
    const runShard = hashBucket("mw1-r3", RUN_LOCATOR_SHARDS);
    const runs = await rowsIn({ workspaceId: "mw1", kind: "runs", shard: runShard }, "trace_run_locations");
    expect(runs.find((r) => r.run_id === "mw1-r3")).toMatchObject({ project_id: "p", day: "2026-11-26" });
  });

  it("keeps the partition's row when it is newer, and moving a page twice changes nothing", async () => {
    const partition = { workspaceId: "mw3", kind: "store" } as const;
    await env.WORKSPACE.getByName(partitionName(partition)).exec(partition, [
      {
        sql: "INSERT INTO store_items (workspace_id, namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        params: ["mw3", "notes", "k0", JSON.stringify({ fresh: true }), NOW, NOW],
        method: "run",
      },
    ]);
    await seedLegacy(["mw3"], 2);
    expect(await movePage(env, "store_items")).toBe(true);
    expect(await movePage(env, "store_items")).toBe(false);
    const items = await rowsIn(partition, "store_items");
    expect(items).toHaveLength(2);
    expect(JSON.parse(String(items.find((r) => r.key === "k0")?.value))).toEqual({ fresh: true });
  });

  it("moves a workspace's rows before its partition is first used, so a read sees them all", async () => {
    await seedLegacy(["mw5", "mw6"], 30);
    const items = await workspaceDatabase(env, { workspaceId: "mw5", kind: "store" })
      .select({ key: storeItems.key })
      .from(storeItems)
      .all();
    expect(items).toHaveLength(30);
    const left = await env.DB.prepare(
      "SELECT workspace_id, count(*) AS n FROM store_items GROUP BY workspace_id",
    ).all();
    expect(left.results).toEqual([{ workspace_id: "mw6", n: 30 }]);
  });

  it("answers 503 for a workspace with more rows than one request moves, and the next request goes on", async () => {
    // Four pages of 200 rows move inline; 1,000 rows need five.
    await seedLegacy(["mw7"], 1000);
    const db = workspaceDatabase(env, { workspaceId: "mw7", kind: "store" });
    const error = await db
      .select()
      .from(storeItems)
      .all()
      .catch((e: unknown) => e);
    // drizzle wraps it; the error handler finds it under the wrapper and answers 503.
    expect(domainErrorOf(error)?.kind).toBe("unavailable");
    expect(String(domainErrorOf(error)?.detail)).toMatch(/store items are being moved/);
    const rows = await workspaceDatabase(env, { workspaceId: "mw7", kind: "store" })
      .select({ key: storeItems.key })
      .from(storeItems)
      .all();
    expect(rows).toHaveLength(1000);
    await env.DB.prepare("DELETE FROM threads").run();
    await env.DB.prepare("DELETE FROM trace_run_locations").run();
  });

  it("starts one chain per table with rows, continues it on the queue, and marks the table done", async () => {
    await seedLegacy(["mw4"], 3);
    const { sent, env: recording } = recordingEnv();
    const now = Date.now();
    const started = await startPartitionMigrations(recording, now);
    expect(started.sort()).toEqual(Object.keys(LEGACY_TABLES).sort());
    // A second tick while the chains hold their lease starts nothing.
    expect(await startPartitionMigrations(recording, now + 1000)).toEqual([]);
    // Run the chains to the end.
    while (sent.length) await handlePartitionMigration(sent.shift()!, recording);
    for (const table of Object.keys(LEGACY_TABLES)) expect(await d1Count(table)).toBe(0);
    const state = await env.DB.prepare("SELECT table_name, moved, done_at FROM partition_migrations").all<{
      table_name: string;
      moved: number;
      done_at: string | null;
    }>();
    expect(state.results.every((r) => r.done_at !== null)).toBe(true);
    expect(state.results.find((r) => r.table_name === "store_items")?.moved).toBeGreaterThanOrEqual(3);
    // Done tables start no chain again, even once their lease has long expired.
    expect(await startPartitionMigrations(recording, now + 3_600_000)).toEqual([]);
    expect(sent).toEqual([]);
    expect(PARTITION_MIGRATION_MESSAGE).toBe("workspace.partition-migration");
  });
});
