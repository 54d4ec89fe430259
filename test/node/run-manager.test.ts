// RunManager through its RunHost port, in Node: an in-memory thread record, the DO checkpointer over
// node:sqlite, and a small graph whose node can be held open, so queueing, cancellation, joins,
// streams and deletion can be driven one step at a time.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import { runConfigProblem } from "../../src/assistants/schemas.ts";
import type { LoadedGraph } from "../../src/deployment/graphs.ts";
import { SqliteCheckpointSaver } from "../../src/threads/object/checkpointer.ts";
import type { ThreadRecord } from "../../src/threads/object/record.ts";
import type { RunHost } from "../../src/threads/runs/ports.ts";
import { RunManager } from "../../src/threads/runs/run-manager.ts";
import { type CreateRunInput, type RunKwargs, THREAD_BUSY, threadDeletedError } from "../../src/threads/runs/types.ts";
import type { TracedRun } from "../../src/tracing/agent-tracer.ts";
import { nodeSql } from "./node-sqlite.ts";

const State = Annotation.Root({
  text: Annotation<string>({ reducer: (_, next) => next, default: () => "" }),
  seen: Annotation<string[]>({ reducer: (all, more) => all.concat(more), default: () => [] }),
});

/** A node that waits on an open gate, if its input names one. */
class Gates {
  readonly #open = new Map<string, () => void>();
  readonly #waiting = new Map<string, Promise<void>>();
  /** Nodes that started, in order. */
  readonly started: string[] = [];

  hold(text: string): void {
    this.#waiting.set(text, new Promise((resolve) => this.#open.set(text, resolve)));
  }

  release(text: string): void {
    this.#open.get(text)?.();
  }

  releaseAll(): void {
    for (const open of this.#open.values()) open();
  }

  wait(text: string): Promise<void> | undefined {
    this.started.push(text);
    return this.#waiting.get(text);
  }
}

/** The host a ThreadDO would be, kept in memory; records are copied in and out as SQLite would. */
class FakeHost implements RunHost {
  readonly sql = nodeSql();
  readonly checkpoints = new SqliteCheckpointSaver(this.sql);
  readonly gates = new Gates();
  thread: ThreadRecord | null = null;
  saves: { status: string; deferIndex: boolean }[] = [];
  deletions = 0;
  traced: TracedRun[] = [];
  tracing = false;

  saver() {
    return this.checkpoints;
  }
  readThread() {
    return this.thread && structuredClone(this.thread);
  }
  writeThread(record: ThreadRecord) {
    this.thread = structuredClone(record);
  }
  async saveThread(record: ThreadRecord, options: { deferIndex?: boolean } = {}) {
    this.writeThread(record);
    this.saves.push({ status: record.status, deferIndex: options.deferIndex ?? false });
  }
  async deleteThread() {
    this.thread = null;
    this.deletions += 1;
  }
  async scheduleAlarm() {}
  runTimeoutMs() {
    return 3_600_000;
  }
  async bindGraph(graphId: string): Promise<LoadedGraph | undefined> {
    // A graph factory that never resolves (an async factory awaiting what never comes).
    if (graphId === "never-built") return new Promise<never>(() => {});
    if (graphId !== "gated") return undefined;
    const gates = this.gates;
    return (
      new StateGraph(State)
        .addNode("echo", async (state) => {
          await gates.wait(state.text);
          return { seen: [state.text.toUpperCase()] };
        })
        .addEdge(START, "echo")
        .addEdge("echo", END)
        // What the deployment loads is typed by node names as plain strings; this graph's are narrower.
        .compile({ checkpointer: this.checkpoints }) as unknown as LoadedGraph
    );
  }
  traceSink() {
    return this.tracing
      ? {
          project: undefined,
          record: async (batches: Iterable<TracedRun[]>) => {
            for (const runs of batches) this.traced.push(...runs);
          },
        }
      : null;
  }
}

const kwargs = (text: string, overrides: Partial<RunKwargs> = {}): RunKwargs => ({
  input: { text },
  command: null,
  config: {},
  context: {},
  stream_mode: ["values"],
  subgraphs: false,
  resumable: false,
  interrupt_before: null,
  interrupt_after: null,
  webhook: null,
  on_completion: null,
  durability: null,
  headers: {},
  ...overrides,
});

const run = (text: string, overrides: Partial<CreateRunInput> = {}): CreateRunInput => ({
  runId: crypto.randomUUID(),
  threadId: "thread-1",
  workspaceId: "ws",
  assistantId: "assistant-1",
  graphId: "gated",
  assistant: { config: {}, context: {}, metadata: {} },
  metadata: {},
  kwargs: kwargs(text),
  checkpoint: null,
  multitaskStrategy: "enqueue",
  ifNotExists: "create",
  afterSeconds: 0,
  userId: null,
  authUser: null,
  stateless: false,
  timeoutMs: 3_600_000,
  ...overrides,
});

function setup() {
  const host = new FakeHost();
  return { host, runs: new RunManager(host, host.sql) };
}

/** SSE frames as [event, data]. */
async function events(stream: ReadableStream<Uint8Array>): Promise<[string, unknown][]> {
  const text = await new Response(stream).text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)![1];
      const data = /^data: (.*)$/m.exec(frame)![1];
      return [event, JSON.parse(data)];
    });
}

async function created(manager: RunManager, input: CreateRunInput, subscribe?: { onDisconnect?: () => void }) {
  const outcome = await manager.create(input, subscribe);
  if (!outcome.ok) throw new Error(`run not created: ${outcome.detail}`);
  return outcome.value;
}

describe("RunManager through its RunHost", () => {
  it("creates the thread, runs the run on its own, and answers joins with the final values", async () => {
    const { host, runs } = setup();
    const input = run("hello");
    const { run: json } = await created(runs, input);
    expect(json).toMatchObject({
      run_id: input.runId,
      thread_id: "thread-1",
      status: "pending",
      multitask_strategy: "enqueue",
    });
    expect(host.thread).toMatchObject({
      threadId: "thread-1",
      status: "busy",
      metadata: { graph_id: "gated", assistant_id: "assistant-1" },
    });

    const joined = await runs.join(input.runId);
    expect(joined).toEqual({ ok: true, value: JSON.stringify({ text: "hello", seen: ["HELLO"] }) });
    expect(runs.get(input.runId)).toMatchObject({ ok: true, value: { status: "success" } });
    expect(host.thread).toMatchObject({ status: "idle", values: { text: "hello", seen: ["HELLO"] }, error: null });
    // Created busy, settled idle; the end waits to merge its index write with others.
    expect(host.saves.map((s) => s.status)).toEqual(["busy", "idle"]);
    expect(host.saves.at(-1)!.deferIndex).toBe(true);
    // A finished run answers a later join at once, from its stored result.
    expect(await runs.join(input.runId)).toEqual(joined);
  });

  it("streams a subscribed run from its metadata to its last values, then ends the stream", async () => {
    const { runs } = setup();
    const input = run("stream me");
    const { stream } = await created(runs, input, {});
    const seen = await events(stream!);
    expect(seen[0]).toEqual(["metadata", { run_id: input.runId, attempt: 1 }]);
    expect(seen.at(-1)).toEqual(["values", { text: "stream me", seen: ["STREAM ME"] }]);
  });

  it("refuses a run with `reject` while the thread is busy, and queues one with `enqueue`", async () => {
    const { host, runs } = setup();
    host.gates.hold("first");
    const first = run("first");
    await created(runs, first);
    await vi.waitFor(() => expect(host.gates.started).toEqual(["first"]));

    const refused = await runs.create(run("refused", { multitaskStrategy: "reject" }));
    expect(refused).toEqual({ ok: false, kind: "conflict", detail: THREAD_BUSY });

    const queued = run("queued");
    expect((await created(runs, queued)).run.status).toBe("pending");
    expect(runs.get(queued.runId)).toMatchObject({ ok: true, value: { status: "pending" } });

    host.gates.release("first");
    expect((await runs.join(queued.runId)).ok).toBe(true);
    expect(host.gates.started).toEqual(["first", "queued"]);
    expect(host.thread?.values).toEqual({ text: "queued", seen: ["FIRST", "QUEUED"] });
    expect(runs.list({ limit: 10, offset: 0 }).map((r) => r.status)).toEqual(["success", "success"]);
  });

  it("cancels a running run with `interrupt`: it ends interrupted and its waiters get their answer", async () => {
    const { host, runs } = setup();
    host.gates.hold("slow");
    const input = run("slow");
    await created(runs, input);
    await vi.waitFor(() => expect(host.gates.started).toEqual(["slow"]));
    const waiting = runs.join(input.runId);

    const cancelled = await runs.cancel({ runIds: [input.runId], action: "interrupt", wait: true });
    expect(cancelled).toMatchObject({ ok: true, value: [{ run_id: input.runId, status: "interrupted" }] });
    expect((await waiting).ok).toBe(true);
    expect(host.thread?.status).toBe("idle");
    host.gates.releaseAll();
  });

  it("rolls back a pending run: it is deleted, and its waiter learns it is gone", async () => {
    const { host, runs } = setup();
    host.gates.hold("busy");
    await created(runs, run("busy"));
    const pending = run("never");
    await created(runs, pending);
    const waiting = runs.join(pending.runId);

    expect((await runs.cancel({ runIds: [pending.runId], action: "rollback" })).ok).toBe(true);
    expect(await waiting).toEqual({ ok: false, kind: "not_found", detail: "Run not found" });
    expect(runs.get(pending.runId)).toEqual({ ok: false, kind: "not_found", detail: "Run not found" });
    expect(await runs.cancel({ runIds: [pending.runId], action: "interrupt" })).toEqual({
      ok: false,
      kind: "not_found",
      detail: "Run not found",
    });
    host.gates.releaseAll();
  });

  it("creates no thread for `if_not_exists: reject`, and names the missing thread", async () => {
    const { host, runs } = setup();
    const refused = await runs.create(run("x", { ifNotExists: "reject" }));
    expect(refused).toEqual({ ok: false, kind: "not_found", detail: "Thread with ID thread-1 not found" });
    expect(host.thread).toBeNull();
  });

  it("removes a stateless run's temporary thread once the run has ended", async () => {
    const { host, runs } = setup();
    const input = run("once", { stateless: true, threadId: "temp" });
    await created(runs, input);
    expect(host.thread?.temporary).toBe(true);
    expect((await runs.join(input.runId)).ok).toBe(true);
    await vi.waitFor(() => expect(host.deletions).toBe(1));
    expect(host.thread).toBeNull();
  });

  it("keeps a delayed run pending and asks for the alarm when it becomes due", async () => {
    const { runs } = setup();
    const input = run("later", { afterSeconds: 60 });
    const before = Date.now();
    await created(runs, input);
    expect(runs.get(input.runId)).toMatchObject({ ok: true, value: { status: "pending" } });
    const wakeup = runs.nextWakeup()!;
    expect(wakeup).toBeGreaterThanOrEqual(before + 60_000);
    expect(wakeup).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it("fails a run whose graph is not deployed, and the thread shows the error", async () => {
    const { host, runs } = setup();
    const input = run("x", { graphId: "missing" });
    await created(runs, input);
    const joined = await runs.join(input.runId);
    expect(joined.ok && JSON.parse(joined.value)).toEqual({
      __error__: { error: "GraphNotFound", message: 'Graph "missing" is not deployed' },
    });
    expect(host.thread).toMatchObject({ status: "error", error: 'Graph "missing" is not deployed' });
  });

  it("on shutdown tells readers and waiters of active runs that the thread was deleted", async () => {
    const { host, runs } = setup();
    host.gates.hold("doomed");
    const input = run("doomed");
    const { stream } = await created(runs, input, {});
    await vi.waitFor(() => expect(host.gates.started).toEqual(["doomed"]));
    const waiting = runs.join(input.runId);
    const read = events(stream!);

    await runs.shutdown();
    const deleted = threadDeletedError("thread-1");
    expect(await waiting).toEqual({ ok: true, value: JSON.stringify({ __error__: deleted }) });
    expect((await read).at(-1)).toEqual(["error", deleted]);
    expect(runs.table.hasActive()).toBe(false);
    host.gates.releaseAll();
  });

  it("traces an executed run into the host's sink", async () => {
    const { host, runs } = setup();
    host.tracing = true;
    const input = run("traced");
    await created(runs, input);
    await runs.join(input.runId);
    await vi.waitFor(() => expect(host.traced.length).toBeGreaterThan(0));
    expect(host.traced.some((traced) => traced.parent_run_id === null && traced.outputs !== null)).toBe(true);
  });
});

describe("a run's wall-clock limit and the config it runs with", () => {
  const failure = (joined: { ok: boolean; value?: string }) =>
    (JSON.parse(joined.value ?? "null") as { __error__: { error: string; message: string } }).__error__;

  it("stops a run over its limit: it ends `timeout`, readers and waiters learn it, the queued run runs", async () => {
    const { host, runs } = setup();
    // The node waits on a gate that ignores the abort: only the deadline can end this run.
    host.gates.hold("stuck");
    const stuck = run("stuck", { timeoutMs: 50 });
    const { stream } = await created(runs, stuck, {});
    const read = events(stream!);
    const queued = run("queued");
    await created(runs, queued);
    expect(runs.nextWakeup()).toBeLessThanOrEqual(Date.now() + 50);

    const joined = await runs.join(stuck.runId);
    const error = {
      error: "TimeoutError",
      message: `Run ${stuck.runId} exceeded the wall-clock limit of 0.05 s (BG_JOB_TIMEOUT_SECS) and was stopped`,
    };
    expect(failure(joined)).toEqual(error);
    expect(runs.get(stuck.runId)).toMatchObject({ ok: true, value: { status: "timeout" } });
    expect((await read).at(-1)).toEqual(["error", error]);

    expect((await runs.join(queued.runId)).ok).toBe(true);
    expect(runs.get(queued.runId)).toMatchObject({ ok: true, value: { status: "success" } });
    expect(host.thread).toMatchObject({ status: "idle", error: null });
    // The stopped graph writes nothing once its node returns.
    host.gates.release("stuck");
    // Time itself is under test: nothing is written in the 10 ms after the node returns.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(host.thread?.values).toEqual({ text: "queued", seen: ["QUEUED"] });
    expect(runs.get(stuck.runId)).toMatchObject({ ok: true, value: { status: "timeout" } });
  });

  it("stops a run whose graph is never built once its deadline passes, and runs the queued one", async () => {
    const { host, runs } = setup();
    const stuck = run("unbuilt", { graphId: "never-built", timeoutMs: 30 });
    await created(runs, stuck);
    const queued = run("after");
    await created(runs, queued);
    expect(failure(await runs.join(stuck.runId)).error).toBe("TimeoutError");
    expect(runs.get(stuck.runId)).toMatchObject({ ok: true, value: { status: "timeout" } });
    expect((await runs.join(queued.runId)).ok).toBe(true);
    expect(host.thread?.values).toEqual({ text: "after", seen: ["AFTER"] });
  });

  it("leaves the thread in error when the timed-out run was the last one", async () => {
    const { host, runs } = setup();
    host.gates.hold("alone");
    const input = run("alone", { timeoutMs: 20 });
    await created(runs, input);
    expect(failure(await runs.join(input.runId)).error).toBe("TimeoutError");
    expect(host.thread).toMatchObject({ status: "error", error: expect.stringContaining("wall-clock limit") });
    host.gates.releaseAll();
  });

  /** A run that a restart cut off while running, with `deadline` stored; then a new instance. */
  async function cutOff(deadline: number) {
    const { host, runs } = setup();
    const input = run("resumed", { afterSeconds: 3600 });
    await created(runs, input);
    host.sql.run(
      "UPDATE runs SET status = 'running', attempt = 1, not_before = 0, deadline = ? WHERE run_id = ?",
      deadline,
      input.runId,
    );
    const restarted = new RunManager(host, host.sql);
    restarted.onAlarm();
    return { host, runs: restarted, input };
  }

  it("ends a run resumed after a restart past its stored deadline as `timeout`, without running it", async () => {
    const { host, runs, input } = await cutOff(Date.now() - 1);
    expect(failure(await runs.join(input.runId)).error).toBe("TimeoutError");
    expect(runs.get(input.runId)).toMatchObject({ ok: true, value: { status: "timeout" } });
    expect(host.gates.started).toEqual([]);
    expect(host.thread?.status).toBe("error");
  });

  it("keeps a resumed run's deadline: it is not reset by the restart", async () => {
    const deadline = Date.now() + 60_000;
    const { runs, input } = await cutOff(deadline);
    expect((await runs.join(input.runId)).ok).toBe(true);
    expect(runs.get(input.runId)).toMatchObject({ ok: true, value: { status: "success" } });
    expect(runs.table.get(input.runId)?.deadline).toBe(deadline);
  });

  it("fails a run whose stored config LangGraph cannot run with, and the next run runs", async () => {
    const { host, runs } = setup();
    // An assistant's config stored before configs were checked: max_concurrency 0 starts no task.
    const bad = run("bad", { assistant: { config: { max_concurrency: 0 }, context: {}, metadata: {} } });
    await created(runs, bad);
    expect(failure(await runs.join(bad.runId))).toEqual({
      error: "InvalidConfig",
      message: `Run ${bad.runId} cannot start: config.max_concurrency must be an integer ≥ 1`,
    });
    expect(runs.get(bad.runId)).toMatchObject({ ok: true, value: { status: "error" } });
    expect(host.gates.started).toEqual([]);
    expect(host.thread?.status).toBe("error");

    const good = run("good", { kwargs: kwargs("good", { config: { max_concurrency: 1 } }) });
    await created(runs, good);
    expect((await runs.join(good.runId)).ok).toBe(true);
    expect(host.thread).toMatchObject({ status: "idle", values: { text: "good", seen: ["GOOD"] } });
  });

  it("names the field of a stored config's problem", () => {
    expect(runConfigProblem({ max_concurrency: 1, recursion_limit: 3, tags: [], configurable: {} })).toBeNull();
    expect(runConfigProblem({ recursion_limit: -1 })).toBe("config.recursion_limit must be an integer ≥ 1");
    expect(runConfigProblem({ configurable: { checkpoint_ns: 3 } })).toBe(
      "config.configurable.checkpoint_ns must be a string",
    );
    expect(runConfigProblem({ tags: ["x".repeat(2000)] })).toMatch(/^config\.tags\.0: /);
  });

  it("passes LangGraph only the config fields the API defines", async () => {
    const { host, runs } = setup();
    // camelCase keys are LangGraph's own: `maxConcurrency: 0` would hang the run if it reached it.
    const input = run("plain", { kwargs: kwargs("plain", { config: { maxConcurrency: 0, recursionLimit: 0 } }) });
    await created(runs, input);
    expect((await runs.join(input.runId)).ok).toBe(true);
    expect(host.thread?.status).toBe("idle");
  });
});
