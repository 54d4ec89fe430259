// Operations over many threads stay within one invocation's subrequest budget and continue on the
// work queue: cancelling runs by status, pruning, deleting an assistant's threads.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FREE_PLAN_SUBREQUEST_BUDGET, SUBREQUEST_BUDGET, subrequestBudget } from "../../src/core/limits.ts";
import worker, { queueHandlers } from "../../src/index.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { fanOutStep, THREAD_FAN_OUT_MESSAGE, type ThreadFanOutMessage } from "../../src/threads/fan-out.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { BOOTSTRAP_KEY, call, json } from "./helpers.ts";
import { updateIndexRows } from "./thread-index-helpers.ts";

const BUDGET = 3;

/**
 * The Worker's environment with a budget of 3, a THREAD namespace that records which thread each
 * Durable Object call goes to, and a queue that keeps its messages for the test to deliver.
 */
function budgeted() {
  const calls: string[] = [];
  const messages: ThreadFanOutMessage[] = [];
  const thread = new Proxy(env.THREAD, {
    get(namespace, name) {
      if (name === "idFromName")
        return (threadName: string) => {
          calls.push(threadName.slice(threadName.indexOf(":") + 1));
          return namespace.idFromName(threadName);
        };
      const value = Reflect.get(namespace, name);
      return typeof value === "function" ? value.bind(namespace) : value;
    },
  });
  const queue = {
    send: async (body: ThreadFanOutMessage) => void messages.push(body),
    sendBatch: async (batch: { body: ThreadFanOutMessage }[]) => void messages.push(...batch.map((m) => m.body)),
  };
  const driven = Object.assign({}, env, {
    THREAD: thread,
    QUEUE: queue as unknown as Queue,
    SUBREQUEST_BUDGET: String(BUDGET),
  });
  /** One request through the Worker with this environment; the thread calls it made. */
  async function request(path: string, init: { method: string; json?: unknown }) {
    calls.length = 0;
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://platform.test${path}`, {
        method: init.method,
        headers: { "X-Api-Key": BOOTSTRAP_KEY, "Content-Type": "application/json" },
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      }),
      driven,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return { response, calls: [...calls] };
  }
  /** Delivers the queued messages one invocation at a time; the thread calls of each. */
  async function drain(): Promise<string[][]> {
    const invocations: string[][] = [];
    for (let i = 0; i < 100 && messages.length; i++) {
      const message = messages.shift()!;
      expect(message.kind).toBe(THREAD_FAN_OUT_MESSAGE);
      calls.length = 0;
      await queueHandlers[THREAD_FAN_OUT_MESSAGE](
        message as unknown as Parameters<(typeof queueHandlers)[string]>[0],
        driven,
      );
      invocations.push([...calls]);
    }
    expect(messages).toEqual([]);
    return invocations;
  }
  return { request, drain, messages };
}

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
const newThread = async (metadata: Record<string, unknown> = {}) =>
  (await json<ThreadJson>(await post("/threads", { metadata }))).thread_id;
const exists = async (threadId: string) => (await call(`/threads/${threadId}`)).status === 200;

describe("the subrequest budget", () => {
  it("is 500 on paid plans, 25 under LIMITS_GUARD=free, and SUBREQUEST_BUDGET only lowers it", () => {
    expect(subrequestBudget({})).toBe(SUBREQUEST_BUDGET);
    expect(SUBREQUEST_BUDGET).toBeLessThan(1000);
    expect(subrequestBudget({ LIMITS_GUARD: "free" })).toBe(FREE_PLAN_SUBREQUEST_BUDGET);
    expect(FREE_PLAN_SUBREQUEST_BUDGET).toBeLessThan(50);
    expect(subrequestBudget({ SUBREQUEST_BUDGET: "3" })).toBe(3);
    expect(subrequestBudget({ SUBREQUEST_BUDGET: "5000" })).toBe(SUBREQUEST_BUDGET);
    expect(subrequestBudget({ LIMITS_GUARD: "free", SUBREQUEST_BUDGET: "100" })).toBe(FREE_PLAN_SUBREQUEST_BUDGET);
    expect(subrequestBudget({ SUBREQUEST_BUDGET: "nope" })).toBe(SUBREQUEST_BUDGET);
    // A deployment on the Free plan says so with WORKERS_PLAN.
    expect(subrequestBudget({ WORKERS_PLAN: "free" })).toBe(FREE_PLAN_SUBREQUEST_BUDGET);
  });
});

describe("fan-outs over threads", () => {
  it("prunes the threads of the budget now and the rest through the queue, each once", async () => {
    const { request, drain } = budgeted();
    const threads = await Promise.all(Array.from({ length: 8 }, () => newThread()));
    const unknown = crypto.randomUUID();
    const { response, calls } = await request("/threads/prune", {
      method: "POST",
      json: { thread_ids: [...threads, unknown, threads[0]] },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ pruned_count: BUDGET, queued_count: 8 - BUDGET });
    expect(calls).toHaveLength(BUDGET);
    const invocations = await drain();
    expect(invocations.map((made) => made.length)).toEqual([3, 2]);
    expect([...calls, ...invocations.flat()].sort()).toEqual([...threads].sort());
    for (const id of threads) expect(await exists(id)).toBe(false);
    // Within the budget nothing is queued, and the answer is the official one.
    const few = await Promise.all([newThread(), newThread()]);
    const small = await request("/threads/prune", { method: "POST", json: { thread_ids: few } });
    expect(await small.response.json()).toEqual({ pruned_count: 2 });
    expect(await drain()).toEqual([]);
  });

  it("cancels the runs of every busy thread, a budget per invocation", async () => {
    const { request, drain } = budgeted();
    const threads = await Promise.all(Array.from({ length: 7 }, () => newThread({ fan_out: "cancel" })));
    // Busy in the index, as a thread with a pending run is (the cancel reaches each thread's object).
    await updateIndexRows(threads, "status = 'busy'");
    const { response, calls } = await request("/runs/cancel", { method: "POST", json: { status: "all" } });
    expect(response.status).toBe(204);
    expect(calls).toHaveLength(BUDGET);
    const invocations = await drain();
    for (const made of invocations) expect(made.length).toBeLessThanOrEqual(BUDGET);
    const reached = [...calls, ...invocations.flat()];
    // Every busy thread once, in (created_at, thread_id) order across invocations.
    expect(reached.filter((id) => threads.includes(id)).sort()).toEqual([...threads].sort());
    expect(new Set(reached).size).toBe(reached.length);
  });

  it("deletes an assistant's threads past the budget through the queue", async () => {
    const { request, drain } = budgeted();
    const assistant = await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }));
    const threads = await Promise.all(
      Array.from({ length: 7 }, () => newThread({ assistant_id: assistant.assistant_id })),
    );
    const other = await newThread({ assistant_id: crypto.randomUUID() });
    const { response, calls } = await request(`/assistants/${assistant.assistant_id}?delete_threads=true`, {
      method: "DELETE",
    });
    expect(response.status).toBe(200);
    expect(calls).toHaveLength(BUDGET);
    expect((await call(`/assistants/${assistant.assistant_id}`)).status).toBe(404);
    const invocations = await drain();
    expect(invocations.map((made) => made.length)).toEqual([3, 1]);
    for (const id of threads) expect(await exists(id)).toBe(false);
    expect(await exists(other)).toBe(true);
  });

  it("runs a step again with the same result (a redelivered message)", async () => {
    const { request, drain, messages } = budgeted();
    const threads = await Promise.all(Array.from({ length: 5 }, () => newThread()));
    await request("/threads/prune", { method: "POST", json: { thread_ids: threads } });
    expect(messages).toHaveLength(1);
    messages.push(structuredClone(messages[0]));
    await drain();
    for (const id of threads) expect(await exists(id)).toBe(false);
  });
});

describe("a fan-out step whose thread call fails", () => {
  it("counts that thread as not done and still reaches the others", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await json<ThreadJson>(await call("/threads", { method: "POST", json: {} }))).thread_id);
    const [, failing] = ids;
    // The failing thread's object answers every call with an error (reset, overloaded).
    const thread = new Proxy(env.THREAD, {
      get(namespace, name) {
        if (name === "get")
          return (id: DurableObjectId) =>
            id.equals(namespace.idFromName(`${DEFAULT_WORKSPACE_ID}:${failing}`))
              ? { prune: () => Promise.reject(new Error("Durable Object reset because its code was updated.")) }
              : namespace.get(id);
        const value = Reflect.get(namespace, name);
        return typeof value === "function" ? value.bind(namespace) : value;
      },
    });
    const step = await fanOutStep({ ...env, THREAD: thread }, DEFAULT_WORKSPACE_ID, {
      op: "prune",
      threadIds: ids,
      strategy: "delete",
    });
    expect(step).toMatchObject({ done: 2, next: null });
    for (const id of ids) expect((await call(`/threads/${id}`)).status, id).toBe(id === failing ? 200 : 404);
  });
});
