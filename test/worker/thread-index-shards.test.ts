// The thread index is spread over a workspace's THREAD_INDEX_SHARDS partitions: search, count and sort
// answer as one database would, and creating a thread or running it writes no D1 row.
import { describe, expect, it } from "vitest";
import { MAX_INDEX_VALUES_BYTES, MAX_THREAD_SEARCH_WINDOW } from "../../src/core/limits.ts";
import { resetUsage, usageSnapshot } from "../../src/limits-guard/usage.ts";
import { compareText, indexProjection } from "../../src/threads/thread-index.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { hashBucket, THREAD_INDEX_SHARDS } from "../../src/workspace/partition.ts";
import { call, inThreadIndex, json } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

async function search(
  body: Record<string, unknown>,
): Promise<{ ids: string[]; total: string | null; next: string | null }> {
  const response = await post("/threads/search", body);
  expect(response.status).toBe(200);
  const threads = await json<ThreadJson[]>(response);
  return {
    ids: threads.map((t) => t.thread_id),
    total: response.headers.get("x-pagination-total"),
    next: response.headers.get("x-pagination-next"),
  };
}

describe("the sharded thread index", () => {
  it("orders text as SQLite does (code points), not as JS's UTF-16 units", () => {
    expect(compareText("a", "b")).toBeLessThan(0);
    expect(compareText("ab", "a")).toBeGreaterThan(0);
    // U+FF5E sorts before U+1F600 in code points (and in UTF-8 bytes); UTF-16 units say otherwise.
    expect(compareText("\uff5e", "\u{1f600}")).toBeLessThan(0);
    expect("\uff5e" < "\u{1f600}").toBe(false);
  });

  it("searches, counts and sorts threads spread over every shard as one index would", async () => {
    const tag = crypto.randomUUID();
    // 40 threads with a status and a `rank` each; updated in a shuffled order.
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const thread = await json<ThreadJson>(await post("/threads", { metadata: { tag, rank: i, odd: i % 2 === 1 } }));
      ids.push(thread.thread_id);
    }
    const shards = new Set(ids.map((id) => hashBucket(id, THREAD_INDEX_SHARDS)));
    expect(shards.size).toBeGreaterThan(4);
    await inThreadIndex(
      "UPDATE threads SET status = 'busy' WHERE metadata ->> '$.odd' = 1 AND metadata ->> '$.tag' = ?",
      [tag],
    );
    const created = [...ids];
    for (const order of ["asc", "desc"] as const) {
      const expected = order === "asc" ? created : [...created].reverse();
      const all = await search({ metadata: { tag }, limit: 100, sort_by: "created_at", sort_order: order });
      expect(all.ids).toEqual(expected);
      expect(all.total).toBe("40");
      // Pages past the first shard's share of matches, by offset.
      const pages: string[] = [];
      for (let offset = 0; offset < 40; offset += 7) {
        pages.push(
          ...(await search({ metadata: { tag }, limit: 7, offset, sort_by: "created_at", sort_order: order })).ids,
        );
      }
      expect(pages).toEqual(expected);
      const byId = await search({ metadata: { tag }, limit: 100, sort_by: "thread_id", sort_order: order });
      expect(byId.ids).toEqual([...ids].sort((a, b) => (order === "asc" ? compareText(a, b) : compareText(b, a))));
    }
    const busy = await search({
      metadata: { tag },
      status: "busy",
      limit: 100,
      sort_by: "created_at",
      sort_order: "asc",
    });
    expect(busy.ids).toEqual(created.filter((_, i) => i % 2 === 1));
    const byStatus = await search({ metadata: { tag }, limit: 100, sort_by: "status", sort_order: "asc" });
    expect(byStatus.ids.slice(0, 20).sort()).toEqual(busy.ids.sort());
    const count = await post("/threads/count", { metadata: { tag }, status: "busy" });
    expect(await json<number>(count)).toBe(20);
    const some = await search({ ids: [ids[3], ids[17], ids[31]], limit: 10 });
    expect(some.ids.sort()).toEqual([ids[3], ids[17], ids[31]].sort());
  }, 60_000);

  it(`answers 422 past offset + limit = ${MAX_THREAD_SEARCH_WINDOW}`, async () => {
    const response = await post("/threads/search", { limit: 1000, offset: MAX_THREAD_SEARCH_WINDOW - 999 });
    expect(response.status).toBe(422);
    expect(await response.text()).toMatch(/offset \+ limit may be at most 10000/);
    expect((await post("/threads/search", { limit: 1000, offset: MAX_THREAD_SEARCH_WINDOW - 1000 })).status).toBe(200);
  });

  it("keeps only a summary of large values: not searchable by values, interrupts cut to their ids", () => {
    const record = (values: Record<string, unknown>) =>
      ({
        metadata: { a: 1 },
        config: {},
        error: null,
        values,
        interrupts: { task: [{ id: "i1", value: { question: "?" } }] },
      }) as unknown as Parameters<typeof indexProjection>[0];
    const small = indexProjection(record({ n: 1 }));
    expect(small).toMatchObject({ values: { n: 1 }, valuesIndexed: true });
    const large = indexProjection(record({ blob: "x".repeat(MAX_INDEX_VALUES_BYTES) }));
    expect(large.values).toBeNull();
    expect(large.valuesIndexed).toBe(false);
    expect(large.interrupts).toEqual({ task: [{ id: "i1" }] });
  });

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
  });
});
