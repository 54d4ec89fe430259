import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_THREAD_INDEX_STATE_BYTES } from "../../src/core/limits.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import {
  compareText,
  searchThreadIndex,
  THREAD_INDEX_SHARDS,
  type ThreadSearch,
  threadKeysAfter,
} from "../../src/threads/search-index.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { until } from "../fixtures/until.ts";
import { call, json } from "./helpers.ts";
import { onIndexShard, shardOf, updateIndexRows } from "./thread-index-helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

async function createThread(body: Record<string, unknown> = {}): Promise<ThreadJson> {
  const response = await post("/threads", body);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<ThreadJson>(response);
}

/** Supersteps that give a thread `values` as its input. */
const inputSupersteps = (values: Record<string, unknown>) => [
  { updates: [{ values: {}, as_node: "__input__" }] },
  { updates: [{ values, as_node: "__start__" }] },
];

type SortBy = ThreadSearch["sortBy"];
const SORTS: SortBy[] = ["thread_id", "status", "created_at", "updated_at", "state_updated_at"];

interface IndexedThread {
  thread_id: string;
  status: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
}

/** The tagged threads as every shard holds them, read directly from the shards (not through the merge). */
async function indexed(tag: string): Promise<IndexedThread[]> {
  const rows: IndexedThread[] = [];
  for (let shard = 0; shard < THREAD_INDEX_SHARDS; shard++) {
    const found = await onIndexShard(
      shard,
      "SELECT thread_id, status, created_at, updated_at, state_updated_at FROM threads WHERE metadata ->> '$.tag' = ?",
      [tag],
    );
    for (const [thread_id, status, created_at, updated_at, state_updated_at] of found as string[][])
      rows.push({ thread_id, status, created_at, updated_at, state_updated_at });
  }
  return rows;
}

/** The order one database gives: the sort column, then thread_id, both ascending or both descending. */
function expectedOrder(rows: IndexedThread[], sortBy: SortBy, order: "asc" | "desc"): string[] {
  const sorted = [...rows].sort((a, b) => {
    const x = a[sortBy] < b[sortBy] ? -1 : a[sortBy] > b[sortBy] ? 1 : 0;
    return x || (a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0);
  });
  return (order === "asc" ? sorted : sorted.reverse()).map((row) => row.thread_id);
}

async function search(
  body: Record<string, unknown>,
): Promise<{ ids: string[]; total: string | null; next: string | null }> {
  const response = await post("/threads/search", body);
  expect(response.status, await response.clone().text()).toBe(200);
  return {
    ids: (await json<ThreadJson[]>(response)).map((thread) => thread.thread_id),
    total: response.headers.get("x-pagination-total"),
    next: response.headers.get("x-pagination-next"),
  };
}

describe("the thread index spread over shards", () => {
  it("searches, counts and sorts across shards exactly as one table would", async () => {
    const tag = crypto.randomUUID();
    const threads: string[] = [];
    for (let i = 0; i < 24; i++)
      threads.push((await createThread({ metadata: { tag, i, odd: i % 2 === 1 } })).thread_id);
    const shards = new Set(threads.map(shardOf));
    expect(shards.size).toBeGreaterThanOrEqual(4);
    // Ties across shards on every sort column: the thread id decides, as in one table.
    const tied = threads.slice(0, 12);
    await updateIndexRows(tied, "created_at = ?, updated_at = ?, state_updated_at = ?", [
      "2026-01-01T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z",
    ]);
    await updateIndexRows(threads.slice(6, 15), "status = 'busy'");
    const rows = await indexed(tag);
    expect(rows).toHaveLength(24);

    for (const sortBy of SORTS)
      for (const order of ["asc", "desc"] as const) {
        const expected = expectedOrder(rows, sortBy, order);
        const all = await search({ metadata: { tag }, limit: 100, sort_by: sortBy, sort_order: order });
        expect(all.ids, `${sortBy} ${order}`).toEqual(expected);
        expect(all.total).toBe("24");
        expect(all.next).toBeNull();
        // An offset past any one shard's matches, and a limit.
        const page = await search({ metadata: { tag }, limit: 7, offset: 13, sort_by: sortBy, sort_order: order });
        expect(page.ids, `${sortBy} ${order} page`).toEqual(expected.slice(13, 20));
        expect(page.next).toBe("20");
        const last = await search({ metadata: { tag }, limit: 7, offset: 20, sort_by: sortBy, sort_order: order });
        expect(last.ids).toEqual(expected.slice(20));
        expect(last.next).toBeNull();
        expect((await search({ metadata: { tag }, offset: 24, sort_by: sortBy, sort_order: order })).ids).toEqual([]);
      }

    // Filters: metadata, status, ids; and count sums the shards.
    const busy = expectedOrder(
      rows.filter((row) => row.status === "busy"),
      "created_at",
      "desc",
    );
    expect((await search({ metadata: { tag }, status: "busy", limit: 100 })).ids).toEqual(busy);
    expect(await json(await post("/threads/count", { metadata: { tag }, status: "busy" }))).toBe(9);
    expect(await json(await post("/threads/count", { metadata: { tag } }))).toBe(24);
    expect(await json(await post("/threads/count", { metadata: { tag, odd: true } }))).toBe(12);
    const some = [threads[1], threads[5], threads[22], crypto.randomUUID()];
    const byIds = await search({ ids: some, limit: 100, sort_by: "thread_id", sort_order: "asc" });
    expect(byIds.ids).toEqual(some.slice(0, 3).sort());
  });

  it("merges chunk by chunk past the first keys of each shard, and bounds a deep offset's calls", async () => {
    const tag = crypto.randomUUID();
    const threads: string[] = [];
    for (let i = 0; i < 20; i++) threads.push((await createThread({ metadata: { tag } })).thread_id);
    const rows = await indexed(tag);
    const base = { metadata: { tag }, sortBy: "created_at", sortOrder: "asc" } as const;
    const expected = expectedOrder(rows, "created_at", "asc");
    // Two keys per call: most of the page comes from further chunks of each shard.
    for (const [offset, limit] of [
      [0, 20],
      [5, 9],
      [17, 10],
    ]) {
      const { rows: page, total } = await searchThreadIndex(
        env,
        DEFAULT_WORKSPACE_ID,
        { ...base, offset, limit },
        { keysPerCall: 2 },
      );
      expect(page.map((row) => row.threadId)).toEqual(expected.slice(offset, offset + limit));
      expect(total).toBe(20);
    }
    // Free plan: 24 key calls; one key per call and a deep offset need more, so the search answers 422.
    const free = { ...env, LIMITS_GUARD: "free" };
    const deep = searchThreadIndex(free, DEFAULT_WORKSPACE_ID, { ...base, offset: 19, limit: 1 }, { keysPerCall: 1 });
    await expect(deep).rejects.toMatchObject({ kind: "invalid" });
    await expect(deep).rejects.toThrow(/offset too deep/);
  });

  it("keeps a bounded values summary: a large state is found by metadata, not by values, and answered whole", async () => {
    const tag = crypto.randomUUID();
    const blob = "v".repeat(MAX_THREAD_INDEX_STATE_BYTES + 100);
    const large = await createThread({
      graph_id: "steps",
      metadata: { tag },
      supersteps: inputSupersteps({ items: [blob], ask_human: true }),
    });
    const small = await createThread({
      graph_id: "steps",
      metadata: { tag },
      supersteps: inputSupersteps({ items: ["x"], ask_human: true }),
    });
    const [[indexedValues, valuesIndexed, stateBytes]] = (await onIndexShard(
      shardOf(large.thread_id),
      `SELECT "values", values_indexed, state_bytes FROM threads WHERE thread_id = ?`,
      [large.thread_id],
    )) as [unknown, number, number][];
    expect(indexedValues).toBeNull();
    expect(valuesIndexed).toBe(0);
    expect(stateBytes).toBeGreaterThan(MAX_THREAD_INDEX_STATE_BYTES);
    // By metadata: both, the large one with its whole values read from the thread.
    const found = await json<ThreadJson[]>(await post("/threads/search", { metadata: { tag }, limit: 10 }));
    expect(found.map((t) => t.thread_id).sort()).toEqual([large.thread_id, small.thread_id].sort());
    expect(found.find((t) => t.thread_id === large.thread_id)?.values).toEqual({ items: [blob], ask_human: true });
    // By values: only the one whose values are in the index.
    const byValues = await json<ThreadJson[]>(
      await post("/threads/search", { metadata: { tag }, values: { ask_human: true } }),
    );
    expect(byValues.map((t) => t.thread_id)).toEqual([small.thread_id]);
    expect(await json(await post("/threads/count", { metadata: { tag }, values: { ask_human: true } }))).toBe(1);
  });

  it("walks the fan-out keyset across shards in (created_at, thread_id) order", async () => {
    const tag = crypto.randomUUID();
    const threads: string[] = [];
    for (let i = 0; i < 15; i++) threads.push((await createThread({ metadata: { tag } })).thread_id);
    await updateIndexRows(threads.slice(0, 8), "created_at = ?", ["2026-01-01T00:00:00.000Z"]);
    const expected = expectedOrder(await indexed(tag), "created_at", "asc");
    const walked: string[] = [];
    let after = null;
    for (let step = 0; step < 10; step++) {
      const keys = await threadKeysAfter(env, DEFAULT_WORKSPACE_ID, { metadata: { tag } }, after, 4);
      walked.push(...keys.map((key) => key.threadId));
      if (keys.length < 4) break;
      after = keys[keys.length - 1] ?? null;
    }
    expect(walked).toEqual(expected);
  });

  it("orders text as SQLite does (UTF-8 bytes), not as UTF-16 code units", () => {
    expect(compareText("\u{10000}", "\uffff")).toBeGreaterThan(0);
    expect(compareText("a", "ab")).toBeLessThan(0);
    expect(compareText("b", "ab")).toBeGreaterThan(0);
    expect(compareText("x", "x")).toBe(0);
  });

  it("a thread create and a run write nothing to D1", async () => {
    // Every table is counted (the agent run's tracing writes its workspace partitions, not D1).
    const tables = (
      await env.DB.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'",
      ).all<{
        name: string;
      }>()
    ).results.map((row) => row.name);
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(
          tables.map(async (name) => [
            name,
            (await env.DB.prepare(`SELECT count(*) AS n FROM "${name}"`).first<{ n: number }>())?.n,
          ]),
        ),
      );
    // The workspace's first run seeds its system assistants in D1: not this test's concern.
    const first = await createThread();
    const warm = await post(`/threads/${first.thread_id}/runs/wait`, { assistant_id: "echo", input: { messages: [] } });
    expect(warm.status).toBe(200);
    const before = await counts();
    const thread = await createThread({ metadata: { d1: "none" } });
    const run = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: "echo",
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect(run.status).toBe(200);
    // The run's busy → idle reaches the index shortly after (coalesced): wait for it, then count.
    await until(
      async () => json<ThreadJson[]>(await post("/threads/search", { ids: [thread.thread_id] })),
      (found) => found[0]?.status === "idle",
    );
    expect(await counts()).toEqual(before);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM threads").first()).toEqual({ n: 0 });
  });
});
