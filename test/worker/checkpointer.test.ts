// The checkpointer against real Durable Object SQLite inside workerd (the Node suite runs the full
// LangGraph contract over node:sqlite; this checks the DO binding: BLOBs as ArrayBuffers, chunked values,
// transactions). Local workerd does not enforce production's 2 MB row cap, so the chunk sizes are asserted.

import { env, runInDurableObject } from "cloudflare:test";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { type Checkpoint, type CheckpointMetadata, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { durableObjectSql } from "../../src/db/sql.ts";
import { hasCheckpointSchema } from "../../src/threads/object/checkpoint-tables.ts";
import { SqliteCheckpointSaver } from "../../src/threads/object/checkpointer.ts";
import { MAX_LOADABLE_DEPTH, unloadableDepth } from "../../src/threads/object/stored-depth.ts";

const META: CheckpointMetadata = { source: "loop", step: 0, parents: {} };
const MiB = 1024 * 1024;

function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: versions };
}

/** `{a: {a: ... {}}}`, `levels` objects deep, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

function freshThread() {
  return env.THREAD.get(env.THREAD.newUniqueId());
}

async function toArray<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("SqliteCheckpointSaver on Durable Object SQLite", () => {
  it("put, getTuple, list, putWrites and deleteThread round-trip, with a BLOB and a value over 1 MiB", async () => {
    await runInDurableObject(freshThread(), async (_instance, state) => {
      const sql = durableObjectSql(state.storage);
      const saver = new SqliteCheckpointSaver(sql);
      const config = { configurable: { thread_id: "t", checkpoint_ns: "" } };

      // Reads before the first write find nothing and create nothing.
      expect(await saver.getTuple(config)).toBeUndefined();
      expect(await toArray(saver.list(config))).toEqual([]);
      expect(hasCheckpointSchema(sql)).toBe(false);

      const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]);
      const big = "y".repeat(3 * MiB);
      const first = checkpoint({ bytes, big, n: 1 }, { bytes: 1, big: 1, n: 1 });
      const firstConfig = await saver.put(
        config,
        first,
        { ...META, step: -1, source: "input" },
        { bytes: 1, big: 1, n: 1 },
      );
      const second = checkpoint({ bytes, big, n: 2 }, { bytes: 1, big: 1, n: 2 });
      const secondConfig = await saver.put(firstConfig, second, { ...META, step: 0 }, { n: 2 });
      await saver.putWrites(
        secondConfig,
        [
          ["n", 3],
          ["big", big],
          ["bytes", bytes],
        ],
        "task-1",
      );

      expect(hasCheckpointSchema(sql)).toBe(true);
      const chunks = state.storage.sql
        .exec<{ chunk: number; size: number }>(
          "SELECT chunk, length(value) AS size FROM checkpoint_blobs WHERE channel = 'big' ORDER BY chunk",
        )
        .toArray();
      expect(chunks).toEqual([
        { chunk: 0, size: MiB },
        { chunk: 1, size: MiB },
        { chunk: 2, size: MiB },
        { chunk: 3, size: 2 },
      ]);

      const latest = await saver.getTuple(config);
      expect(latest?.config.configurable?.checkpoint_id).toBe(second.id);
      expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(first.id);
      expect(latest?.checkpoint.channel_values.n).toBe(2);
      expect(latest?.checkpoint.channel_values.big).toBe(big);
      expect(latest?.checkpoint.channel_values.bytes).toEqual(bytes);
      expect(latest?.pendingWrites).toEqual([
        ["task-1", "n", 3],
        ["task-1", "big", big],
        ["task-1", "bytes", bytes],
      ]);

      const listed = await toArray(saver.list(config));
      expect(listed.map((t) => t.checkpoint.id)).toEqual([second.id, first.id]);
      expect(listed[1].checkpoint.channel_values).toEqual({ bytes, big, n: 1 });
      expect((await toArray(saver.list(config, { filter: { source: "input" } }))).map((t) => t.checkpoint.id)).toEqual([
        first.id,
      ]);

      expect(saver.deleteAllExceptLatest("t")).toBe(1);
      expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ bytes, big, n: 2 });
      expect(state.storage.sql.exec("SELECT version FROM checkpoint_blobs WHERE channel = 'n'").toArray()).toEqual([
        { version: "2" },
      ]);

      await saver.deleteThread("t");
      expect(await saver.getTuple(config)).toBeUndefined();
      for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]) {
        expect(state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ${table}`).one().n).toBe(0);
      }
    });
  });

  it("runs a graph whose messages outgrow a row, and continues the thread", async () => {
    await runInDurableObject(freshThread(), async (_instance, state) => {
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("reply", (s) => ({ messages: [new AIMessage(`${s.messages.at(-1)?.content}`.toUpperCase())] }))
        .addEdge(START, "reply")
        .addEdge("reply", END)
        .compile({ checkpointer: new SqliteCheckpointSaver(durableObjectSql(state.storage)) });
      const config = { configurable: { thread_id: "graph" } };
      const huge = "z".repeat(3 * MiB);
      await graph.invoke({ messages: [new HumanMessage(huge)] }, config);
      const result = await graph.invoke({ messages: [new HumanMessage("again")] }, config);
      expect(result.messages.map((m: BaseMessage) => (m.content as string).length)).toEqual([3 * MiB, 3 * MiB, 5, 5]);

      // A fresh saver over the same storage sees the whole state.
      const reread = await new SqliteCheckpointSaver(durableObjectSql(state.storage)).getTuple(config);
      const messages = reread?.checkpoint.channel_values.messages as BaseMessage[];
      expect(messages.map((m) => m.content)).toEqual([huge, huge.toUpperCase(), "again", "AGAIN"]);
      expect(AIMessage.isInstance(messages[1])).toBe(true);
    });
  });

  it("measures a message's nesting exactly as LangChain's load() limits it", async () => {
    // The serde every saver uses. What load() refuses, it reads back as stored: not as a message.
    const serde = await runInDurableObject(
      freshThread(),
      (_instance, state) => new SqliteCheckpointSaver(durableObjectSql(state.storage)).serde,
    );
    let boundary: number | undefined;
    for (let levels = 40; levels <= 60; levels++) {
      const [, bytes] = await serde.dumpsTyped([
        new AIMessage({ content: "x", additional_kwargs: { deep: nested(levels) } }),
      ]);
      const [loaded] = (await serde.loadsTyped("json", bytes)) as unknown[];
      const loads = AIMessage.isInstance(loaded);
      expect(unloadableDepth(bytes) === undefined, `${levels} levels`).toBe(loads);
      if (!loads) boundary ??= levels;
    }
    expect(boundary).toBeDefined();
    // Plain state (no LangChain object) of any depth is LangGraph's to read back, and is stored.
    const [, plain] = await serde.dumpsTyped({ deep: nested(500) });
    expect(unloadableDepth(plain)).toBeUndefined();
    // A string full of brackets is not nesting.
    const [, text] = await serde.dumpsTyped([new AIMessage("{[".repeat(1000))]);
    expect(unloadableDepth(text)).toBeUndefined();
    // A client's LangChain-shaped object is stored escaped and read back as data at any depth, and so
    // is a record of a class the serde never revives: neither is refused as too deep.
    const record = (id: string[]) => ({ lc: 1, type: "constructor", id, kwargs: { deep: nested(80) } });
    for (const value of [
      record(["langchain", "llms", "openai", "OpenAI"]),
      record(["langchain_core", "messages", "AIMessage"]),
    ]) {
      const [, escaped] = await serde.dumpsTyped({ client: value });
      expect(unloadableDepth(escaped)).toBeUndefined();
      expect(await serde.loadsTyped("json", escaped)).toEqual({ client: value });
    }
    const notRevived = new TextEncoder().encode(JSON.stringify(record(["langchain", "llms", "openai", "OpenAI"])));
    expect(unloadableDepth(notRevived)).toBeUndefined();
    const revived = new TextEncoder().encode(JSON.stringify(record(["langchain_core", "messages", "AIMessage"])));
    expect(unloadableDepth(revived)).toBeGreaterThan(MAX_LOADABLE_DEPTH);
  });

  it("fails a step that writes a message nested too deep, and keeps the thread readable", async () => {
    await runInDurableObject(freshThread(), async (_instance, state) => {
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("reply", (s) => {
          const text = `${s.messages.at(-1)?.content}`;
          return {
            messages: [
              new AIMessage({
                content: text.toUpperCase(),
                additional_kwargs: text === "deep" ? { deep: nested(60) } : {},
              }),
            ],
          };
        })
        .addEdge(START, "reply")
        .addEdge("reply", END)
        .compile({ checkpointer: new SqliteCheckpointSaver(durableObjectSql(state.storage)) });
      const config = { configurable: { thread_id: "deep" } };
      await graph.invoke({ messages: [new HumanMessage("hello")] }, config);
      await expect(graph.invoke({ messages: [new HumanMessage("deep")] }, config)).rejects.toThrow(
        new RegExp(
          `channel "messages" holds a LangChain object \\(such as a message\\) nested \\d+ levels deep; LangChain reads back at most ${MAX_LOADABLE_DEPTH}`,
        ),
      );
      // Nothing deep was stored: the state, its history and a fresh saver all read back.
      const snapshot = await graph.getState(config);
      expect((snapshot.values.messages as BaseMessage[]).map((m) => m.content)).toEqual(["hello", "HELLO", "deep"]);
      expect((await toArray(graph.getStateHistory(config))).length).toBeGreaterThan(0);
      const reread = await new SqliteCheckpointSaver(durableObjectSql(state.storage)).getTuple(config);
      expect((reread!.checkpoint.channel_values.messages as BaseMessage[]).length).toBe(3);
      // The thread goes on.
      const next = await graph.invoke({ messages: [new HumanMessage("again")] }, config);
      expect(next.messages.map((m: BaseMessage) => m.content)).toEqual(["hello", "HELLO", "deep", "again", "AGAIN"]);
    });
  });
});
