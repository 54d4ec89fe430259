// The DO SQLite checkpointer, run in Node over node:sqlite: LangGraph's checkpointer contract suite,
// then what the suite does not cover (chunking, blob dedup, pruning, filters, real graphs).
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Command, END, interrupt, isInterrupted, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import {
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  emptyCheckpoint,
  INTERRUPT,
  uuid6,
} from "@langchain/langgraph-checkpoint";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import * as vitest from "vitest";
import { describe, expect, it } from "vitest";
import type { SqlStore, SqlValue } from "../../src/db/sql.ts";
import { hasCheckpointSchema } from "../../src/threads/object/checkpoint-tables.ts";
import { SqliteCheckpointSaver } from "../../src/threads/object/checkpointer.ts";
import { nodeSql } from "./node-sqlite.ts";

// The contract suite calls describe/it/expect as globals (its own CLI turns vitest globals on).
const { afterAll, afterEach, beforeAll, beforeEach } = vitest;
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

/** node:sqlite with DO SQLite's limits: 100 bound parameters per statement, 2 MB per value. */
function strictSql(): ReturnType<typeof nodeSql> {
  const sql = nodeSql();
  const check = (query: string, params: SqlValue[]) => {
    if (params.length > 100) throw new Error(`too many SQL variables (${params.length}): ${query.slice(0, 80)}`);
    const largest = Math.max(
      0,
      ...params.map((p) => (p instanceof Uint8Array || p instanceof ArrayBuffer ? p.byteLength : String(p).length)),
    );
    if (largest > 2_000_000) throw new Error(`string or blob too big (${largest} bytes): ${query.slice(0, 80)}`);
  };
  return {
    ...sql,
    all: (query, ...params) => {
      check(query, params);
      return sql.all(query, ...params);
    },
    run: (query, ...params) => {
      check(query, params);
      return sql.run(query, ...params);
    },
  };
}

validate({
  checkpointerName: "SqliteCheckpointSaver (node:sqlite)",
  createCheckpointer: () => new SqliteCheckpointSaver(strictSql()),
});

// ---- helpers ----

function fresh(sql: SqlStore = strictSql()) {
  return { sql, saver: new SqliteCheckpointSaver(sql) };
}

const META: CheckpointMetadata = { source: "loop", step: 0, parents: {} };

function makeCheckpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: versions };
}

/** Puts checkpoints in order on one thread and namespace, each the parent of the next. */
async function putChain(
  saver: SqliteCheckpointSaver,
  threadId: string,
  steps: {
    values: Record<string, unknown>;
    versions: Record<string, number>;
    newVersions: Record<string, number>;
    metadata?: CheckpointMetadata;
  }[],
  checkpointNs = "",
) {
  let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs } };
  const ids: string[] = [];
  for (const step of steps) {
    const checkpoint = makeCheckpoint(step.values, step.versions);
    config = await saver.put(config, checkpoint, step.metadata ?? META, step.newVersions);
    ids.push(checkpoint.id);
  }
  return ids;
}

async function toArray<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

function count(sql: SqlStore, query: string, ...params: SqlValue[]): number {
  return Number(sql.all<{ n: number }>(query, ...params)[0].n);
}

function tables(sql: SqlStore): string[] {
  return sql
    .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .map((r) => r.name);
}

// ---- storage behaviour ----

describe("SqliteCheckpointSaver storage", () => {
  it("reads on an empty database return nothing and create no tables", async () => {
    const { sql, saver } = fresh();
    const config = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    expect(await saver.getTuple(config)).toBeUndefined();
    expect(await saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: uuid6(-1) } })).toBeUndefined();
    expect(await toArray(saver.list(config))).toEqual([]);
    expect(await toArray(saver.list({}, { filter: { source: "loop" } }))).toEqual([]);
    await saver.deleteThread("t");
    expect(saver.deleteAllExceptLatest("t")).toBe(0);
    expect(saver.checkpointCount("t")).toBe(0);
    expect(tables(sql)).toEqual([]);
    expect(hasCheckpointSchema(sql)).toBe(false);

    await saver.put(config, makeCheckpoint({}, {}), META, {});
    expect(hasCheckpointSchema(sql)).toBe(true);
    expect(tables(sql)).toEqual(["checkpoint_blobs", "checkpoint_writes", "checkpoints"]);
    expect(saver.checkpointCount("t")).toBe(1);
  });

  it("creates the schema on a first putWrites too, and an empty putWrites writes nothing", async () => {
    const { sql, saver } = fresh();
    const config = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: uuid6(-1) } };
    await saver.putWrites(config, [], "task");
    expect(tables(sql)).toEqual([]);
    await saver.putWrites(config, [["a", 1]], "task");
    expect(hasCheckpointSchema(sql)).toBe(true);
  });

  it("splits values over 1 MiB into chunks and reassembles them, for channel values and writes", async () => {
    const { sql, saver } = fresh();
    const big = "x".repeat(3 * 1024 * 1024) + "end";
    const [id] = await putChain(saver, "t", [
      { values: { big, small: 1 }, versions: { big: 1, small: 1 }, newVersions: { big: 1, small: 1 } },
    ]);
    const config = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } };
    await saver.putWrites(
      config,
      [
        ["big", big],
        ["small", 2],
      ],
      "task",
    );

    const blobChunks = sql.all<{ chunk: number; size: number }>(
      "SELECT chunk, length(value) AS size FROM checkpoint_blobs WHERE channel = 'big' ORDER BY chunk",
    );
    expect(blobChunks.map((c) => c.chunk)).toEqual([0, 1, 2, 3]);
    expect(Math.max(...blobChunks.map((c) => c.size))).toBe(1024 * 1024);
    expect(count(sql, "SELECT COUNT(*) AS n FROM checkpoint_writes WHERE channel = 'big'")).toBe(4);
    expect(count(sql, "SELECT COUNT(*) AS n FROM checkpoint_writes WHERE channel = 'small'")).toBe(1);

    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values).toEqual({ big, small: 1 });
    expect(tuple?.pendingWrites).toEqual([
      ["task", "big", big],
      ["task", "small", 2],
    ]);
  });

  it("stores a channel value once while its version is unchanged", async () => {
    const { sql, saver } = fresh();
    const ids = await putChain(saver, "t", [
      { values: { a: "a1", b: "b1" }, versions: { a: 1, b: 1 }, newVersions: { a: 1, b: 1 } },
      { values: { a: "a2", b: "b1" }, versions: { a: 2, b: 1 }, newVersions: { a: 2 } },
      { values: { a: "a3", b: "b1" }, versions: { a: 3, b: 1 }, newVersions: { a: 3 } },
    ]);
    expect(count(sql, "SELECT COUNT(*) AS n FROM checkpoint_blobs WHERE channel = 'b'")).toBe(1);
    expect(count(sql, "SELECT COUNT(*) AS n FROM checkpoint_blobs WHERE channel = 'a'")).toBe(3);
    const values = await Promise.all(
      ids.map(
        async (id) =>
          (await saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: id } }))?.checkpoint.channel_values,
      ),
    );
    expect(values).toEqual([
      { a: "a1", b: "b1" },
      { a: "a2", b: "b1" },
      { a: "a3", b: "b1" },
    ]);
  });

  it("drops a channel whose new version has no value (an emptied channel)", async () => {
    const { saver } = fresh();
    const [, second] = await putChain(saver, "t", [
      { values: { a: 1, b: 2 }, versions: { a: 1, b: 1 }, newVersions: { a: 1, b: 1 } },
      { values: { a: 1 }, versions: { a: 1, b: 2 }, newVersions: { b: 2 } },
    ]);
    const tuple = await saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: second } });
    expect(tuple?.checkpoint.channel_values).toEqual({ a: 1 });
    expect(tuple?.checkpoint.channel_versions).toEqual({ a: 1, b: 2 });
  });

  it("round-trips LangChain messages (with tool calls) and binary values as such", async () => {
    const { saver } = fresh();
    const messages: BaseMessage[] = [
      new HumanMessage({ content: "weather in Paris?", id: "h1" }),
      new AIMessage({
        content: "",
        id: "a1",
        tool_calls: [{ id: "call_1", name: "weather", args: { city: "Paris" }, type: "tool_call" }],
      }),
      new ToolMessage({ content: "sunny", tool_call_id: "call_1", id: "t1" }),
    ];
    const bytes = new Uint8Array([0, 1, 2, 255]);
    const [id] = await putChain(saver, "t", [
      { values: { messages, bytes }, versions: { messages: 1, bytes: 1 }, newVersions: { messages: 1, bytes: 1 } },
    ]);
    const config = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } };
    await saver.putWrites(config, [["messages", [new AIMessage({ content: "It is sunny.", id: "a2" })]]], "agent");

    const tuple = await saver.getTuple(config);
    const restored = tuple?.checkpoint.channel_values.messages as BaseMessage[];
    expect(HumanMessage.isInstance(restored[0])).toBe(true);
    expect(restored[0].content).toBe("weather in Paris?");
    expect(AIMessage.isInstance(restored[1])).toBe(true);
    expect((restored[1] as AIMessage).tool_calls).toEqual([
      { id: "call_1", name: "weather", args: { city: "Paris" }, type: "tool_call" },
    ]);
    expect(ToolMessage.isInstance(restored[2])).toBe(true);
    expect((restored[2] as ToolMessage).tool_call_id).toBe("call_1");
    expect(tuple?.checkpoint.channel_values.bytes).toEqual(bytes);
    const [[taskId, channel, written]] = tuple!.pendingWrites!;
    expect([taskId, channel]).toEqual(["agent", "messages"]);
    expect(AIMessage.isInstance((written as BaseMessage[])[0])).toBe(true);
  });

  it("keeps the first regular write of a task but replaces special-channel writes", async () => {
    const { saver } = fresh();
    const [id] = await putChain(saver, "t", [{ values: {}, versions: {}, newVersions: {} }]);
    const config = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } };
    await saver.putWrites(
      config,
      [
        ["a", "first"],
        ["constructor", "own channel"],
      ],
      "task",
    );
    await saver.putWrites(config, [["a", "second"]], "task");
    await saver.putWrites(config, [[INTERRUPT, "first interrupt"]], "task");
    await saver.putWrites(config, [[INTERRUPT, "second interrupt"]], "task");
    await saver.putWrites(config, [["a", "other task"]], "other");
    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([
      ["other", "a", "other task"],
      ["task", INTERRUPT, "second interrupt"],
      ["task", "a", "first"],
      ["task", "constructor", "own channel"],
    ]);
  });

  it("stays within 100 bound parameters with many writes, channels and checkpoints", async () => {
    const { saver } = fresh();
    const channels = Array.from({ length: 120 }, (_, i) => `c${i}`);
    const values = Object.fromEntries(channels.map((c, i) => [c, i]));
    const versions = Object.fromEntries(channels.map((c) => [c, 1]));
    const [id] = await putChain(saver, "t", [{ values, versions, newVersions: versions }]);
    const config = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } };
    await saver.putWrites(
      config,
      channels.map((c, i) => [c, i * 2]),
      "task",
    );
    await saver.putWrites(
      config,
      channels.map((c) => [c, -1]),
      "task",
    ); // all ignored: same task and idx

    const tuple = await saver.getTuple(config);
    expect(tuple?.checkpoint.channel_values).toEqual(values);
    expect(tuple?.pendingWrites).toHaveLength(120);
    expect(tuple?.pendingWrites?.find(([, channel]) => channel === "c7")).toEqual(["task", "c7", 14]);

    // 150 checkpoints, each carrying the 120 channels forward: list pages and blob lookups are batched.
    let parent = id;
    for (let i = 0; i < 150; i += 1) {
      const checkpoint = makeCheckpoint({ ...values, c0: i + 1000 }, { ...versions, c0: i + 2 });
      await saver.put({ configurable: { thread_id: "t", checkpoint_id: parent } }, checkpoint, META, { c0: i + 2 });
      parent = checkpoint.id;
    }
    // Over one list() page: the keyset cursor neither skips nor repeats a checkpoint.
    const listed = await toArray(saver.list({ configurable: { thread_id: "t" } }));
    expect(listed).toHaveLength(151);
    const listedIds = listed.map((t) => t.checkpoint.id);
    expect(listedIds).toEqual([...new Set(listedIds)].sort().reverse());
    expect(
      (await toArray(saver.list({ configurable: { thread_id: "t" } }, { limit: 120 }))).map((t) => t.checkpoint.id),
    ).toEqual(listedIds.slice(0, 120));
    expect(listed[0].checkpoint.channel_values).toEqual({ ...values, c0: 1149 });
    expect(listed[150].checkpoint.channel_values).toEqual(values);
  });

  it("deleteAllExceptLatest keeps the newest checkpoint of each namespace with its blobs and writes", async () => {
    const { sql, saver } = fresh();
    const root = await putChain(saver, "t", [
      {
        values: { keep: "from the first checkpoint", n: 1 },
        versions: { keep: 1, n: 1 },
        newVersions: { keep: 1, n: 1 },
      },
      { values: { keep: "from the first checkpoint", n: 2 }, versions: { keep: 1, n: 2 }, newVersions: { n: 2 } },
      {
        values: { keep: "from the first checkpoint", n: 3, gone: "x" },
        versions: { keep: 1, n: 3, gone: 3 },
        newVersions: { n: 3, gone: 3 },
      },
      {
        values: { keep: "from the first checkpoint", n: 4 },
        versions: { keep: 1, n: 4, gone: 4 },
        newVersions: { n: 4, gone: 4 },
      },
    ]);
    await putChain(
      saver,
      "t",
      [
        { values: { c: "one" }, versions: { c: 1 }, newVersions: { c: 1 } },
        { values: { c: "two" }, versions: { c: 2 }, newVersions: { c: 2 } },
      ],
      "child:1",
    );
    const other = await putChain(saver, "other", [
      { values: { o: 1 }, versions: { o: 1 }, newVersions: { o: 1 } },
      { values: { o: 2 }, versions: { o: 2 }, newVersions: { o: 2 } },
    ]);
    for (const id of root)
      await saver.putWrites(
        { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } },
        [["n", id]],
        "task",
      );
    await saver.putWrites(
      { configurable: { thread_id: "other", checkpoint_ns: "", checkpoint_id: other[0] } },
      [["o", 9]],
      "task",
    );

    expect(saver.checkpointCount("t")).toBe(6);
    expect(saver.checkpointCount("t", "child:1")).toBe(2);
    expect(saver.deleteAllExceptLatest("t")).toBe(4);
    expect(saver.checkpointCount("t")).toBe(2);

    const latest = await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "" } });
    expect(latest?.checkpoint.id).toBe(root[3]);
    expect(latest?.checkpoint.channel_values).toEqual({ keep: "from the first checkpoint", n: 4 });
    expect(latest?.pendingWrites).toEqual([["task", "n", root[3]]]);
    expect(
      (await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "child:1" } }))?.checkpoint.channel_values,
    ).toEqual({ c: "two" });
    expect(
      await saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: root[0] } }),
    ).toBeUndefined();

    // Only the blobs the kept checkpoints point at remain, and only the kept checkpoint's writes.
    const blobs = sql
      .all<{ channel: string; version: string }>(
        "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = 't' ORDER BY channel",
      )
      .map((b) => `${b.channel}@${b.version}`);
    expect(blobs).toEqual(["c@2", "gone@4", "keep@1", "n@4"]);
    expect(count(sql, "SELECT COUNT(*) AS n FROM checkpoint_writes WHERE thread_id = 't'")).toBe(1);

    // Other threads are untouched.
    expect(saver.checkpointCount("other")).toBe(2);
    const otherFirst = await saver.getTuple({
      configurable: { thread_id: "other", checkpoint_ns: "", checkpoint_id: other[0] },
    });
    expect(otherFirst?.checkpoint.channel_values).toEqual({ o: 1 });
    expect(otherFirst?.pendingWrites).toEqual([["task", "o", 9]]);
    expect(saver.deleteAllExceptLatest("t")).toBe(0);
  });

  it("deleteThread removes checkpoints, blobs and writes of that thread only", async () => {
    const { sql, saver } = fresh();
    const [id] = await putChain(saver, "t", [{ values: { a: 1 }, versions: { a: 1 }, newVersions: { a: 1 } }]);
    await putChain(saver, "u", [{ values: { a: 1 }, versions: { a: 1 }, newVersions: { a: 1 } }]);
    await saver.putWrites(
      { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id } },
      [["a", 2]],
      "task",
    );
    await saver.deleteThread("t");
    for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]) {
      expect(count(sql, `SELECT COUNT(*) AS n FROM ${table} WHERE thread_id = 't'`)).toBe(0);
    }
    expect((await saver.getTuple({ configurable: { thread_id: "u" } }))?.checkpoint.channel_values).toEqual({ a: 1 });
  });

  describe("list filters on metadata", () => {
    const { saver } = fresh();
    const metadata = (extra: Record<string, unknown>) =>
      ({ source: "loop", step: 1, parents: {}, ...extra }) as CheckpointMetadata;
    let ids: string[] = [];

    beforeAll(async () => {
      ids = await putChain(saver, "t", [
        {
          values: {},
          versions: {},
          newVersions: {},
          metadata: metadata({
            source: "input",
            step: -1,
            run_id: "run-1",
            run: { id: "r1", tags: ["a", "b"], attempt: 1 },
            flag: true,
          }),
        },
        {
          values: {},
          versions: {},
          newVersions: {},
          metadata: metadata({
            run_id: "run-1",
            run: { id: "r1", tags: ["a"], attempt: 2 },
            "dotted.key": "x",
            parents: { "": "p" },
          }),
        },
        {
          values: {},
          versions: {},
          newVersions: {},
          metadata: metadata({ run_id: "run-2", step: "1", flag: 1, user: { name: "O'Brien" } }),
        },
      ]);
    });

    const matching = async (filter: Record<string, unknown>, limit?: number) =>
      (await toArray(saver.list({ configurable: { thread_id: "t" } }, { filter, limit }))).map((t: CheckpointTuple) =>
        ids.indexOf(t.checkpoint.id),
      );

    it.each([
      [{}, [2, 1, 0]],
      [{ source: "input" }, [0]],
      [{ step: 1 }, [1]],
      [{ step: "1" }, [2]],
      [{ step: -1, source: "input" }, [0]],
      [{ run_id: "run-1" }, [1, 0]],
      [{ run: { id: "r1" } }, [1, 0]],
      [{ run: { id: "r1", attempt: 2 } }, [1]],
      [{ run: { id: "r2" } }, []],
      [{ run: { tags: ["a", "b"] } }, [0]],
      [{ run: { tags: ["a"] } }, [1]],
      [{ run: {} }, [1, 0]],
      [{ flag: true }, [0]],
      [{ flag: 1 }, [2]],
      [{ "dotted.key": "x" }, [1]],
      [{ parents: { "": "p" } }, [1]],
      [{ user: { name: "O'Brien" } }, [2]],
      [{ missing: null }, []],
      [{ source: undefined }, [2, 1, 0]],
    ])("filter %j matches checkpoints %j", async (filter, expected) => {
      expect(await matching(filter)).toEqual(expected);
    });

    it("applies the limit after the filter, and `before` with it", async () => {
      expect(await matching({ run_id: "run-1" }, 1)).toEqual([1]);
      const before = await toArray(
        saver.list({ configurable: { thread_id: "t" } }, { before: { configurable: { checkpoint_id: ids[1] } } }),
      );
      expect(before.map((t) => t.checkpoint.id)).toEqual([ids[0]]);
    });

    it("rejects keys SQLite JSON paths cannot address", async () => {
      await expect(matching({ 'a"b': 1 })).rejects.toThrow(/cannot contain/);
    });
  });
});

// ---- with real graphs ----

const echo = new StateGraph(MessagesAnnotation)
  .addNode("reply", (state) => ({ messages: [new AIMessage(`echo: ${state.messages.at(-1)?.content}`)] }))
  .addEdge(START, "reply")
  .addEdge("reply", END);

const texts = (messages: BaseMessage[]) => messages.map((m) => m.content);

describe("SqliteCheckpointSaver with a compiled graph", () => {
  it("continues a thread across invocations, with state and history", async () => {
    const { saver } = fresh();
    const graph = echo.compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "chat" } };
    await graph.invoke({ messages: [new HumanMessage("one")] }, config);
    const second = await graph.invoke({ messages: [new HumanMessage("two")] }, config);
    expect(texts(second.messages)).toEqual(["one", "echo: one", "two", "echo: two"]);

    const state = await graph.getState(config);
    expect(texts(state.values.messages)).toEqual(["one", "echo: one", "two", "echo: two"]);
    expect(AIMessage.isInstance(state.values.messages[3])).toBe(true);
    expect(state.next).toEqual([]);
    expect(state.metadata?.source).toBe("loop");

    const history = await toArray(graph.getStateHistory(config));
    // Per invoke: the input checkpoint, the one before `reply`, the one after it.
    expect(history).toHaveLength(6);
    expect(history.map((s) => s.metadata?.step)).toEqual([4, 3, 2, 1, 0, -1]);
    expect(history.map((s) => s.metadata?.source)).toEqual(["loop", "loop", "input", "loop", "loop", "input"]);
    expect(history.map((s) => s.values.messages?.length ?? 0)).toEqual([4, 3, 2, 2, 1, 0]);
    expect(history[1].next).toEqual(["reply"]);
    expect(history[0].parentConfig?.configurable?.checkpoint_id).toBe(history[1].config.configurable?.checkpoint_id);
    expect(
      (await toArray(graph.getStateHistory(config, { limit: 2 }))).map((s) => s.config.configurable?.checkpoint_id),
    ).toEqual(history.slice(0, 2).map((s) => s.config.configurable?.checkpoint_id));
    expect(await toArray(graph.getStateHistory(config, { filter: { source: "input" } }))).toHaveLength(2);
  });

  it("interrupts and resumes with Command across invocations and saver instances", async () => {
    const sql = strictSql();
    const approval = new StateGraph(MessagesAnnotation)
      .addNode("ask", () => {
        const answer = interrupt<string, string>("approve?");
        return { messages: [new AIMessage(`approved: ${answer}`)] };
      })
      .addEdge(START, "ask")
      .addEdge("ask", END);
    const config = { configurable: { thread_id: "approval" } };

    const paused = await approval
      .compile({ checkpointer: new SqliteCheckpointSaver(sql) })
      .invoke({ messages: [new HumanMessage("go")] }, config);
    expect(isInterrupted<string>(paused)).toBe(true);
    expect(isInterrupted<string>(paused) && paused[INTERRUPT].map((i) => i.value)).toEqual(["approve?"]);

    // A new saver over the same database: what a Durable Object sees after an eviction.
    const graph = approval.compile({ checkpointer: new SqliteCheckpointSaver(sql) });
    const waiting = await graph.getState(config);
    expect(waiting.next).toEqual(["ask"]);
    expect(waiting.tasks[0].interrupts.map((i) => i.value)).toEqual(["approve?"]);

    const resumed = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(texts(resumed.messages)).toEqual(["go", "approved: yes"]);
    expect((await graph.getState(config)).next).toEqual([]);
  });

  it("keeps sibling forks of one checkpoint apart (versions never collide)", async () => {
    const { saver } = fresh();
    const graph = echo.compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "forks" } };
    await graph.invoke({ messages: [new HumanMessage("one")] }, config);
    const base = (await graph.getState(config)).config;

    // Two runs from the same checkpoint ("edit and retry") write the same channels at the same step.
    await graph.invoke({ messages: [new HumanMessage("run A")] }, base);
    const runA = (await graph.getState(config)).config;
    await graph.invoke({ messages: [new HumanMessage("run B")] }, base);
    const runB = (await graph.getState(config)).config;
    expect(texts((await graph.getState(runA)).values.messages)).toEqual(["one", "echo: one", "run A", "echo: run A"]);
    expect(texts((await graph.getState(runB)).values.messages)).toEqual(["one", "echo: one", "run B", "echo: run B"]);

    // Two state updates of the same checkpoint.
    const editA = await graph.updateState(base, { messages: [new HumanMessage("edit A")] });
    const editB = await graph.updateState(base, { messages: [new HumanMessage("edit B")] });
    expect(texts((await graph.getState(editA)).values.messages)).toEqual(["one", "echo: one", "edit A"]);
    expect(texts((await graph.getState(editB)).values.messages)).toEqual(["one", "echo: one", "edit B"]);
    expect(texts((await graph.getState(base)).values.messages)).toEqual(["one", "echo: one"]);
  });

  it("lists 100 of 150 checkpoints of a chat thread quickly (timing is logged, not asserted)", async () => {
    let storageMs = 0;
    const inner = strictSql();
    const timed =
      <A extends unknown[], R>(fn: (...args: A) => R) =>
      (...args: A): R => {
        const started = performance.now();
        try {
          return fn(...args);
        } finally {
          storageMs += performance.now() - started;
        }
      };
    const sql: SqlStore = {
      all: timed(inner.all) as SqlStore["all"],
      iterate: inner.iterate,
      run: timed(inner.run),
      transaction: inner.transaction,
    };
    const { saver } = fresh(sql);
    const graph = echo.compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "long" } };
    for (let i = 0; i < 50; i += 1)
      await graph.invoke({ messages: [new HumanMessage(`message ${i} ${"lorem ipsum ".repeat(20)}`)] }, config);
    expect(saver.checkpointCount("long")).toBe(150);

    const runs: { storage: number; total: number }[] = [];
    for (let run = 0; run < 5; run += 1) {
      storageMs = 0;
      const started = performance.now();
      const page = await toArray(
        saver.list({ configurable: { thread_id: "long", checkpoint_ns: "" } }, { limit: 100 }),
      );
      runs.push({ storage: storageMs, total: performance.now() - started });
      expect(page).toHaveLength(100);
      expect((page[0].checkpoint.channel_values.messages as BaseMessage[]).length).toBe(100);
      expect(page.map((t) => t.checkpoint.id)).toEqual([...page.map((t) => t.checkpoint.id)].sort().reverse());
    }
    const best = runs.reduce((a, b) => (b.total < a.total ? b : a));
    console.log(
      `list({limit: 100}) over 150 checkpoints: storage ${best.storage.toFixed(1)} ms, total with deserialization ${best.total.toFixed(1)} ms ` +
        `(runs: ${runs.map((r) => `${r.storage.toFixed(1)}/${r.total.toFixed(1)}`).join(", ")})`,
    );
  });
});
