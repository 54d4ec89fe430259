import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadDO } from "../../src/threads/object/thread-do.ts";
import type { ThreadJson, ThreadStateJson } from "../../src/threads/types.ts";
import { call, json } from "./helpers.ts";
import { updateIndexRows } from "./thread-index-helpers.ts";

const post = (path: string, body: unknown, key?: string) => call(path, { method: "POST", json: body, key });

async function createThread(body: Record<string, unknown> = {}, key?: string): Promise<ThreadJson> {
  const response = await post("/threads", body, key);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<ThreadJson>(response);
}

/** Supersteps that give a thread `values` as its input: `__input__` opens the run, `__start__` writes. */
const inputSupersteps = (values: Record<string, unknown>) => [
  { updates: [{ values: {}, as_node: "__input__" }] },
  { updates: [{ values, as_node: "__start__" }] },
];

/** An echo thread with one human and one AI message, via supersteps. */
const echoSupersteps = (text: string) => [
  ...inputSupersteps({ messages: [{ role: "user", content: text }] }),
  { updates: [{ values: { messages: [{ type: "ai", content: `echo: ${text}` }] }, as_node: "respond" }] },
];

async function history(threadId: string, body: Record<string, unknown> = {}): Promise<ThreadStateJson[]> {
  const response = await post(`/threads/${threadId}/history`, body);
  expect(response.status).toBe(200);
  return json<ThreadStateJson[]>(response);
}

describe("POST /threads", () => {
  it("creates an empty idle thread", async () => {
    const thread = await createThread();
    expect(thread).toMatchObject({ status: "idle", metadata: {}, config: {}, values: {}, interrupts: {}, error: null });
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(thread.created_at)).toBeGreaterThan(0);
    expect(thread.updated_at).toBe(thread.created_at);
  });

  it("keeps metadata and graph_id, and honours if_exists", async () => {
    const threadId = crypto.randomUUID();
    const thread = await createThread({ thread_id: threadId, metadata: { user: "ada" }, graph_id: "echo" });
    expect(thread.thread_id).toBe(threadId);
    expect(thread.metadata).toEqual({ user: "ada", graph_id: "echo" });
    const again = await post("/threads", { thread_id: threadId });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ detail: `Thread ${threadId} already exists` });
    const kept = await createThread({ thread_id: threadId, if_exists: "do_nothing", metadata: { other: 1 } });
    expect(kept.metadata).toEqual({ user: "ada", graph_id: "echo" });
  });

  it("applies supersteps in order and returns the resulting state", async () => {
    const thread = await createThread({ graph_id: "echo", supersteps: echoSupersteps("hello") });
    const messages = thread.values.messages as Record<string, unknown>[];
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatchObject({
      type: "human",
      content: "hello",
      additional_kwargs: {},
      response_metadata: {},
    });
    expect(messages[0].id).toEqual(expect.any(String));
    expect(messages[1]).toMatchObject({ type: "ai", content: "echo: hello", tool_calls: [], invalid_tool_calls: [] });
    expect(thread.status).toBe("idle");
    const states = await history(thread.thread_id);
    expect(states.map((s) => s.metadata.source)).toEqual(["update", "update", "input"]);
  });

  it("refuses supersteps naming an unknown node, or on a thread without a graph, and creates nothing", async () => {
    const threadId = crypto.randomUUID();
    const unknown = await post("/threads", {
      thread_id: threadId,
      graph_id: "steps",
      supersteps: [{ updates: [{ values: { items: ["x"] }, as_node: "step9" }] }],
    });
    expect(unknown.status).toBe(422);
    expect((await json(unknown)).detail).toBe(
      'supersteps[0].updates[0]: as_node "step9" is not a node of graph "steps" (nodes: step1, step2, step3, review)',
    );
    expect((await call(`/threads/${threadId}`)).status).toBe(404);

    const graphless = await post("/threads", { supersteps: echoSupersteps("x") });
    expect(graphless.status).toBe(422);
    expect((await json(graphless)).detail).toContain("has no graph ID");
  });

  it("validates ids and bodies with 422", async () => {
    expect((await post("/threads", { thread_id: "not-a-uuid" })).status).toBe(422);
    expect((await post("/threads", { if_exists: "maybe" })).status).toBe(422);
    expect((await call("/threads/not-a-uuid")).status).toBe(422);
    expect((await post("/threads", { ttl: { ttl: -5 } })).status).toBe(422);
  });
});

describe("GET / PATCH / DELETE /threads/{id}", () => {
  it("gets, reports unknown threads as 404", async () => {
    const thread = await createThread({ metadata: { a: 1 } });
    expect(await json(await call(`/threads/${thread.thread_id}`))).toEqual(thread);
    const missing = crypto.randomUUID();
    const response = await call(`/threads/${missing}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ detail: `Thread with ID ${missing} not found` });
  });

  it("merges metadata and sets a TTL on patch", async () => {
    const thread = await createThread({ metadata: { a: 1, b: 2 } });
    const response = await call(`/threads/${thread.thread_id}`, {
      method: "PATCH",
      json: { metadata: { b: 3, c: 4 }, ttl: 30 },
    });
    const patched = await json<ThreadJson>(response);
    expect(patched.metadata).toEqual({ a: 1, b: 3, c: 4 });
    expect(Date.parse(patched.updated_at)).toBeGreaterThanOrEqual(Date.parse(thread.updated_at));
    const withTtl = await json<ThreadJson>(await call(`/threads/${thread.thread_id}?include=ttl`));
    expect(withTtl.ttl).toMatchObject({ strategy: "delete", ttl_minutes: 30 });
    expect(Date.parse(withTtl.ttl!.expires_at) - Date.parse(withTtl.updated_at)).toBe(30 * 60_000);
    expect((await call(`/threads/${crypto.randomUUID()}`, { method: "PATCH", json: { metadata: {} } })).status).toBe(
      404,
    );
  });

  it("deletes a thread with its checkpoints and its index entry", async () => {
    const thread = await createThread({
      graph_id: "echo",
      supersteps: echoSupersteps("bye"),
      metadata: { marker: "to-delete" },
    });
    expect((await call(`/threads/${thread.thread_id}`, { method: "DELETE" })).status).toBe(200);
    expect((await call(`/threads/${thread.thread_id}`)).status).toBe(404);
    expect((await call(`/threads/${thread.thread_id}`, { method: "DELETE" })).status).toBe(404);
    expect(await json(await post("/threads/search", { metadata: { marker: "to-delete" } }))).toEqual([]);
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${thread.thread_id}`));
    const tables = await runInDurableObject(stub, (_instance: ThreadDO, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'").toArray(),
    );
    expect(tables).toEqual([]);
  });
});

describe("POST /threads/{id}/copy", () => {
  it("creates an independent thread with an identical history", async () => {
    const source = await createThread({
      graph_id: "echo",
      supersteps: echoSupersteps("copy me"),
      metadata: { owner: "x" },
    });
    const response = await post(`/threads/${source.thread_id}/copy`, {});
    expect(response.status).toBe(200);
    const copy = await json<ThreadJson>(response);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toEqual(source.metadata);
    expect(copy.values).toEqual(source.values);
    expect(copy.status).toBe("idle");

    const strip = (states: ThreadStateJson[]) =>
      states.map((s) => ({ id: s.checkpoint_id, values: s.values, next: s.next, step: s.metadata.step }));
    const before = await history(source.thread_id);
    expect(strip(await history(copy.thread_id))).toEqual(strip(before));
    const copied = await history(copy.thread_id);
    expect(copied[0].checkpoint?.thread_id).toBe(copy.thread_id);
    expect(copied.every((s) => s.metadata.thread_id === copy.thread_id)).toBe(true);

    // Later changes to one do not reach the other.
    const update = await post(`/threads/${copy.thread_id}/state`, {
      values: { messages: [{ role: "user", content: "only in copy" }] },
      as_node: "respond",
    });
    expect(update.status).toBe(200);
    expect(await history(copy.thread_id)).toHaveLength(before.length + 1);
    expect(strip(await history(source.thread_id))).toEqual(strip(before));
  });

  it("answers 409 Thread not found for a thread that does not exist, as the official API does", async () => {
    const missing = await post(`/threads/${crypto.randomUUID()}/copy`, {});
    expect(missing.status).toBe(409);
    expect(await json(missing)).toEqual({ detail: "Thread not found" });
  });
});

describe("search and count", () => {
  it("filters by metadata containment, status, ids and values; sorts and pages with headers", async () => {
    const tag = crypto.randomUUID();
    const created: ThreadJson[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        await createThread({
          metadata: {
            tag,
            n: i,
            even: i % 2 === 0,
            nested: { level: i < 2 ? "low" : "high", keep: true },
            labels: ["a", `l${i}`],
          },
        }),
      );
    }
    const search = async (body: Record<string, unknown>) => {
      const response = await post("/threads/search", { metadata: { tag }, ...body });
      expect(response.status).toBe(200);
      return {
        threads: await json<ThreadJson[]>(response),
        total: response.headers.get("x-pagination-total"),
        next: response.headers.get("x-pagination-next"),
      };
    };
    const all = await search({ limit: 10 });
    expect(all.threads.map((t) => t.thread_id)).toEqual(created.map((t) => t.thread_id).reverse());
    expect(all.total).toBe("5");
    expect(all.next).toBeNull();

    const asc = await search({ sort_by: "created_at", sort_order: "asc", limit: 2, offset: 1 });
    expect(asc.threads.map((t) => t.metadata.n)).toEqual([1, 2]);
    expect(asc.total).toBe("5");
    expect(asc.next).toBe("3");

    expect((await search({ metadata: { tag, even: true } })).threads.map((t) => t.metadata.n).sort()).toEqual([
      0, 2, 4,
    ]);
    expect((await search({ metadata: { tag, nested: { level: "low" } } })).threads).toHaveLength(2);
    expect((await search({ metadata: { tag, labels: ["l3"] } })).threads.map((t) => t.metadata.n)).toEqual([3]);
    expect((await search({ metadata: { tag, n: "1" } })).threads).toHaveLength(0);
    expect((await search({ ids: [created[0].thread_id, created[4].thread_id] })).threads).toHaveLength(2);
    expect((await search({ status: "busy" })).threads).toHaveLength(0);

    const selected = await search({ select: ["thread_id", "metadata"], limit: 1 });
    expect(Object.keys(selected.threads[0]).sort()).toEqual(["metadata", "thread_id"]);

    expect(await json(await post("/threads/count", { metadata: { tag } }))).toBe(5);
    expect(await json(await post("/threads/count", { metadata: { tag, even: false } }))).toBe(2);
    expect((await post("/threads/search", { limit: 0 })).status).toBe(422);
    expect((await post("/threads/search", { sort_by: "color" })).status).toBe(422);
  });

  it("filters on state values", async () => {
    const tag = crypto.randomUUID();
    await createThread({
      graph_id: "steps",
      metadata: { tag },
      supersteps: inputSupersteps({ items: ["x"], ask_human: true }),
    });
    await createThread({
      graph_id: "steps",
      metadata: { tag },
      supersteps: inputSupersteps({ items: ["y"], ask_human: false }),
    });
    const found = await json<ThreadJson[]>(
      await post("/threads/search", { metadata: { tag }, values: { ask_human: true } }),
    );
    expect(found.map((t) => t.values.items)).toEqual([["x"]]);
    expect(await json(await post("/threads/count", { metadata: { tag }, values: { items: ["y"] } }))).toBe(1);
  });
});

describe("state and history", () => {
  it("returns an empty state for a thread without a graph", async () => {
    const thread = await createThread();
    const state = await json<ThreadStateJson>(await call(`/threads/${thread.thread_id}/state`));
    expect(state).toMatchObject({ values: {}, next: [], tasks: [], checkpoint: null });
    expect(await history(thread.thread_id)).toEqual([]);
  });

  it("reads the latest state and the state at a checkpoint", async () => {
    const thread = await createThread({ graph_id: "echo", supersteps: echoSupersteps("state") });
    const latest = await json<ThreadStateJson>(await call(`/threads/${thread.thread_id}/state`));
    expect(latest.values).toEqual(thread.values);
    expect(latest.next).toEqual([]);
    expect(latest.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: "" });
    expect(latest.metadata).toMatchObject({
      source: "update",
      step: expect.any(Number),
      graph_id: "echo",
      thread_id: thread.thread_id,
    });
    expect(latest.parent_checkpoint_id).toEqual(expect.any(String));

    const parentId = latest.parent_checkpoint_id!;
    const atGet = await json<ThreadStateJson>(await call(`/threads/${thread.thread_id}/state/${parentId}`));
    expect(atGet.checkpoint_id).toBe(parentId);
    expect((atGet.values as { messages: unknown[] }).messages).toHaveLength(1);
    expect(atGet.next).toEqual(["respond"]);
    const atPost = await json<ThreadStateJson>(
      await post(`/threads/${thread.thread_id}/state/checkpoint`, { checkpoint: { checkpoint_id: parentId } }),
    );
    expect(atPost).toEqual(atGet);

    const missing = await call(`/threads/${thread.thread_id}/state/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).detail).toContain("not found");
  });

  it("updates state as a node, creating a checkpoint with source update", async () => {
    const thread = await createThread({ graph_id: "steps", supersteps: inputSupersteps({ items: ["start"] }) });
    const response = await post(`/threads/${thread.thread_id}/state`, {
      values: { items: ["manual"] },
      as_node: "step1",
    });
    expect(response.status).toBe(200);
    const { checkpoint } = await json<{ checkpoint: { checkpoint_id: string; thread_id: string } }>(response);
    expect(checkpoint.thread_id).toBe(thread.thread_id);
    const state = await json<ThreadStateJson>(await call(`/threads/${thread.thread_id}/state`));
    expect(state.checkpoint_id).toBe(checkpoint.checkpoint_id);
    expect(state.values).toMatchObject({ items: ["start", "manual"] });
    expect(state.next).toEqual(["step2"]);
    expect(state.metadata.source).toBe("update");
    const refreshed = await json<ThreadJson>(await call(`/threads/${thread.thread_id}`));
    expect(refreshed.values).toMatchObject({ items: ["start", "manual"] });

    const badNode = await post(`/threads/${thread.thread_id}/state`, { values: {}, as_node: "nope" });
    expect(badNode.status).toBe(422);
    expect((await json(badNode)).detail).toContain('as_node "nope" is not a node of graph "steps"');
    const graphless = await createThread();
    expect((await post(`/threads/${graphless.thread_id}/state`, { values: {} })).status).toBe(422);
    expect((await post(`/threads/${crypto.randomUUID()}/state`, { values: {} })).status).toBe(404);
  });

  it("lists history newest first with limit, before and metadata filters", async () => {
    const thread = await createThread({
      graph_id: "steps",
      supersteps: [{ updates: [{ values: { items: [] }, as_node: "__input__" }] }],
    });
    for (const node of ["step1", "step2", "step3"]) {
      expect(
        (await post(`/threads/${thread.thread_id}/state`, { values: { items: [node] }, as_node: node })).status,
      ).toBe(200);
    }
    const all = await history(thread.thread_id, { limit: 10 });
    expect(all).toHaveLength(4);
    expect(all.map((s) => s.metadata.step)).toEqual(
      [...all.map((s) => s.metadata.step)].sort((a, b) => Number(b) - Number(a)),
    );
    expect(all[0].values).toMatchObject({ items: ["step1", "step2", "step3"] });
    expect(await history(thread.thread_id, { limit: 2 })).toHaveLength(2);
    const older = await history(thread.thread_id, {
      before: { configurable: { checkpoint_id: all[1].checkpoint_id } },
    });
    expect(older.map((s) => s.checkpoint_id)).toEqual(all.slice(2).map((s) => s.checkpoint_id));
    expect((await history(thread.thread_id, { before: all[1].checkpoint_id })).length).toBe(2);
    expect((await history(thread.thread_id, { metadata: { source: "input" } })).map((s) => s.checkpoint_id)).toEqual([
      all[3].checkpoint_id,
    ]);
    const viaGet = await json<ThreadStateJson[]>(await call(`/threads/${thread.thread_id}/history?limit=3`));
    expect(viaGet.map((s) => s.checkpoint_id)).toEqual(all.slice(0, 3).map((s) => s.checkpoint_id));
  });
});

describe("prune", () => {
  it("deletes threads or keeps only their latest checkpoint", async () => {
    const a = await createThread({ graph_id: "echo", supersteps: echoSupersteps("a") });
    const b = await createThread({ graph_id: "echo", supersteps: echoSupersteps("b") });
    const kept = await json(
      await post("/threads/prune", { thread_ids: [a.thread_id, crypto.randomUUID()], strategy: "keep_latest" }),
    );
    expect(kept).toEqual({ pruned_count: 1 });
    const compacted = await history(a.thread_id);
    expect(compacted).toHaveLength(1);
    expect(compacted[0].values).toEqual(a.values);
    expect(await json(await post("/threads/prune", { thread_ids: [b.thread_id] }))).toEqual({ pruned_count: 1 });
    expect((await call(`/threads/${b.thread_id}`)).status).toBe(404);
    expect((await post("/threads/prune", { thread_ids: [] })).status).toBe(422);
  });
});

describe("tenancy", () => {
  it("hides a thread from every other workspace", async () => {
    const workspace = await json<{ id: string }>(await post("/api/v1/workspaces", { display_name: "Other team" }));
    const { key } = await json<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
    const tag = crypto.randomUUID();
    const mine = await createThread({ metadata: { tag }, graph_id: "echo", supersteps: echoSupersteps("private") });

    const asOther = (path: string, init: RequestInit & { json?: unknown } = {}) => call(path, { ...init, key });
    expect((await asOther(`/threads/${mine.thread_id}`)).status).toBe(404);
    expect((await asOther(`/threads/${mine.thread_id}/state`)).status).toBe(404);
    expect((await asOther(`/threads/${mine.thread_id}/history`, { method: "POST", json: {} })).status).toBe(404);
    expect(
      (await asOther(`/threads/${mine.thread_id}`, { method: "PATCH", json: { metadata: { x: 1 } } })).status,
    ).toBe(404);
    // A copy of a thread the caller cannot see is a 409, as for one that does not exist.
    expect((await asOther(`/threads/${mine.thread_id}/copy`, { method: "POST", json: {} })).status).toBe(409);
    expect((await asOther(`/threads/${mine.thread_id}`, { method: "DELETE" })).status).toBe(404);
    expect(await json(await asOther("/threads/search", { method: "POST", json: { metadata: { tag } } }))).toEqual([]);
    expect(await json(await asOther("/threads/count", { method: "POST", json: { metadata: { tag } } }))).toBe(0);
    expect(
      await json(await asOther("/threads/prune", { method: "POST", json: { thread_ids: [mine.thread_id] } })),
    ).toEqual({ pruned_count: 0 });

    // The same id may exist independently in the other workspace.
    const theirs = await createThread({ thread_id: mine.thread_id, metadata: { tag, team: "other" } }, key);
    expect(theirs.metadata).toEqual({ tag, team: "other" });
    expect((await json<ThreadJson>(await call(`/threads/${mine.thread_id}`))).metadata).toMatchObject({
      graph_id: "echo",
    });
  });
});

describe("TTL", () => {
  const stubFor = (threadId: string) => env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
  const age = (threadId: string, minutes: number) =>
    runInDurableObject(stubFor(threadId), (instance: ThreadDO, state) => {
      state.storage.sql.exec("UPDATE thread SET updated_at = ?", new Date(Date.now() - minutes * 60_000).toISOString());
      instance.reloadFromStorage();
    });

  it("schedules the alarm and deletes the thread when it expires", async () => {
    const thread = await createThread({ ttl: { ttl: 10, strategy: "delete" }, metadata: { ttl: "delete" } });
    const alarm = await runInDurableObject(stubFor(thread.thread_id), (_i: ThreadDO, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeGreaterThan(Date.now() + 9 * 60_000);
    await age(thread.thread_id, 11);
    expect(await runDurableObjectAlarm(stubFor(thread.thread_id))).toBe(true);
    expect((await call(`/threads/${thread.thread_id}`)).status).toBe(404);
    expect(await json(await post("/threads/count", { metadata: { ttl: "delete" } }))).toBe(0);
  });

  it("does nothing before expiry, and compacts with keep_latest", async () => {
    const thread = await createThread({
      graph_id: "echo",
      supersteps: echoSupersteps("ttl"),
      ttl: { ttl: 10, strategy: "keep_latest" },
    });
    expect(await runDurableObjectAlarm(stubFor(thread.thread_id))).toBe(true);
    expect(await history(thread.thread_id)).toHaveLength(3);
    await age(thread.thread_id, 11);
    await runDurableObjectAlarm(stubFor(thread.thread_id));
    const after = await history(thread.thread_id);
    expect(after).toHaveLength(1);
    expect(after[0].values).toEqual(thread.values);
    expect((await call(`/threads/${thread.thread_id}`)).status).toBe(200);
  });
});

describe("robustness (review findings)", () => {
  const stubFor = (threadId: string) => env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));

  it("a delete racing a patch never brings the thread back", async () => {
    for (let i = 0; i < 5; i++) {
      const thread = await createThread({ metadata: { race: i } });
      const stub = stubFor(thread.thread_id);
      await Promise.all([stub.delete(), stub.patch({ metadata: { b: 2 } })]);
      expect((await call(`/threads/${thread.thread_id}`)).status).toBe(404);
      expect(await json(await post("/threads/count", { metadata: { race: i } }))).toBe(0);
    }
  });

  it("refuses TTLs beyond a century with 422 and leaves the thread usable", async () => {
    expect((await post("/threads", { ttl: 1e9 })).status).toBe(422);
    const thread = await createThread();
    expect((await call(`/threads/${thread.thread_id}`, { method: "PATCH", json: { ttl: 1e12 } })).status).toBe(422);
    expect((await call(`/threads/${thread.thread_id}?include=ttl`)).status).toBe(200);
  });

  it("answers over-large filters with 422, and takes many ids", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 34 }, (_, i) => [`k${i}`, `v${i}`]));
    const tooMany = await post("/threads/search", { metadata });
    expect(tooMany.status).toBe(422);
    expect((await post("/threads/count", { metadata })).status).toBe(422);
    const thread = await createThread({ metadata: { many: true } });
    const ids = [...Array.from({ length: 300 }, () => crypto.randomUUID()), thread.thread_id];
    const found = await json<ThreadJson[]>(
      await post("/threads/search", { ids, metadata: { many: true, a: undefined } }),
    );
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
  });

  it("matches metadata keys holding quotes and backslashes", async () => {
    const tag = crypto.randomUUID();
    await createThread({ metadata: { tag, 'a"b': 1, "c\\d": "x" } });
    expect(await json(await post("/threads/count", { metadata: { tag, 'a"b': 1 } }))).toBe(1);
    expect(await json(await post("/threads/count", { metadata: { tag, "c\\d": "x" } }))).toBe(1);
  });

  it("answers an unusable history filter with 422, not 500", async () => {
    const thread = await createThread({ graph_id: "echo", supersteps: echoSupersteps("h") });
    const response = await post(`/threads/${thread.thread_id}/history`, { metadata: { 'a"b': 1 } });
    expect(response.status).toBe(422);
  });

  it("treats an upper-case id as the same thread", async () => {
    const thread = await createThread();
    const upper = await call(`/threads/${thread.thread_id.toUpperCase()}`);
    expect(upper.status).toBe(200);
    expect((await json<ThreadJson>(upper)).thread_id).toBe(thread.thread_id);
  });
});

describe("search over large states", () => {
  it("ends a page at MAX_THREAD_SEARCH_PAGE_BYTES of thread data; X-Pagination-Next continues it", async () => {
    const tag = crypto.randomUUID();
    const threads: string[] = [];
    for (let i = 0; i < 90; i++) threads.push((await createThread({ metadata: { tag, i } })).thread_id);
    // 100 KB of state each, written into the index as a thread's values are: 9 MB in all.
    const state = JSON.stringify({ blob: "v".repeat(100_000) });
    await updateIndexRows(threads, `"values" = ?`, [state]);
    const search = async (offset: number) => {
      const response = await post("/threads/search", {
        metadata: { tag },
        limit: 1000,
        offset,
        sort_by: "created_at",
        sort_order: "asc",
      });
      expect(response.status).toBe(200);
      const page = await json<ThreadJson[]>(response);
      return {
        page,
        bytes: JSON.stringify(page).length,
        total: response.headers.get("x-pagination-total"),
        next: response.headers.get("x-pagination-next"),
      };
    };
    const first = await search(0);
    expect(first.page.length).toBeGreaterThan(70);
    expect(first.page.length).toBeLessThan(90);
    expect(first.bytes).toBeLessThan(8 * 1024 * 1024 + 100_000);
    expect(first.total).toBe("90");
    expect(first.next).toBe(String(first.page.length));
    expect(first.page[0].values).toEqual({ blob: "v".repeat(100_000) });
    const second = await search(Number(first.next));
    expect(second.next).toBeNull();
    const all = [...first.page, ...second.page].map((t) => t.thread_id);
    expect(new Set(all).size).toBe(90);
    expect(all.sort()).toEqual([...threads].sort());
  }, 60_000);
});
