// The checkpointer against real Durable Object SQLite inside workerd (the Node suite runs the full
// LangGraph contract over node:sqlite; this checks the DO binding: BLOBs as ArrayBuffers, chunked values,
// transactions). Local workerd does not enforce production's 2 MB row cap, so the chunk sizes are asserted.
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { type CheckpointMetadata, emptyCheckpoint, type Checkpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hasCheckpointSchema, SqliteCheckpointSaver } from "../../src/thread/checkpointer.ts";
import { durableObjectSql } from "../../src/thread/sql.ts";

const META: CheckpointMetadata = { source: "loop", step: 0, parents: {} };
const MiB = 1024 * 1024;

function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: versions };
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
      const firstConfig = await saver.put(config, first, { ...META, step: -1, source: "input" }, { bytes: 1, big: 1, n: 1 });
      const second = checkpoint({ bytes, big, n: 2 }, { bytes: 1, big: 1, n: 2 });
      const secondConfig = await saver.put(firstConfig, second, { ...META, step: 0 }, { n: 2 });
      await saver.putWrites(secondConfig, [["n", 3], ["big", big], ["bytes", bytes]], "task-1");

      expect(hasCheckpointSchema(sql)).toBe(true);
      const chunks = state.storage.sql
        .exec<{ chunk: number; size: number }>("SELECT chunk, length(value) AS size FROM checkpoint_blobs WHERE channel = 'big' ORDER BY chunk")
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
      expect((await toArray(saver.list(config, { filter: { source: "input" } }))).map((t) => t.checkpoint.id)).toEqual([first.id]);

      expect(saver.deleteAllExceptLatest("t")).toBe(1);
      expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ bytes, big, n: 2 });
      expect(state.storage.sql.exec("SELECT version FROM checkpoint_blobs WHERE channel = 'n'").toArray()).toEqual([{ version: "2" }]);

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
});
