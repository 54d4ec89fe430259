import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadDO } from "../../src/threads/object/thread-do.ts";
import type { RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson, ThreadStateJson } from "../../src/threads/types.ts";
import { type Gate, gate } from "../fixtures/gate.ts";
import { until } from "../fixtures/until.ts";
import { call, json } from "./helpers.ts";
import { parseSse } from "./sse.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
const human = (content: string) => ({ messages: [{ role: "user", content }] });

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

async function stream(path: string, body: Record<string, unknown>) {
  const response = await post(path, body);
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, events: parseSse(await response.text()) };
}

const readRun = async (threadId: string, runId: string) =>
  json<RunJson>(await call(`/threads/${threadId}/runs/${runId}`));

/** Polls a run until it leaves pending/running. */
function settled(threadId: string, runId: string): Promise<RunJson> {
  return until(
    () => readRun(threadId, runId),
    (run) => run.status !== "pending" && run.status !== "running",
  );
}

/** Polls a run until it has started. */
function started(threadId: string, runId: string): Promise<RunJson> {
  return until(
    () => readRun(threadId, runId),
    (run) => run.status === "running",
  );
}

/** Polls the thread's state until its items are `items` (the run has checkpointed them). */
function itemsReached(threadId: string, items: string[]): Promise<ThreadStateJson> {
  return until(
    async () => json<ThreadStateJson>(await call(`/threads/${threadId}/state`)),
    (state) => JSON.stringify((state.values as { items?: string[] }).items) === JSON.stringify(items),
  );
}

/** Opens a gate of the steps graph (test/fixtures/gate.ts). */
async function open(g: Gate): Promise<void> {
  expect((await call("/store/items", { method: "PUT", json: g.opening })).status).toBe(204);
}

describe("wait", () => {
  it("runs a graph on a thread and answers its final values", async () => {
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: human("hello") });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-location")).toMatch(new RegExp(`^/threads/${threadId}/runs/[0-9a-f-]{36}$`));
    const result = await json<{ messages: { type: string; content: string }[] }>(response);
    expect(result.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello"],
      ["ai", "hello"],
    ]);
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread.status).toBe("idle");
    expect(thread.values).toEqual(result);
    expect(thread.metadata).toMatchObject({ graph_id: "echo", assistant_id: expect.any(String) });
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run).toMatchObject({ status: "success", thread_id: threadId, multitask_strategy: "enqueue" });
    // The run's metadata reached its checkpoints.
    const history = await json<ThreadStateJson[]>(
      await post(`/threads/${threadId}/history`, { metadata: { run_id: run.run_id } }),
    );
    expect(history.length).toBeGreaterThan(1);
  });

  it("stops at interrupt(): the run succeeds, the thread is interrupted, a resume command finishes it", async () => {
    const threadId = await newThread();
    const paused = await json<Record<string, unknown>>(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: "steps", input: { ask_human: true } }),
    );
    expect(paused.items).toEqual(["step1", "step2", "step3"]);
    expect(paused.__interrupt__).toEqual([
      { id: expect.any(String), value: { question: "approve?", items: ["step1", "step2", "step3"] } },
    ]);
    const thread = await json<ThreadJson>(await call(`/threads/${threadId}`));
    expect(thread.status).toBe("interrupted");
    expect(Object.values(thread.interrupts).flat()).toEqual(paused.__interrupt__);
    const state = await json<ThreadStateJson>(await call(`/threads/${threadId}/state`));
    expect(state.next).toEqual(["review"]);

    const resumed = await json<Record<string, unknown>>(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: "steps", command: { resume: { ok: true } } }),
    );
    expect(resumed).toMatchObject({ items: ["step1", "step2", "step3", "review"], answer: { ok: true } });
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("idle");
    expect((await json<RunJson[]>(await call(`/threads/${threadId}/runs`))).map((r) => r.status)).toEqual([
      "success",
      "success",
    ]);
  });

  it("reports a graph failure as __error__, the run and thread as error", async () => {
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: "steps",
      input: {},
      config: { recursion_limit: 2 },
    });
    const result = await json<{ __error__: { error: string; message: string } }>(response);
    expect(result.__error__.error).toBe("GraphRecursionError");
    expect(result.__error__.message).toContain("Recursion limit");
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.status).toBe("error");
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("error");
  });
});

describe("a graph no longer deployed", () => {
  it("fails the run with GraphNotFound, naming the graph", async () => {
    const assistant = await json<{ assistant_id: string }>(
      await post("/assistants", { graph_id: "echo", name: "retired one" }),
    );
    // The deployment no longer has the assistant's graph: its stored graph id names a removed one.
    await env.DB.batch([
      env.DB.prepare("UPDATE assistants SET graph_id = 'retired' WHERE assistant_id = ?").bind(assistant.assistant_id),
      env.DB.prepare("UPDATE assistant_versions SET graph_id = 'retired' WHERE assistant_id = ?").bind(
        assistant.assistant_id,
      ),
    ]);
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: assistant.assistant_id,
      input: human("hi"),
    });
    const result = await json<{ __error__: { error: string; message: string } }>(response);
    expect(result.__error__).toEqual({ error: "GraphNotFound", message: 'Graph "retired" is not deployed' });
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.status).toBe("error");
  });
});

describe("stream", () => {
  it("sends metadata first, numbered events, Location and Content-Location", async () => {
    const threadId = await newThread();
    const { response, events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "steps",
      input: {},
      stream_mode: ["values", "updates"],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const location = response.headers.get("content-location")!;
    expect(response.headers.get("location")).toBe(`${location}/stream`);
    expect(events[0]).toEqual({ event: "metadata", data: { run_id: location.split("/").pop(), attempt: 1 }, id: "0" });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
    expect(events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object)[0])).toEqual([
      "step1",
      "step2",
      "step3",
      "review",
    ]);
    const values = events.filter((e) => e.event === "values").map((e) => (e.data as { items: string[] }).items);
    expect(values.at(-1)).toEqual(["step1", "step2", "step3", "review"]);
  });

  it("streams tokens as messages-tuple and as the legacy messages events", async () => {
    const threadId = await newThread();
    const { events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "agent",
      input: human("what is cloudflare?"),
      stream_mode: ["messages-tuple", "messages"],
    });
    const tuples = events
      .filter((e) => e.event === "messages")
      .map((e) => e.data as [{ content: string; type: string }, Record<string, unknown>]);
    const answer = tuples
      .filter(([m]) => m.type === "AIMessageChunk" && m.content)
      .map(([m]) => m.content)
      .join("");
    expect(answer).toBe("Here is what I found: Cloudflare Workers run JavaScript at the edge in V8 isolates.");
    expect(tuples[0][1]).toMatchObject({ langgraph_node: "agent" });
    expect(events.some((e) => e.event === "messages/metadata")).toBe(true);
    const partials = events
      .filter((e) => e.event === "messages/partial")
      .map((e) => (e.data as { content: string }[])[0].content);
    expect(partials.at(-1)).toBe(answer);
    const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data as { type: string }[]);
    expect(complete.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });

  it("streams debug, tasks, checkpoints and events modes", async () => {
    const threadId = await newThread();
    const { events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "echo",
      input: human("x"),
      stream_mode: ["debug", "tasks", "checkpoints", "events"],
    });
    const names = new Set(events.map((e) => e.event));
    for (const name of ["metadata", "debug", "tasks", "checkpoints", "events"]) expect(names, name).toContain(name);
    expect(names).not.toContain("values");
    const debugTypes = new Set(events.filter((e) => e.event === "debug").map((e) => (e.data as { type: string }).type));
    expect(debugTypes).toContain("checkpoint");
    expect(events.filter((e) => e.event === "events").map((e) => (e.data as { event: string }).event)).toContain(
      "on_chain_start",
    );
  });

  it("reports a failure as an error event", async () => {
    const threadId = await newThread();
    const { events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "steps",
      input: {},
      config: { recursion_limit: 2 },
    });
    const error = events.at(-1)!;
    expect(error.event).toBe("error");
    expect(error.data).toMatchObject({ error: "GraphRecursionError" });
  });

  it("replays a resumable run from Last-Event-ID with the same ids", async () => {
    const threadId = await newThread();
    const { response, events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "steps",
      input: {},
      stream_mode: ["updates"],
      stream_resumable: true,
    });
    const runPath = response.headers.get("content-location")!;
    const replay = parseSse(await (await call(`${runPath}/stream`, { headers: { "Last-Event-ID": "1" } })).text());
    expect(replay).toEqual(events.slice(2));
    const all = parseSse(await (await call(`${runPath}/stream`, { headers: { "Last-Event-ID": "-1" } })).text());
    expect(all).toEqual(events);
    expect(parseSse(await (await call(`${runPath}/stream`, { headers: { "Last-Event-ID": "-" } })).text())).toEqual(
      events,
    );
    expect(parseSse(await (await call(`${runPath}/stream`, { headers: { "Last-Event-ID": "01" } })).text())).toEqual(
      events.slice(2),
    );

    // Only digits: parseInt read `1e3` as 1 and `abc` as no header at all.
    const threadStream = `/threads/${threadId}/stream`;
    const statelessStream = `/runs/${crypto.randomUUID()}/stream`;
    for (const bad of ["1e3", "abc", "-2", "0x10", "1.5", "+1", "9".repeat(16)]) {
      for (const path of [`${runPath}/stream`, threadStream, statelessStream]) {
        const refused = await call(path, { headers: { "Last-Event-ID": bad } });
        expect([bad, path, refused.status]).toEqual([bad, path, 422]);
        expect(JSON.stringify(await refused.json())).toContain("Last-Event-ID must be an event id in digits");
      }
    }
    // Spaces around the value are not part of it (the Fetch API trims header values); inside, they are refused.
    expect((await call(`${runPath}/stream`, { headers: { "Last-Event-ID": "1 2" } })).status).toBe(422);
    expect(parseSse(await (await call(`${runPath}/stream`, { headers: { "Last-Event-ID": " 1 " } })).text())).toEqual(
      events.slice(2),
    );
  });
});

describe("background runs, listing, cancel and delete", () => {
  it("creates a pending run, lists runs newest first, joins it", async () => {
    const threadId = await newThread();
    const first = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("1") }),
    );
    expect(first.status).toBe("pending");
    const second = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("2") }),
    );
    const joined = await json<{ messages: unknown[] }>(await call(`/threads/${threadId}/runs/${second.run_id}/join`));
    expect(joined.messages).toHaveLength(4);
    const runs = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(runs.map((r) => r.run_id)).toEqual([second.run_id, first.run_id]);
    expect(await json<RunJson[]>(await call(`/threads/${threadId}/runs?limit=1&offset=1`))).toHaveLength(1);
    expect(await json<RunJson[]>(await call(`/threads/${threadId}/runs?status=error`))).toEqual([]);
    expect((await call(`/threads/${threadId}/runs/${first.run_id}`, { method: "DELETE" })).status).toBe(200);
    expect((await call(`/threads/${threadId}/runs/${first.run_id}`)).status).toBe(404);
  });

  it("cancels a running run with interrupt, keeping its finished steps", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "steps", input: {}, config: gate("step2").config }),
    );
    // Held at step2's gate (never opened) once step1 is checkpointed.
    await itemsReached(threadId, ["step1"]);
    const cancelled = await call(`/threads/${threadId}/runs/${run.run_id}/cancel?wait=1&action=interrupt`, {
      method: "POST",
    });
    expect(cancelled.status).toBe(200);
    expect((await json<RunJson>(cancelled)).status).toBe("interrupted");
    const state = await json<ThreadStateJson>(await call(`/threads/${threadId}/state`));
    expect((state.values as { items: string[] }).items).toEqual(["step1"]);
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("idle");
  });

  it("rolls back a running run: the run and its checkpoints are gone", async () => {
    const threadId = await newThread();
    await post(`/threads/${threadId}/runs/wait`, { assistant_id: "steps", input: {} });
    const before = await json<ThreadStateJson[]>(await post(`/threads/${threadId}/history`, { limit: 100 }));
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "steps", input: {}, config: gate("step2").config }),
    );
    // Cancelled once the run has checkpointed a step of its own.
    await itemsReached(threadId, ["step1", "step2", "step3", "review", "step1"]);
    expect(
      (await call(`/threads/${threadId}/runs/${run.run_id}/cancel?wait=1&action=rollback`, { method: "POST" })).status,
    ).toBe(200);
    expect((await call(`/threads/${threadId}/runs/${run.run_id}`)).status).toBe(404);
    const after = await json<ThreadStateJson[]>(await post(`/threads/${threadId}/history`, { limit: 100 }));
    expect(after.map((s) => s.checkpoint_id)).toEqual(before.map((s) => s.checkpoint_id));
  });

  it("applies multitask strategies: reject, enqueue, interrupt, rollback", async () => {
    const threadId = await newThread();
    const firstGate = gate();
    const slow = { assistant_id: "steps", input: {}, config: firstGate.config };
    const first = await json<RunJson>(await post(`/threads/${threadId}/runs`, slow));
    const rejected = await post(`/threads/${threadId}/runs`, { ...slow, multitask_strategy: "reject" });
    expect(rejected.status).toBe(409);
    expect(await rejected.json()).toEqual({
      detail: "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
    });
    const queued = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, {
        assistant_id: "echo",
        input: human("queued"),
        multitask_strategy: "enqueue",
      }),
    );
    expect((await readRun(threadId, queued.run_id)).status).toBe("pending");
    await open(firstGate);
    expect((await settled(threadId, first.run_id)).status).toBe("success");
    expect((await settled(threadId, queued.run_id)).status).toBe("success");

    // The runs interrupted and rolled back are held at gates never opened.
    const held = { assistant_id: "steps", input: {} };
    const running = await json<RunJson>(await post(`/threads/${threadId}/runs`, { ...held, config: gate().config }));
    await started(threadId, running.run_id);
    const interrupter = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { ...held, multitask_strategy: "interrupt" }),
    );
    expect((await settled(threadId, running.run_id)).status).toBe("interrupted");
    expect((await settled(threadId, interrupter.run_id)).status).toBe("success");

    const doomed = await json<RunJson>(await post(`/threads/${threadId}/runs`, { ...held, config: gate().config }));
    await started(threadId, doomed.run_id);
    const roller = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { ...held, multitask_strategy: "rollback" }),
    );
    expect((await settled(threadId, roller.run_id)).status).toBe("success");
    expect((await call(`/threads/${threadId}/runs/${doomed.run_id}`)).status).toBe(404);
  });

  it("delays a run with after_seconds", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("later"), after_seconds: 30 }),
    );
    // Time itself is under test: a run due in 30 s has not started 100 ms later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await json<RunJson>(await call(`/threads/${threadId}/runs/${run.run_id}`))).status).toBe("pending");
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("busy");
  });
});

describe("subgraphs and the config nodes see", () => {
  it("names subgraph events <mode>|<node>:<task id> with stream_subgraphs", async () => {
    const threadId = await newThread();
    const { events } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "nested",
      input: {},
      stream_mode: ["updates", "values"],
      stream_subgraphs: true,
    });
    const sub = events.filter((e) => e.event.includes("|"));
    expect(sub.length).toBeGreaterThan(0);
    for (const e of sub) expect(e.event).toMatch(/^(updates|values)\|child:[0-9a-f-]+$/);
    expect(sub.some((e) => e.event.startsWith("updates|") && (e.data as Record<string, unknown>).inner)).toBe(true);
    // Root events keep their plain names; without stream_subgraphs no subgraph event is sent.
    expect(events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object)[0])).toEqual([
      "observe",
      "child",
    ]);
    const { events: plain } = await stream(`/threads/${threadId}/runs/stream`, {
      assistant_id: "nested",
      input: {},
      stream_mode: ["updates"],
    });
    expect(plain.some((e) => e.event.includes("|"))).toBe(false);
  });

  it("gives nodes the thread, run, assistant, graph, user and x- headers in config.configurable", async () => {
    const threadId = await newThread();
    const response = await call(`/threads/${threadId}/runs/wait`, {
      method: "POST",
      json: { assistant_id: "nested", input: {}, metadata: { origin: "test" } },
      headers: { "X-Customer-Id": "c-42", "X-Api-Key-Not": "copied" },
    });
    const runId = response.headers.get("content-location")!.split("/").pop();
    const { seen } = await json<{ seen: Record<string, unknown> }>(response);
    expect(seen).toMatchObject({
      thread_id: threadId,
      run_id: runId,
      graph_id: "nested",
      assistant_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: "bootstrap",
      "x-customer-id": "c-42",
      metadata_run_id: runId,
    });
    expect(seen).not.toHaveProperty("x-api-key");
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(run.metadata).toMatchObject({ origin: "test", created_by: "system" });
  });

  // The keys a client must not set: the auth user (graphs trust it) and the run's own ids.
  const forged = {
    langgraph_auth_user: { identity: "admin", permissions: ["*"] },
    platform_auth_user: { identity: "admin", permissions: ["*"] },
    langgraph_auth_user_id: "admin",
    langgraph_auth_permissions: ["*"],
    thread_id: "someone-elses-thread",
    run_id: "forged-run",
    assistant_id: "forged-assistant",
    graph_id: "forged-graph",
    __pregel_forged: "internal",
  };
  const expectServerValues = (seen: Record<string, unknown>, threadId: string) => {
    expect(seen).toMatchObject({ thread_id: threadId, graph_id: "nested", auth_identity: null, user_id: "bootstrap" });
    expect(seen.run_id).toBe(seen.metadata_run_id);
    expect(seen.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).not.toHaveProperty("langgraph_auth_user_id");
    expect(seen).not.toHaveProperty("__pregel_forged");
  };

  it("a request cannot set the auth user or the run's ids in config.configurable", async () => {
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: "nested",
      input: {},
      config: { configurable: { ...forged, tone: "kept" } },
    });
    const { seen } = await json<{ seen: Record<string, unknown> }>(response);
    expectServerValues(seen, threadId);
    expect(seen.tone).toBe("kept");
    // Neither the run nor the thread keeps the forged keys.
    const [run] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(Object.keys(run.kwargs.config.configurable as object).sort()).toEqual(["tone", "user_id"]);
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).config).toEqual({
      configurable: { tone: "kept" },
    });
    // A later run on the thread (whose config carries the earlier request's) sees none either.
    const again = await json<{ seen: Record<string, unknown> }>(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: "nested", input: {} }),
    );
    expectServerValues(again.seen, threadId);
    expect(again.seen.tone).toBe("kept");
  });

  it("nor can an assistant's config, for runs or for its graph factory", async () => {
    const assistant = await json<{ assistant_id: string }>(
      await post("/assistants", { graph_id: "nested", config: { configurable: { ...forged, tone: "dry" } } }),
    );
    const threadId = await newThread();
    const { seen } = await json<{ seen: Record<string, unknown> }>(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: assistant.assistant_id, input: {} }),
    );
    expectServerValues(seen, threadId);
    expect(seen).toMatchObject({ tone: "dry", assistant_id: assistant.assistant_id });
    const stateless = await json<{ seen: Record<string, unknown> }>(
      await post("/runs/wait", { assistant_id: assistant.assistant_id, input: {} }),
    );
    expect(stateless.seen).toMatchObject({ auth_identity: null, graph_id: "nested", tone: "dry" });
    expect(stateless.seen).not.toHaveProperty("langgraph_auth_user_id");
  });
});

describe("errors", () => {
  it("rejects unknown assistants, unknown threads, bad stream modes and unknown runs", async () => {
    const threadId = await newThread();
    const unknown = await post(`/threads/${threadId}/runs`, { assistant_id: "nope" });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).detail).toBe(
      'No assistant found for "nope". Make sure the assistant ID is for a valid assistant or a valid graph ID.',
    );
    const missing = crypto.randomUUID();
    expect((await post(`/threads/${missing}/runs`, { assistant_id: "echo" })).status).toBe(404);
    const created = await post(`/threads/${missing}/runs/wait`, {
      assistant_id: "echo",
      input: human("made"),
      if_not_exists: "create",
    });
    expect(created.status).toBe(200);
    expect((await call(`/threads/${missing}`)).status).toBe(200);
    expect((await post(`/threads/${threadId}/runs`, { assistant_id: "echo", stream_mode: ["colors"] })).status).toBe(
      422,
    );
    expect(
      (await post(`/threads/${threadId}/runs`, { assistant_id: "echo", multitask_strategy: "shout" })).status,
    ).toBe(422);
    expect((await call(`/threads/${threadId}/runs/${crypto.randomUUID()}/cancel`, { method: "POST" })).status).toBe(
      404,
    );
    expect((await call(`/threads/${threadId}/runs/${crypto.randomUUID()}`)).status).toBe(404);
  });
});

describe("stateless runs", () => {
  it("waits on a temporary thread that is gone afterwards", async () => {
    const response = await post("/runs/wait", { assistant_id: "echo", input: human("no thread") });
    const location = response.headers.get("content-location")!;
    expect(location).toMatch(/^\/runs\/[0-9a-f-]{36}$/);
    expect((await json<{ messages: { content: string }[] }>(response)).messages[1].content).toBe("no thread");
    const runId = location.split("/").pop()!;
    expect((await call(`/threads/${runId}`)).status).toBe(404);
  });

  it("streams, keeps the thread with on_completion keep, and batches", async () => {
    const { events, response } = await stream("/runs/stream", {
      assistant_id: "echo",
      input: human("kept"),
      on_completion: "keep",
    });
    expect(events[0].event).toBe("metadata");
    const runId = response.headers.get("content-location")!.split("/").pop()!;
    expect((await call(`/threads/${runId}`)).status).toBe(200);
    const batch = await json<RunJson[]>(
      await post("/runs/batch", [
        { assistant_id: "echo", input: human("a") },
        { assistant_id: "steps", input: {} },
      ]),
    );
    expect(batch.map((r) => r.status)).toEqual(["pending", "pending"]);
  });

  it("starts no run of a batch that one body makes fail", async () => {
    const body = (marker: string) => ({
      assistant_id: "echo",
      input: human("a"),
      metadata: { marker },
      on_completion: "keep",
      after_seconds: 3600,
    });
    const marked = async (marker: string) =>
      (await json<unknown[]>(await post("/threads/search", { metadata: { marker } }))).length;
    const [refusedMarker, acceptedMarker] = [crypto.randomUUID(), crypto.randomUUID()];
    const refused = await post("/runs/batch", [
      body(refusedMarker),
      { assistant_id: "no-such-assistant", input: human("b") },
    ]);
    expect(refused.status).toBe(404);
    // A batch that is accepted afterwards shows up in the thread index (written after the answer);
    // by then the refused batch's thread would have too, had it been created.
    expect((await post("/runs/batch", [body(acceptedMarker)])).status).toBe(200);
    await expect.poll(() => marked(acceptedMarker), { timeout: 5_000 }).toBe(1);
    expect(await marked(refusedMarker)).toBe(0);
  });
});

describe("recovery after a restart", () => {
  it("resumes a run that a restart left running", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("again"), after_seconds: 3600 }),
    );
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    // What a crash mid-run leaves behind: a row marked running that no instance executes.
    await runInDurableObject(stub, (_instance: ThreadDO, state) => {
      state.storage.sql.exec(
        "UPDATE runs SET status = 'running', attempt = 1, not_before = 0 WHERE run_id = ?",
        run.run_id,
      );
    });
    await runDurableObjectAlarm(stub);
    const done = await settled(threadId, run.run_id);
    expect(done.status).toBe("success");
    expect((await json<ThreadJson>(await call(`/threads/${threadId}`))).status).toBe("idle");
  });

  it("fails a run cut off too often, with a clear message", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("x"), after_seconds: 3600 }),
    );
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    await runInDurableObject(stub, (_instance: ThreadDO, state) => {
      state.storage.sql.exec(
        "UPDATE runs SET status = 'running', attempt = 3, not_before = 0 WHERE run_id = ?",
        run.run_id,
      );
    });
    await runDurableObjectAlarm(stub);
    expect((await settled(threadId, run.run_id)).status).toBe("error");
    const result = await json<{ __error__: { message: string } }>(
      await call(`/threads/${threadId}/runs/${run.run_id}/join`),
    );
    expect(result.__error__.message).toContain("exceeded max attempts");
  });
});

describe("joins that cannot follow their run", () => {
  const joinEvents = async (path: string, key?: string) => {
    const response = await call(path, { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    return parseSse(await response.text());
  };

  it("open the stream and carry one error event naming the 404: unknown run, unknown thread", async () => {
    const threadId = await newThread();
    expect(await joinEvents(`/threads/${threadId}/runs/${crypto.randomUUID()}/stream`)).toEqual([
      { event: "error", data: { error: "HTTPException", message: "404: Run not found" }, id: undefined },
    ]);
    const missing = crypto.randomUUID();
    expect(await joinEvents(`/threads/${missing}/runs/${crypto.randomUUID()}/stream`)).toEqual([
      {
        event: "error",
        data: { error: "HTTPException", message: `404: Thread with ID ${missing} not found` },
        id: undefined,
      },
    ]);
  });

  it("stateless: an unknown run, or another workspace's, is one error event, never an empty stream", async () => {
    const notFound = [
      { event: "error", data: { error: "HTTPException", message: "404: Run not found" }, id: undefined },
    ];
    expect(await joinEvents(`/runs/${crypto.randomUUID()}/stream`)).toEqual(notFound);

    const held = gate();
    const run = await json<RunJson>(
      await post("/runs", { assistant_id: "steps", input: {}, config: held.config, stream_mode: ["updates"] }),
    );
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Elsewhere" } }),
    );
    const { key } = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
    );
    expect(await joinEvents(`/runs/${run.run_id}/stream`, key)).toEqual(notFound);
    // Its own workspace follows it to the end: joined while the run is held, then let go.
    const joined = await call(`/runs/${run.run_id}/stream`);
    expect(joined.status).toBe(200);
    await open(held);
    const own = parseSse(await joined.text());
    expect(
      own
        .filter((e) => e.event === "updates")
        .map((e) => Object.keys(e.data as object)[0])
        .at(-1),
    ).toBe("review");
  });
});

describe("deleting a thread under a waiting join or stream", () => {
  // Held at a gate never opened: the thread's deletion ends the run.
  const slow = () => ({ assistant_id: "steps", input: {}, config: gate().config, stream_mode: ["updates"] });
  const deleted = (threadId: string) => ({
    error: "HTTPException",
    message: `404: Thread ${threadId} was deleted while the run was in progress`,
  });
  /** Deletes the thread once its run has started. */
  const deleteSoon = async (threadId: string) => {
    await until(
      async () => json<RunJson[]>(await call(`/threads/${threadId}/runs`)),
      (runs) => runs.some((run) => run.status === "running"),
    );
    expect((await call(`/threads/${threadId}`, { method: "DELETE" })).status).toBe(200);
  };

  it("ends GET .../join with __error__ and GET .../stream with an error event", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(await post(`/threads/${threadId}/runs`, slow()));
    const joined = call(`/threads/${threadId}/runs/${run.run_id}/join`);
    const streamed = call(`/threads/${threadId}/runs/${run.run_id}/stream`);
    const [join, stream] = await Promise.all([joined, streamed]);
    expect(join.status).toBe(200);
    expect(stream.status).toBe(200);
    await deleteSoon(threadId);
    expect(await json(join)).toEqual({ __error__: deleted(threadId) });
    const events = parseSse(await stream.text());
    expect(events.at(-1)).toMatchObject({ event: "error", data: deleted(threadId) });
    expect(events.filter((e) => e.event === "error")).toHaveLength(1);
  });

  it("ends POST .../runs/stream with an error event and POST .../runs/wait with __error__", async () => {
    const threadId = await newThread();
    const streamed = await post(`/threads/${threadId}/runs/stream`, slow());
    const waited = await post(`/threads/${threadId}/runs/wait`, { ...slow(), multitask_strategy: "enqueue" });
    await deleteSoon(threadId);
    const events = parseSse(await streamed.text());
    expect(events[0].event).toBe("metadata");
    expect(events.at(-1)).toMatchObject({ event: "error", data: deleted(threadId) });
    expect(await json(waited)).toEqual({ __error__: deleted(threadId) });
    expect((await call(`/threads/${threadId}`)).status).toBe(404);
  });

  it("ends the thread-wide stream with the error too, and a thread made again with the id works", async () => {
    const threadId = await newThread();
    const following = await call(`/threads/${threadId}/stream`);
    await post(`/threads/${threadId}/runs`, slow());
    await deleteSoon(threadId);
    expect(parseSse(await following.text()).at(-1)).toMatchObject({ event: "error", data: deleted(threadId) });
    expect((await post("/threads", { thread_id: threadId })).status).toBe(200);
    const again = await post(`/threads/${threadId}/runs/wait`, { assistant_id: "steps", input: {} });
    expect((await json<{ items: string[] }>(again)).items).toEqual(["step1", "step2", "step3", "review"]);
  });
});

describe("POST /runs/cancel with only a status", () => {
  const busyIndexed = (ids: string[]) =>
    until(
      async () => json<ThreadJson[]>(await post("/threads/search", { ids, status: "busy", limit: 100 })),
      (busy) => busy.length === ids.length,
    );

  it("cancels every pending run of the workspace and leaves running ones", async () => {
    const threads = [await newThread(), await newThread()];
    const gates = threads.map(() => gate());
    const running = await Promise.all(
      threads.map(async (id, i) =>
        json<RunJson>(await post(`/threads/${id}/runs`, { assistant_id: "steps", input: {}, config: gates[i].config })),
      ),
    );
    const pending = await Promise.all(
      threads.map(async (id) =>
        json<RunJson>(
          await post(`/threads/${id}/runs`, { assistant_id: "steps", input: {}, multitask_strategy: "enqueue" }),
        ),
      ),
    );
    await busyIndexed(threads);
    for (const [i, threadId] of threads.entries()) await started(threadId, running[i].run_id);
    const response = await post("/runs/cancel", { status: "pending" });
    expect(response.status).toBe(204);
    for (const [i, threadId] of threads.entries()) {
      expect((await json<RunJson>(await call(`/threads/${threadId}/runs/${pending[i].run_id}`))).status).toBe(
        "interrupted",
      );
      await open(gates[i]);
      expect((await settled(threadId, running[i].run_id)).status).toBe("success");
    }
  });

  it("cancels running runs with status running or all, and rejects an empty body", async () => {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "steps", input: {}, config: gate().config }),
    );
    await busyIndexed([threadId]);
    expect((await post("/runs/cancel", { status: "all" })).status).toBe(204);
    expect((await settled(threadId, run.run_id)).status).toBe("interrupted");
    const empty = await post("/runs/cancel", {});
    expect(empty.status).toBe(422);
    expect(JSON.stringify(await json(empty))).toContain("Give thread_id, run_ids or status");
  });
});
