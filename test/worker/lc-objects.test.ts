// LangChain-serialized objects in client data ({"lc": 1, "type": "constructor", ...}) are plain JSON:
// they are stored, read back and streamed exactly as sent, never revived as a LangChain class or a
// secret, and never break a later run or state read of the thread (issue 27). Checkpoints an older
// version stored with such an object inside are read back as stored.

import { env, runInDurableObject } from "cloudflare:test";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Send } from "@langchain/langgraph";
import {
  type CheckpointMetadata,
  emptyCheckpoint,
  MemorySaver,
  type SerializerProtocol,
  uuid6,
} from "@langchain/langgraph-checkpoint";
import { describe, expect, it, onTestFinished } from "vitest";
import { durableObjectSql } from "../../src/db/sql.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { SqliteCheckpointSaver } from "../../src/threads/object/checkpointer.ts";
import { SafeJsonPlusSerializer } from "../../src/threads/object/serde.ts";
import type { ThreadDO } from "../../src/threads/object/thread-do.ts";
import type { RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson, ThreadStateJson } from "../../src/threads/types.ts";
import { call, FAR_SCHEDULE, fireCrons, json } from "./helpers.ts";
import { parseSse } from "./sse.ts";

/** `load()` refuses it ("Invalid namespace"): a checkpoint holding it failed every later read. */
const CONSTRUCTOR = { lc: 1, type: "constructor", id: ["langchain", "llms", "openai", "OpenAI"], kwargs: {} };
/** `load()` would build a HumanMessage from it. */
const MESSAGE = {
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", "HumanMessage"],
  kwargs: { content: "not a message" },
};
const SECRET = { lc: 1, type: "secret", id: ["OPENAI_API_KEY"] };
/** A constructor whose kwargs name a secret: `load()` would look it up. */
const WITH_SECRET = {
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", "AIMessage"],
  kwargs: { content: SECRET },
};

/** Every shape LangChain or LangGraph's serializer gives a meaning to, nested too. */
const PAYLOAD = {
  constructor: CONSTRUCTOR,
  message: MESSAGE,
  secret: SECRET,
  with_secret: WITH_SECRET,
  not_implemented: { lc: 1, type: "not_implemented", id: ["Thing"] },
  escaped: { __lc_escaped__: CONSTRUCTOR },
  undefined_marker: { lc: 2, type: "undefined" },
  set_record: { lc: 2, type: "constructor", id: ["Set"], method: null, args: [[1, 2]], kwargs: {} },
  deep: [{ a: [[{ b: CONSTRUCTOR, c: [SECRET, { d: { e: MESSAGE } }] }]] }],
  list: [CONSTRUCTOR, SECRET, MESSAGE],
};

/** A state as these tests read it: the steps graph's values are an object. */
type StateJson = Omit<ThreadStateJson, "values"> & { values: Record<string, unknown> };

const post = (path: string, body: unknown, key?: string) => call(path, { method: "POST", json: body, key });
const patch = (path: string, body: unknown, key?: string) => call(path, { method: "PATCH", json: body, key });

async function ok<T>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(200);
  return json<T>(response);
}

async function newThread(body: Record<string, unknown> = {}, key?: string): Promise<string> {
  return (await ok<ThreadJson>(await post("/threads", body, key))).thread_id;
}

async function runWait(threadId: string, body: Record<string, unknown>, key?: string) {
  return ok<Record<string, unknown>>(
    await post(`/threads/${threadId}/runs/wait`, { assistant_id: "steps", ...body }, key),
  );
}

async function state(threadId: string, key?: string): Promise<StateJson> {
  return ok<StateJson>(await call(`/threads/${threadId}/state`, { key }));
}

async function history(threadId: string, key?: string): Promise<StateJson[]> {
  const viaGet = await ok<StateJson[]>(await call(`/threads/${threadId}/history?limit=100`, { key }));
  const viaPost = await ok<StateJson[]>(await post(`/threads/${threadId}/history`, { limit: 100 }, key));
  expect(viaPost).toEqual(viaGet);
  return viaGet;
}

/** The thread still runs: a plain run on it succeeds and its state and history read. */
async function stillRuns(threadId: string, key?: string): Promise<StateJson> {
  const values = await runWait(threadId, { input: { items: ["again"] } }, key);
  expect(values.items).toContain("again");
  const runs = await ok<RunJson[]>(await call(`/threads/${threadId}/runs`, { key }));
  expect(runs.map((run) => run.status).every((status) => status === "success")).toBe(true);
  await history(threadId, key);
  return state(threadId, key);
}

describe("LangChain-shaped objects in client data stay plain data", () => {
  it("in a run's input: the output, the stream, state and history show it as sent; the thread keeps running", async () => {
    const threadId = await newThread();
    const output = await runWait(threadId, { input: { answer: PAYLOAD } });
    expect(output.answer).toEqual(PAYLOAD);
    expect((await state(threadId)).values.answer).toEqual(PAYLOAD);
    const states = await history(threadId);
    expect(states.length).toBeGreaterThan(1);
    expect(states[0].values.answer).toEqual(PAYLOAD);
    expect((await stillRuns(threadId)).values.answer).toEqual(PAYLOAD);
    // The thread record (search, GET /threads/{id}) holds the same plain value.
    expect((await ok<ThreadJson>(await call(`/threads/${threadId}`))).values).toMatchObject({ answer: PAYLOAD });

    // A streamed run that starts from the stored state sends it unchanged.
    const stream = await post(`/threads/${threadId}/runs/stream`, {
      assistant_id: "steps",
      input: { items: ["streamed"] },
      stream_mode: ["values"],
    });
    expect(stream.status).toBe(200);
    const values = parseSse(await stream.text()).filter((event) => event.event === "values");
    expect(values.length).toBeGreaterThan(1);
    for (const event of values) expect((event.data as { answer: unknown }).answer).toEqual(PAYLOAD);
  });

  it("is stored escaped, as LangChain escapes untrusted dicts, and nothing is built from it", async () => {
    const threadId = await newThread();
    await runWait(threadId, { input: { answer: { secret: SECRET, constructor: CONSTRUCTOR } } });
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    const stored = await runInDurableObject(stub, (_instance: ThreadDO, durable) =>
      durable.storage.sql
        .exec<{ value: ArrayBuffer }>("SELECT value FROM checkpoint_blobs WHERE channel = 'answer'")
        .toArray()
        .map((row) => JSON.parse(new TextDecoder().decode(row.value))),
    );
    expect(stored).toEqual([{ secret: { __lc_escaped__: SECRET }, constructor: { __lc_escaped__: CONSTRUCTOR } }]);
  });

  it("in command.resume, and in an interrupt's value", async () => {
    const threadId = await newThread();
    const paused = await runWait(threadId, { input: { ask_human: true, items: [PAYLOAD] } });
    const interrupts = paused.__interrupt__ as { value: { items: unknown[] } }[];
    expect(interrupts[0].value.items[0]).toEqual(PAYLOAD);
    const waiting = await state(threadId);
    expect(waiting.next).toEqual(["review"]);
    expect((waiting.interrupts[0] as { value: { items: unknown[] } }).value.items[0]).toEqual(PAYLOAD);
    expect((await ok<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("interrupted");
    await history(threadId);

    const resumed = await runWait(threadId, { command: { resume: PAYLOAD } });
    expect(resumed.answer).toEqual(PAYLOAD);
    expect(resumed.items).toEqual([PAYLOAD, "step1", "step2", "step3", "review"]);
    const after = await stillRuns(threadId);
    expect(after.values.answer).toEqual(PAYLOAD);
    expect((after.values.items as unknown[])[0]).toEqual(PAYLOAD);
  });

  it("in command.update", async () => {
    const threadId = await newThread();
    await runWait(threadId, { input: {} });
    const updated = await runWait(threadId, { command: { update: { answer: PAYLOAD }, goto: "review" } });
    expect(updated.answer).toEqual(PAYLOAD);
    expect((await state(threadId)).values.answer).toEqual(PAYLOAD);
    await history(threadId);
    expect((await stillRuns(threadId)).values.answer).toEqual(PAYLOAD);
  });

  it("in a run's metadata, which joins its checkpoints' metadata", async () => {
    const threadId = await newThread();
    await runWait(threadId, { input: {}, metadata: { payload: PAYLOAD } });
    const [run] = await ok<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.metadata.payload).toEqual(PAYLOAD);
    const states = await history(threadId);
    expect(states.every((s) => JSON.stringify(s.metadata.payload) === JSON.stringify(PAYLOAD))).toBe(true);
    expect((await state(threadId)).metadata.payload).toEqual(PAYLOAD);
    // A history filter on it still matches (metadata is stored as the JSON it was).
    const filtered = await ok<StateJson[]>(
      await post(`/threads/${threadId}/history`, { metadata: { payload: { constructor: CONSTRUCTOR } } }),
    );
    expect(filtered).toHaveLength(states.length);
    await stillRuns(threadId);
  });

  it("in a thread's metadata, on create and on PATCH", async () => {
    const created = await newThread({ metadata: { payload: PAYLOAD, lc: 1 } });
    expect((await ok<ThreadJson>(await call(`/threads/${created}`))).metadata).toMatchObject({
      payload: PAYLOAD,
      lc: 1,
    });
    await runWait(created, { input: {} });
    expect((await state(created)).metadata).toMatchObject({ payload: PAYLOAD, lc: 1 });
    expect((await history(created))[0].metadata).toMatchObject({ payload: PAYLOAD, lc: 1 });
    await stillRuns(created);

    const patched = await newThread();
    await runWait(patched, { input: {} });
    await ok(await patch(`/threads/${patched}`, { metadata: { payload: PAYLOAD } }));
    expect((await ok<ThreadJson>(await call(`/threads/${patched}`))).metadata).toMatchObject({ payload: PAYLOAD });
    const after = await stillRuns(patched);
    expect(after.metadata.payload).toEqual(PAYLOAD);
  });

  it("in supersteps of a new thread", async () => {
    const threadId = await newThread({
      graph_id: "steps",
      supersteps: [{ updates: [{ values: { answer: PAYLOAD, items: [PAYLOAD] }, as_node: "step1" }] }],
    });
    const created = await state(threadId);
    expect(created.values).toMatchObject({ answer: PAYLOAD, items: [PAYLOAD] });
    await history(threadId);
    const after = await stillRuns(threadId);
    expect(after.values.answer).toEqual(PAYLOAD);
    expect((after.values.items as unknown[])[0]).toEqual(PAYLOAD);
  });

  it("in a state update's values", async () => {
    const threadId = await newThread();
    await runWait(threadId, { input: {} });
    await ok(await post(`/threads/${threadId}/state`, { values: { answer: PAYLOAD }, as_node: "review" }));
    expect((await state(threadId)).values.answer).toEqual(PAYLOAD);
    expect((await history(threadId))[0].values.answer).toEqual(PAYLOAD);
    expect((await stillRuns(threadId)).values.answer).toEqual(PAYLOAD);
  });

  it("in an assistant's metadata, config and context, on create and on PATCH", async () => {
    const assistant = await ok<{ assistant_id: string }>(
      await post("/assistants", {
        graph_id: "steps",
        metadata: { payload: PAYLOAD },
        config: { configurable: { payload: PAYLOAD } },
        context: { payload: PAYLOAD },
      }),
    );
    const runs = async () => {
      const threadId = await newThread();
      const output = await runWait(threadId, { assistant_id: assistant.assistant_id, input: { items: ["x"] } });
      expect(output.items).toEqual(["x", "step1", "step2", "step3", "review"]);
      await history(threadId);
      await stillRuns(threadId);
      return state(threadId);
    };
    await runs();
    await ok(await patch(`/assistants/${assistant.assistant_id}`, { metadata: { again: PAYLOAD } }));
    expect(
      (await ok<{ metadata: Record<string, unknown> }>(await call(`/assistants/${assistant.assistant_id}`))).metadata,
    ).toMatchObject({ payload: PAYLOAD, again: PAYLOAD });
    await runs();
  });

  it("in a system assistant's metadata: a member's PATCH does not break new threads of the graph", async () => {
    // In a workspace of its own: the patched system assistant is that workspace's.
    const workspace = await ok<{ id: string }>(await post("/api/v1/workspaces", { display_name: "LC objects" }));
    const { key } = await ok<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
    await ok(await patch("/assistants/steps", { metadata: { payload: PAYLOAD } }, key));
    const threadId = await newThread({}, key);
    await runWait(threadId, { input: {} }, key);
    expect((await history(threadId, key))[0].metadata.payload).toEqual(PAYLOAD);
    expect((await stillRuns(threadId, key)).metadata.payload).toEqual(PAYLOAD);
  });

  it("in a cron's payload", async () => {
    const threadId = await newThread();
    const cron = await ok<{ cron_id: string; next_run_date: string; payload: Record<string, unknown> }>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "steps",
        schedule: FAR_SCHEDULE,
        input: { answer: PAYLOAD },
        metadata: { payload: PAYLOAD },
      }),
    );
    expect(cron.payload).toMatchObject({ input: { answer: PAYLOAD } });
    await fireCrons(new Date(cron.next_run_date));
    const [run] = await ok<RunJson[]>(await call(`/threads/${threadId}/runs`));
    await ok(await call(`/threads/${threadId}/runs/${run.run_id}/join`));
    expect((await ok<RunJson>(await call(`/threads/${threadId}/runs/${run.run_id}`))).status).toBe("success");
    expect((await state(threadId)).values.answer).toEqual(PAYLOAD);
    expect((await stillRuns(threadId)).values.answer).toEqual(PAYLOAD);
  });

  it("inside a message's fields: content blocks and additional_kwargs", async () => {
    const threadId = await newThread();
    const sent = {
      role: "user",
      content: [{ type: "text", text: "hi", extra: CONSTRUCTOR }],
      additional_kwargs: { payload: PAYLOAD },
    };
    const output = await ok<{ messages: Record<string, unknown>[] }>(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: { messages: [sent] } }),
    );
    const expected = expect.objectContaining({
      type: "human",
      content: sent.content,
      additional_kwargs: { payload: PAYLOAD },
    });
    expect(output.messages[0]).toEqual(expected);
    expect((await state(threadId)).values.messages).toEqual([expected, expect.objectContaining({ type: "ai" })]);
    await history(threadId);
    const again = await ok<{ messages: Record<string, unknown>[] }>(
      await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: "echo",
        input: { messages: [{ role: "user", content: "again" }] },
      }),
    );
    expect(again.messages).toHaveLength(4);
    expect(again.messages[0]).toEqual(expected);
  });

  it("as a message in a messages channel: the run fails on it as on any unknown message, the thread goes on", async () => {
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: "echo",
      input: { messages: [CONSTRUCTOR] },
    });
    // LangChain's message coercion refuses it (it names no message class): the run's error says so.
    const failed = await ok<{ __error__: { message: string } }>(response);
    expect(failed.__error__.message).toContain("Unable to coerce message");
    const [run] = await ok<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.status).toBe("error");
    const again = await ok<{ messages: { content: string }[] }>(
      await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: "echo",
        input: { messages: [{ role: "user", content: "hi" }] },
      }),
    );
    expect(again.messages.map((m) => m.content)).toEqual(["hi", "hi"]);
    expect((await state(threadId)).values.messages).toHaveLength(2);
    await history(threadId);
  });

  it("in a store item, which a graph reads through its store", async () => {
    const userId = crypto.randomUUID();
    const namespace = ["memories", userId];
    const put = await call("/store/items", { method: "PUT", json: { namespace, key: "lc", value: PAYLOAD } });
    expect(put.status).toBe(204);
    const item = await ok<{ value: unknown }>(
      await call(`/store/items?namespace=${encodeURIComponent(namespace.join("."))}&key=lc`),
    );
    expect(item.value).toEqual(PAYLOAD);
    // The memory graph searches the namespace: the item is one of the two it counts.
    const threadId = await newThread();
    const output = await ok<{ messages: { content: string }[] }>(
      await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: "memory",
        input: { messages: [{ role: "user", content: "hi" }] },
        config: { configurable: { user_id: userId } },
      }),
    );
    expect(output.messages.at(-1)?.content).toBe("I have 2 memories for you.");
    const found = await ok<{ items: { key: string; value: unknown }[] }>(
      await post("/store/items/search", { namespace_prefix: namespace }),
    );
    expect(found.items.find((i) => i.key === "lc")?.value).toEqual(PAYLOAD);
  });
});

describe("checkpoints stored before the escaping", () => {
  it("read back as stored: state, history and the next run answer, and no secret is resolved", async () => {
    // Nothing reads the state before the rows are rewritten, so no rendering of them is cached.
    const threadId = await newThread();
    await runWait(threadId, { input: { answer: "placeholder" } });
    // What the previous serializer wrote for the same values: the objects unescaped, in the value
    // of a channel, in a pending write, and in the checkpoint's metadata.
    const runnable = {
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "runnables", "RunnablePassthrough"],
      kwargs: {},
    };
    const legacy = { constructor: CONSTRUCTOR, with_secret: WITH_SECRET, runnable, deep: [{ a: CONSTRUCTOR }] };
    // A message the graph wrote is still a message.
    const message = new AIMessage({ content: "kept", id: "m1" });
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    await runInDurableObject(stub, (_instance: ThreadDO, durable) => {
      const sql = durableObjectSql(durable.storage);
      const bytes = new TextEncoder().encode(JSON.stringify({ ...legacy, message }));
      sql.run("UPDATE checkpoint_blobs SET value = ? WHERE channel = 'answer'", bytes);
      sql.run("UPDATE checkpoints SET metadata = json_set(metadata, '$.legacy', json(?))", JSON.stringify(legacy));
    });
    // Were a secret ever looked up in the environment, it would be found there.
    process.env.OPENAI_API_KEY = "sk-must-not-leak";
    onTestFinished(() => {
      delete process.env.OPENAI_API_KEY;
    });
    const response = await call(`/threads/${threadId}/state`);
    expect(await response.clone().text()).not.toContain("sk-must-not-leak");
    const read = await ok<StateJson>(response);
    expect(read.values.answer).toEqual({
      ...legacy,
      message: expect.objectContaining({ type: "ai", content: "kept", id: "m1", tool_calls: [] }),
    });
    expect(read.metadata.legacy).toEqual(legacy);
    const states = await history(threadId);
    const answers = states.flatMap((s) => (s.values.answer === undefined ? [] : [s.values.answer]));
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer).toEqual(read.values.answer);
    const after = await stillRuns(threadId);
    expect(after.values.answer).toEqual(read.values.answer);
  });

  it("in every part of a checkpoint the saver reads: channel values, pending writes, metadata", async () => {
    // The previous serializer's format for plain JSON: the JSON itself, nothing escaped.
    const plainJson: SerializerProtocol = {
      dumpsTyped: async (value) => ["json", new TextEncoder().encode(JSON.stringify(value))],
      loadsTyped: async (_type, data) => JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data)),
    };
    const legacy = { constructor: CONSTRUCTOR, with_secret: WITH_SECRET, list: [CONSTRUCTOR] };
    const tuples = await runInDurableObject(env.THREAD.get(env.THREAD.newUniqueId()), async (_instance, durable) => {
      const sql = durableObjectSql(durable.storage);
      const config = { configurable: { thread_id: "legacy", checkpoint_ns: "" } };
      const checkpoint = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { answer: legacy } };
      // Extra metadata keys are what a run's metadata adds (see runMetadata in checkpointer.ts).
      const metadata: CheckpointMetadata = Object.assign(
        { source: "input" as const, step: -1, parents: {} },
        { legacy },
      );
      const written = await new SqliteCheckpointSaver(sql, plainJson).put(
        config,
        { ...checkpoint, channel_versions: { answer: 1 } },
        metadata,
        { answer: 1 },
      );
      await new SqliteCheckpointSaver(sql, plainJson).putWrites(
        written,
        [["__interrupt__", [{ value: legacy, id: "i1" }]]],
        "task",
      );
      const saver = new SqliteCheckpointSaver(sql);
      const tuple = await saver.getTuple(config);
      const listed = [];
      for await (const item of saver.list(config)) listed.push(item);
      return [tuple, ...listed];
    });
    expect(tuples).toHaveLength(2);
    for (const tuple of tuples) {
      expect(tuple?.checkpoint.channel_values).toEqual({ answer: legacy });
      expect(tuple?.pendingWrites).toEqual([["task", "__interrupt__", [{ value: legacy, id: "i1" }]]]);
      expect(tuple?.metadata).toMatchObject({ legacy });
    }
  });
});

describe("the checkpoint serializer", () => {
  // LangGraph's own JsonPlusSerializer (not exported on its own), which the platform used before.
  const jsonPlus = new MemorySaver().serde;
  const safe = new SafeJsonPlusSerializer();
  const text = (bytes: Uint8Array | string) => (typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes));

  /** What graphs put in state: messages, LangGraph's Sends, and values JSON cannot hold. */
  function graphValues(): Record<string, unknown> {
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    return {
      messages: [
        new HumanMessage({ content: [{ type: "text", text: "hi" }], id: "h1" }),
        new AIMessage({
          content: "",
          id: "a1",
          tool_calls: [{ id: "c1", name: "search", args: { q: "x" } }],
        }),
        new ToolMessage({ content: "done", tool_call_id: "c1", name: "search" }),
      ],
      tasks: [new Send("node", { items: [1, 2] })],
      set: new Set([1, "a"]),
      map: new Map<string, unknown>([["k", { v: 1 }]]),
      date: new Date(0),
      pattern: /a+b/gi,
      error: new Error("boom"),
      bytes: new Uint8Array([0, 1, 255]),
      missing: undefined,
      list: [undefined, null, 1, "two", { three: [3] }],
      circular,
    };
  }

  it("writes graph values byte for byte as JsonPlusSerializer did, and reads them back as it does", async () => {
    const values = graphValues();
    const [type, bytes] = await safe.dumpsTyped(values);
    const [legacyType, legacyBytes] = await jsonPlus.dumpsTyped(values);
    expect(type).toBe(legacyType);
    expect(text(bytes)).toBe(text(legacyBytes));
    const read = (await safe.loadsTyped(type, bytes)) as Record<string, unknown>;
    expect(read).toEqual(await jsonPlus.loadsTyped(legacyType, legacyBytes));
    const [human, ai, tool] = read.messages as unknown[];
    expect(HumanMessage.isInstance(human)).toBe(true);
    expect(AIMessage.isInstance(ai)).toBe(true);
    expect(ToolMessage.isInstance(tool)).toBe(true);
    expect(read.set).toEqual(new Set([1, "a"]));
    expect(read.bytes).toEqual(new Uint8Array([0, 1, 255]));
    // A Uint8Array on its own is stored as bytes.
    expect(await safe.dumpsTyped(new Uint8Array([7]))).toEqual(["bytes", new Uint8Array([7])]);
  });

  it("reads back a message whose own fields hold LangChain-shaped objects (LangChain escapes them)", async () => {
    const message = new AIMessage({
      content: "",
      tool_calls: [{ id: "c1", name: "search", args: { nested: SECRET } }],
      additional_kwargs: { raw: CONSTRUCTOR },
    });
    const [type, bytes] = await safe.dumpsTyped({ messages: [message] });
    // JsonPlusSerializer revived the inside of LangChain's escape before unwrapping it, and failed.
    await expect(jsonPlus.loadsTyped(type, bytes)).rejects.toThrow("Invalid namespace");
    const [read] = ((await safe.loadsTyped(type, bytes)) as { messages: AIMessage[] }).messages;
    expect(AIMessage.isInstance(read)).toBe(true);
    expect(read.additional_kwargs.raw).toEqual(CONSTRUCTOR);
    expect(read.tool_calls?.[0].args.nested).toEqual(SECRET);
  });

  it("writes a client's LangChain-shaped objects escaped, wherever they are, and reads them back as they were", async () => {
    const values = {
      payload: PAYLOAD,
      in_set: new Set([CONSTRUCTOR]),
      in_map: new Map([["k", SECRET]]),
      in_send: new Send("node", { answer: MESSAGE }),
      lc: "a state key named lc",
    };
    const [type, bytes] = await safe.dumpsTyped(values);
    // The state itself has an lc key: it is escaped too.
    const stored = JSON.parse(text(bytes)).__lc_escaped__;
    expect(stored.payload.constructor).toEqual({ __lc_escaped__: CONSTRUCTOR });
    expect(stored.payload.escaped).toEqual({ __lc_escaped__: { __lc_escaped__: { __lc_escaped__: CONSTRUCTOR } } });
    const read = (await safe.loadsTyped(type, bytes)) as Record<string, unknown>;
    expect(read.payload).toEqual(PAYLOAD);
    expect(read.in_set).toEqual(new Set([CONSTRUCTOR]));
    expect(read.in_map).toEqual(new Map([["k", SECRET]]));
    expect(read.in_send).toEqual({ node: "node", args: { answer: MESSAGE } });
    expect(read.lc).toBe("a state key named lc");
    // The whole value is one such object too: escaped at the top.
    const [, top] = await safe.dumpsTyped({ lc: 1, type: "secret", id: ["OPENAI_API_KEY"] });
    expect(JSON.parse(text(top))).toEqual({ __lc_escaped__: SECRET });
    expect(await safe.loadsTyped("json", top)).toEqual(SECRET);
  });
});
