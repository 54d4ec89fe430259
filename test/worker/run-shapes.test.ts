// What runs put on the wire and in storage: checkpoint payloads in streams, the thread config of
// factory graphs, and run inputs and states larger than a storage row.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadDO } from "../../src/thread/thread-do.ts";
import type { ThreadJson } from "../../src/thread/types.ts";
import { call, json } from "./helpers.ts";
import { parseSse, type SseEvent } from "./sse.ts";

const post = (path: string, body: unknown, headers?: Record<string, string>) => call(path, { method: "POST", json: body, headers });
const human = (content: string) => ({ messages: [{ role: "user", content }] });

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

async function stream(path: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<SseEvent[]> {
  const response = await post(path, body, headers);
  expect(response.status, await response.clone().text()).toBe(200);
  return parseSse(await response.text());
}

interface CheckpointAddress {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}
type DebugRecord = { type: string; payload: Record<string, unknown> };

describe("checkpoint payloads in streams", () => {
  const headers = { "User-Agent": "time-travel-client/7.1", "X-Customer-Secret": "header-value-not-for-events" };

  it("debug checkpoint records name checkpoints by address and echo nothing of the run's configurable", async () => {
    const threadId = await newThread();
    const events = await stream(
      `/threads/${threadId}/runs/stream`,
      { assistant_id: "echo", input: human("hi"), stream_mode: ["debug", "checkpoints", "tasks"], config: { configurable: { client_setting: "mine" } } },
      headers,
    );
    const records = events.filter((e) => e.event === "debug").map((e) => e.data as DebugRecord);
    const checkpoints = records.filter((r) => r.type === "checkpoint").map((r) => r.payload);
    expect(checkpoints.length).toBeGreaterThanOrEqual(3); // input, after __start__, after respond

    const address = { thread_id: threadId, checkpoint_ns: "", checkpoint_id: expect.any(String), checkpoint_map: null };
    for (const payload of checkpoints) {
      expect(Object.keys(payload).sort()).toEqual(["checkpoint", "metadata", "next", "parent_checkpoint", "tasks", "values"]);
      expect(payload.checkpoint).toEqual(address);
    }
    // Each checkpoint's parent is the one before it; the run's first has none on a new thread.
    expect(checkpoints[0].parent_checkpoint).toBeNull();
    for (let i = 1; i < checkpoints.length; i++) {
      expect(checkpoints[i].parent_checkpoint).toEqual((checkpoints[i - 1].checkpoint as CheckpointAddress));
    }
    // The ids are the thread's checkpoints: time travel can fork from them.
    const last = checkpoints.at(-1)!.checkpoint as CheckpointAddress;
    const state = await json<{ checkpoint: CheckpointAddress }>(await call(`/threads/${threadId}/state`));
    expect(state.checkpoint).toEqual(last);

    // `checkpoints` events keep `config` (the SDK's type has it), reduced to the same address.
    const streamed = events.filter((e) => e.event === "checkpoints").map((e) => e.data as Record<string, unknown>);
    expect(streamed.length).toBe(checkpoints.length);
    for (const [i, payload] of streamed.entries()) {
      expect(payload.checkpoint).toEqual(checkpoints[i].checkpoint);
      expect(payload.config).toEqual({ configurable: checkpoints[i].checkpoint });
      expect(payload.parent_config).toEqual(checkpoints[i].parent_checkpoint && { configurable: checkpoints[i].parent_checkpoint });
    }

    const wire = JSON.stringify(events);
    for (const leak of ["time-travel-client", "header-value-not-for-events", "user-agent", "x-customer-secret", "langgraph_auth", "platform_auth", "client_setting"]) {
      expect(wire, leak).not.toContain(leak);
    }
  });

  it("a subgraph task of a debug checkpoint carries the subgraph's checkpoint, not a config", async () => {
    const threadId = await newThread();
    const events = await stream(`/threads/${threadId}/runs/stream`, { assistant_id: "nested", input: {}, stream_mode: ["debug"] });
    const tasks = events
      .filter((e) => e.event === "debug" && (e.data as DebugRecord).type === "checkpoint")
      .flatMap((e) => (e.data as DebugRecord).payload.tasks as Record<string, unknown>[]);
    const child = tasks.find((task) => task.name === "child")!;
    expect(child.checkpoint).toEqual({ thread_id: threadId, checkpoint_ns: `child:${child.id as string}`, checkpoint_id: null, checkpoint_map: null });
    expect(child).not.toHaveProperty("state");
  });
});

describe("the thread keeps the config of its runs", () => {
  it("a factory graph's thread is built with the run's config for state updates, reads and history", async () => {
    const assistant = await json<{ assistant_id: string }>(
      await post("/assistants", { graph_id: "factory", config: { configurable: { nodeName: "assistant" } } }),
    );
    const threadId = await newThread();
    const ran = await post(
      `/threads/${threadId}/runs/wait`,
      { assistant_id: assistant.assistant_id, input: human("hello"), config: { tags: ["mine"], configurable: { tone: "dry" } } },
      { "User-Agent": "factory-client/1.0", "X-Request-Detail": "header-only" },
    );
    expect(ran.status).toBe(200);

    // The run's config, without anything the server adds for the run (ids, user, headers).
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread.config).toEqual({ tags: ["mine"], configurable: { nodeName: "assistant", tone: "dry" } });
    const [indexed] = await json<ThreadJson[]>(await post("/threads/search", { ids: [threadId] }));
    expect(indexed.config).toEqual(thread.config);

    const updated = await post(`/threads/${threadId}/state`, { values: { messages: [{ role: "ai", content: "edited" }] }, as_node: "assistant" });
    expect(updated.status, await updated.clone().text()).toBe(200);
    const state = await json<{ next: string[]; values: { messages: { content: string }[] }; metadata: Record<string, unknown> }>(
      await call(`/threads/${threadId}/state`),
    );
    expect(state.values.messages.map((m) => m.content)).toEqual(["hello", "hello", "edited"]);
    expect(state.metadata).toMatchObject({ source: "update" });
    const history = await json<unknown[]>(await post(`/threads/${threadId}/history`, { limit: 10 }));
    expect(history.length).toBeGreaterThan(3);

    // A later run on the plain system assistant keeps what requests set, and shows its own config.
    expect((await post(`/threads/${threadId}/runs/wait`, { assistant_id: "factory", input: human("again") })).status).toBe(200);
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).config).toEqual({ tags: ["mine"], configurable: { tone: "dry" } });
  });

  it("a thread stored before the request layer was kept apart reads and runs as before", async () => {
    const threadId = crypto.randomUUID();
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    await runInDurableObject(stub, (_instance: ThreadDO, state) => {
      state.storage.sql.exec(`CREATE TABLE thread (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1), thread_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, state_updated_at TEXT NOT NULL, metadata TEXT NOT NULL,
        status TEXT NOT NULL, config TEXT NOT NULL, state_values TEXT, interrupts TEXT NOT NULL, error TEXT,
        ttl_minutes REAL, ttl_strategy TEXT, index_dirty INTEGER NOT NULL DEFAULT 0, temporary INTEGER NOT NULL DEFAULT 0,
        values_oversize INTEGER NOT NULL DEFAULT 0)`);
      const at = new Date().toISOString();
      state.storage.sql.exec(
        "INSERT INTO thread VALUES (1, ?, ?, ?, ?, ?, '{}', 'idle', ?, NULL, '{}', NULL, NULL, NULL, 0, 0, 0)",
        threadId,
        DEFAULT_WORKSPACE_ID,
        at,
        at,
        at,
        JSON.stringify({ configurable: { level: 5 } }),
      );
    });
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).config).toEqual({ configurable: { level: 5 } });
    const ran = await post(`/threads/${threadId}/runs/wait`, { assistant_id: "nested", input: {} });
    expect((await json<{ seen: Record<string, unknown> }>(ran)).seen).toMatchObject({ level: 5 });
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).config).toEqual({ configurable: { level: 5 } });
  });
});
