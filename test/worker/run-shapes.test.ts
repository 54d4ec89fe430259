// What runs put on the wire and in storage: checkpoint payloads in streams, the thread config of
// factory graphs, and run inputs and states larger than a storage row.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadDO } from "../../src/threads/object/thread-do.ts";
import type { CreateRunInput, RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { call, json } from "./helpers.ts";
import { parseSse, type SseEvent } from "./sse.ts";

const post = (path: string, body: unknown, headers?: Record<string, string>) =>
  call(path, { method: "POST", json: body, headers });
const human = (content: string) => ({ messages: [{ role: "user", content }] });

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

async function stream(
  path: string,
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<SseEvent[]> {
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
      {
        assistant_id: "echo",
        input: human("hi"),
        stream_mode: ["debug", "checkpoints", "tasks"],
        config: { configurable: { client_setting: "mine" } },
      },
      headers,
    );
    const records = events.filter((e) => e.event === "debug").map((e) => e.data as DebugRecord);
    const checkpoints = records.filter((r) => r.type === "checkpoint").map((r) => r.payload);
    expect(checkpoints.length).toBeGreaterThanOrEqual(3); // input, after __start__, after respond

    const address = { thread_id: threadId, checkpoint_ns: "", checkpoint_id: expect.any(String), checkpoint_map: null };
    for (const payload of checkpoints) {
      expect(Object.keys(payload).sort()).toEqual([
        "checkpoint",
        "metadata",
        "next",
        "parent_checkpoint",
        "tasks",
        "values",
      ]);
      expect(payload.checkpoint).toEqual(address);
    }
    // Each checkpoint's parent is the one before it; the run's first has none on a new thread.
    expect(checkpoints[0].parent_checkpoint).toBeNull();
    for (let i = 1; i < checkpoints.length; i++) {
      expect(checkpoints[i].parent_checkpoint).toEqual(checkpoints[i - 1].checkpoint as CheckpointAddress);
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
      expect(payload.parent_config).toEqual(
        checkpoints[i].parent_checkpoint && { configurable: checkpoints[i].parent_checkpoint },
      );
    }

    const wire = JSON.stringify(events);
    for (const leak of [
      "time-travel-client",
      "header-value-not-for-events",
      "user-agent",
      "x-customer-secret",
      "langgraph_auth",
      "platform_auth",
      "client_setting",
    ]) {
      expect(wire, leak).not.toContain(leak);
    }
  });

  it("a subgraph task of a debug checkpoint carries the subgraph's checkpoint, not a config", async () => {
    const threadId = await newThread();
    const events = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "nested",
      input: {},
      stream_mode: ["debug"],
    });
    const tasks = events
      .filter((e) => e.event === "debug" && (e.data as DebugRecord).type === "checkpoint")
      .flatMap((e) => (e.data as DebugRecord).payload.tasks as Record<string, unknown>[]);
    const child = tasks.find((task) => task.name === "child")!;
    expect(child.checkpoint).toEqual({
      thread_id: threadId,
      checkpoint_ns: `child:${child.id as string}`,
      checkpoint_id: null,
      checkpoint_map: null,
    });
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
      {
        assistant_id: assistant.assistant_id,
        input: human("hello"),
        config: { tags: ["mine"], configurable: { tone: "dry" } },
      },
      { "User-Agent": "factory-client/1.0", "X-Request-Detail": "header-only" },
    );
    expect(ran.status).toBe(200);

    // The run's config, without anything the server adds for the run (ids, user, headers).
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread.config).toEqual({ tags: ["mine"], configurable: { nodeName: "assistant", tone: "dry" } });
    const [indexed] = await json<ThreadJson[]>(await post("/threads/search", { ids: [threadId] }));
    expect(indexed.config).toEqual(thread.config);

    const updated = await post(`/threads/${threadId}/state`, {
      values: { messages: [{ role: "ai", content: "edited" }] },
      as_node: "assistant",
    });
    expect(updated.status, await updated.clone().text()).toBe(200);
    const state = await json<{
      next: string[];
      values: { messages: { content: string }[] };
      metadata: Record<string, unknown>;
    }>(await call(`/threads/${threadId}/state`));
    expect(state.values.messages.map((m) => m.content)).toEqual(["hello", "hello", "edited"]);
    expect(state.metadata).toMatchObject({ source: "update" });
    const history = await json<unknown[]>(await post(`/threads/${threadId}/history`, { limit: 10 }));
    expect(history.length).toBeGreaterThan(3);

    // A later run on the plain system assistant keeps what requests set, and shows its own config.
    expect(
      (await post(`/threads/${threadId}/runs/wait`, { assistant_id: "factory", input: human("again") })).status,
    ).toBe(200);
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).config).toEqual({
      tags: ["mine"],
      configurable: { tone: "dry" },
    });
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

describe("run inputs and states larger than a storage row", () => {
  // Local SQLite takes values up to 8 MiB (Cloudflare's takes 2 MB): these are above both.
  const big = (mib: number, unit = "é") =>
    unit.repeat(Math.ceil((mib * 1024 * 1024) / new TextEncoder().encode(unit).byteLength));
  const threadStub = (threadId: string) => env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));

  it("a run over 16 MiB gets 413 naming the limit when MAX_BODY_BYTES is raised above it", async () => {
    const { checkRunInputSize, MAX_RUN_INPUT_BYTES } = await import("../../src/threads/runs/service.ts");
    const raised = 64 * 1024 * 1024;
    const over = { assistant_id: "echo", input: { text: "x".repeat(MAX_RUN_INPUT_BYTES) } };
    expect(() => checkRunInputSize(raised, over)).toThrow(
      expect.objectContaining({
        kind: "too_large",
        detail: expect.stringMatching(/^Run input is 1677\d{4} bytes of JSON .*; the limit is 16777216 bytes$/),
      }),
    );
    // Counted in UTF-8: 6 MiB of "é" is 12 MiB of JSON, under the limit.
    expect(() =>
      checkRunInputSize(raised, { assistant_id: "echo", input: { text: "é".repeat(6 * 1024 * 1024) } }),
    ).not.toThrow();
    expect(() =>
      checkRunInputSize(raised, { assistant_id: "echo", input: { text: "é".repeat(9 * 1024 * 1024) } }),
    ).toThrow(expect.objectContaining({ kind: "too_large" }));
    // Under the default body limit the body limit itself is the bound (413 before any parsing).
    expect(() => checkRunInputSize(10 * 1024 * 1024, over)).not.toThrow();
  });

  it("the run table keeps kwargs, results and events of any size, in chunks, and deletes them with the run", async () => {
    const { RunTable } = await import("../../src/threads/runs/run-table.ts");
    const { durableObjectSql } = await import("../../src/db/sql.ts");
    const input = { messages: [{ role: "user", content: big(9) }] };
    await runInDurableObject(threadStub(crypto.randomUUID()), (_instance: ThreadDO, state) => {
      const store = new RunTable(durableObjectSql(state.storage));
      const at = new Date().toISOString();
      const kwargs = {
        input,
        command: null,
        config: {},
        context: {},
        stream_mode: ["values" as const],
        subgraphs: false,
        resumable: true,
        interrupt_before: null,
        interrupt_after: null,
        webhook: null,
        on_completion: null,
        durability: null,
        headers: {},
      };
      const run = {
        run_id: "r1",
        thread_id: "t",
        assistant_id: "a",
        graphId: "echo",
        created_at: at,
        updated_at: at,
        status: "pending" as const,
        metadata: {},
        kwargs,
        multitask_strategy: "enqueue" as const,
        attempt: 0,
        notBefore: 0,
        startedAt: null,
        endedAt: null,
        result: null,
        error: null,
        authUser: null,
        timeoutMs: null,
        deadline: null,
      };
      store.insert(run);
      expect(store.get("r1")!.kwargs.input).toEqual(input);

      const result = JSON.stringify({ messages: [input.messages[0], { type: "ai", content: big(3, "x") }] });
      store.update({ ...run, status: "success", result });
      expect(store.get("r1")!.result).toBe(result);
      store.update({ ...run, status: "success", result: "{}" });
      expect(store.get("r1")!.result).toBe("{}");

      store.appendEvent("r1", 0, "values", result);
      store.appendEvent("r1", 1, "end", "null");
      expect(store.eventsAfter("r1", -1)).toEqual([
        { seq: 0, event: "values", data: result },
        { seq: 1, event: "end", data: "null" },
      ]);
      expect(store.list({ limit: 10, offset: 0 }).map((r) => r.kwargs.input)).toEqual([input]);

      store.delete("r1");
      expect(store.get("r1")).toBeUndefined();
      expect(state.storage.sql.exec("SELECT COUNT(*) AS n FROM run_chunks").one().n).toBe(0);
    });
  });

  it("runs a graph on a 4.5 MiB input: the 9 MiB result comes back whole from wait, join, state and a resumed stream", async () => {
    const echo = await json<{ assistant_id: string }[]>(await post("/assistants/search", { graph_id: "echo" }));
    const threadId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    const content = big(4.5);
    const input: CreateRunInput = {
      runId,
      threadId,
      workspaceId: DEFAULT_WORKSPACE_ID,
      assistantId: echo[0].assistant_id,
      graphId: "echo",
      assistant: { config: {}, context: {}, metadata: {} },
      metadata: {},
      kwargs: {
        input: human(content),
        command: null,
        config: {},
        context: {},
        stream_mode: ["values"],
        subgraphs: false,
        resumable: true,
        interrupt_before: null,
        interrupt_after: null,
        webhook: null,
        on_completion: null,
        durability: null,
        headers: {},
      },
      checkpoint: null,
      multitaskStrategy: "enqueue",
      ifNotExists: "create",
      afterSeconds: 0,
      userId: null,
      authUser: null,
      stateless: false,
      timeoutMs: 3_600_000,
    };
    // Straight to the thread: the test Worker's body limit is 64 KiB.
    const created = await threadStub(threadId).createRunWait(input);
    expect(created.ok).toBe(true);
    const body = await new Response(
      (created as unknown as { value: { body: ReadableStream<Uint8Array> } }).value.body,
    ).text();
    const result = JSON.parse(body) as { messages: { type: string; content: string }[] };
    expect(result.messages.map((m) => [m.type, m.content.length])).toEqual([
      ["human", content.length],
      ["ai", content.length],
    ]);
    expect(result.messages[1].content).toBe(content);

    const run = await json<RunJson>(await call(`/threads/${threadId}/runs/${runId}`));
    expect(run.status).toBe("success");
    expect(await (await call(`/threads/${threadId}/runs/${runId}/join`)).text()).toBe(body.trim());
    const state = await json<{ values: unknown }>(await call(`/threads/${threadId}/state`));
    expect(state.values).toEqual(result);
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread.status).toBe("idle");
    expect(thread.values).toEqual(result);

    const replay = parseSse(
      await (await call(`/threads/${threadId}/runs/${runId}/stream`, { headers: { "Last-Event-ID": "-1" } })).text(),
    );
    expect(replay.map((e) => e.event)).toEqual(["metadata", "values", "values"]);
    expect(replay.at(-1)!.data).toEqual(result);
  }, 60_000);

  it("a storage error outside the graph fails the run at once, naming the error, instead of retrying it as a restart", async () => {
    const threadId = await newThread();
    expect((await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: human("first") })).status).toBe(
      200,
    );
    // A storage fault that recurs on every attempt: the run's successful end cannot be written.
    await runInDurableObject(threadStub(threadId), (_instance: ThreadDO, state) => {
      state.storage.sql.exec(
        "CREATE TRIGGER refuse_success BEFORE UPDATE ON runs WHEN NEW.status = 'success' BEGIN SELECT RAISE(ABORT, 'disk refuses the write'); END",
      );
    });
    const response = await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: human("second") });
    const result = await json<{ __error__: { error: string; message: string } }>(response);
    expect(result.__error__.message).toMatch(/^Run [0-9a-f-]{36} failed and was not retried: .*disk refuses the write/);
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.status).toBe("error");
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread).toMatchObject({ status: "error", error: result.__error__.message });
  });
});
