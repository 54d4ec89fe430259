// Runs end to end: the official SDK against `wrangler dev` — every stream mode, wait/join/joinStream,
// cancellation, double texting, interrupts, stateless runs and webhooks (a server killed mid-run is in
// restarts.slow.test.ts).
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, type Run } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Gate, gate, heldAt } from "../fixtures/gate.ts";
import { until } from "../fixtures/until.ts";
import { sharedServer } from "./helpers.ts";

/** What the SDK yields for one SSE event. */
interface StreamEvent {
  id?: string;
  event: string;
  data: unknown;
}

interface StepsValues {
  items: string[];
  ask_human?: boolean;
  answer?: unknown;
  delay_ms?: number;
  [key: string]: unknown;
}

interface Message {
  type: string;
  content: unknown;
  id?: string;
  tool_calls?: { name: string; args: unknown }[];
}

const ALL_STEPS = ["step1", "step2", "step3", "review"];
const ANSWER = "Here is what I found: Cloudflare Workers run JavaScript at the edge in V8 isolates.";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function collect(stream: AsyncIterable<unknown>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event as StreamEvent);
  return events;
}

/** The rejection of an SDK call, as {status, body}. */
async function failure(promise: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  const error = (await promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  )) as { status?: number; text?: string; message: string };
  if (error.status === undefined) throw error;
  let body: unknown = error.text;
  try {
    body = JSON.parse(error.text ?? "");
  } catch {
    // plain text
  }
  return { status: error.status, body };
}

/** Opens a gate of the steps graph (test/fixtures/gate.ts). */
const openGate = (client: Client, g: Gate) => client.store.putItem(g.opening.namespace, g.opening.key, g.opening.value);

const content = (m: { content: unknown }) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** A local HTTP receiver for webhooks; `/flaky...` paths answer 500 to their first request. */
async function startReceiver() {
  const received: { path: string; body: Record<string, unknown> }[] = [];
  const attempts = new Map<string, number>();
  const server: Server = createServer((request: IncomingMessage, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const path = request.url ?? "/";
      const seen = (attempts.get(path) ?? 0) + 1;
      attempts.set(path, seen);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { unparsable: text };
      }
      received.push({ path, body: { ...body, __method: request.method } });
      const fail = path.startsWith("/flaky") && seen === 1;
      response.writeHead(fail ? 500 : 200, { "Content-Type": "application/json" });
      response.end(fail ? '{"error":"try again"}' : "{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    on: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------

describe("runs against the local server", () => {
  const server = sharedServer();
  const client = new Client({ apiUrl: server.url, apiKey: server.apiKey });
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const newThread = async () => (await client.threads.create()).thread_id;
  const getRun = (threadId: string, runId: string) => client.runs.get(threadId, runId);
  const runStatus = async (threadId: string, runId: string) => (await getRun(threadId, runId)).status;
  const waitForStatus = (threadId: string, runId: string, statuses: string[], timeoutMs?: number) =>
    until(
      () => getRun(threadId, runId),
      (run) => statuses.includes(run.status),
      timeoutMs,
    );
  const open = (g: Gate) => openGate(client, g);
  /**
   * A client that opens `g` once the server has answered its next GET .../stream: the join is
   * subscribed to the run by then, so it sees every event from the gate on.
   */
  const joinThenOpen = (g: Gate) =>
    new Client({
      apiUrl: server.url,
      apiKey: server.apiKey,
      callerOptions: {
        fetch: async (url: string, init?: RequestInit) => {
          const response = await fetch(url, init);
          if (init?.method === "GET" && new URL(url).pathname.endsWith("/stream")) await open(g);
          return response;
        },
      },
    });
  const history = (threadId: string) => client.threads.getHistory<StepsValues>(threadId, { limit: 100 });
  const runCheckpoints = async (threadId: string, runId: string) =>
    (await history(threadId)).filter((state) => state.metadata?.run_id === runId);
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: {
        "X-Api-Key": server.apiKey,
        "Content-Type": "application/json",
        ...(init.headers as Record<string, string>),
      },
    });

  describe("background runs: create, get, join, list, delete", () => {
    it("creates a pending run, names it in Content-Location, and joins its final values", async () => {
      const threadId = await newThread();
      let created: { run_id: string; thread_id?: string } | undefined;
      const run = await client.runs.create(threadId, "steps", {
        input: { items: [] },
        metadata: { purpose: "e2e" },
        onRunCreated: (meta) => (created = meta),
      });
      expect(run).toMatchObject({ thread_id: threadId, status: "pending", multitask_strategy: expect.any(String) });
      expect(run.metadata).toMatchObject({ purpose: "e2e" });
      expect(run.run_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created).toEqual({ run_id: run.run_id, thread_id: threadId });

      const values = (await client.runs.join(threadId, run.run_id)) as StepsValues;
      expect(values.items).toEqual(ALL_STEPS);
      const done = await getRun(threadId, run.run_id);
      expect(done).toMatchObject({
        run_id: run.run_id,
        thread_id: threadId,
        status: "success",
        assistant_id: run.assistant_id,
      });
      const thread = await client.threads.get<StepsValues>(threadId);
      expect(thread.status).toBe("idle");
      expect(thread.values.items).toEqual(ALL_STEPS);
      // A second join of a finished run answers at once with the same result.
      expect(await client.runs.join(threadId, run.run_id)).toEqual(values);
    });

    it("sends Content-Location on POST /threads/{id}/runs", async () => {
      const threadId = await newThread();
      const response = await api(`/threads/${threadId}/runs`, {
        method: "POST",
        body: JSON.stringify({ assistant_id: "echo", input: { messages: [] } }),
      });
      expect(response.status).toBe(200);
      const run = (await response.json()) as Run;
      expect(response.headers.get("content-location")).toBe(`/threads/${threadId}/runs/${run.run_id}`);
      await client.runs.join(threadId, run.run_id);
    });

    it("lists runs newest first, with limit, offset and status", async () => {
      const threadId = await newThread();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        await client.runs.wait(threadId, "steps", {
          input: { items: [] },
          onRunCreated: ({ run_id }) => ids.push(run_id),
        });
      }
      const third = await client.runs.create(threadId, "steps", { input: { items: [] }, config: gate().config });
      ids.push(third.run_id);
      await client.runs.cancel(threadId, third.run_id, true, "interrupt");
      expect(await runStatus(threadId, third.run_id)).toBe("interrupted");

      const newestFirst = [...ids].reverse();
      expect((await client.runs.list(threadId)).map((r) => r.run_id)).toEqual(newestFirst);
      expect((await client.runs.list(threadId, { limit: 2 })).map((r) => r.run_id)).toEqual(newestFirst.slice(0, 2));
      expect((await client.runs.list(threadId, { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual([
        newestFirst[1],
      ]);
      expect((await client.runs.list(threadId, { offset: 3 })).map((r) => r.run_id)).toEqual([]);
      expect((await client.runs.list(threadId, { status: "success" })).map((r) => r.run_id)).toEqual(
        newestFirst.slice(1),
      );
      expect((await client.runs.list(threadId, { status: "interrupted" })).map((r) => r.run_id)).toEqual([
        third.run_id,
      ]);
      expect(await client.runs.list(threadId, { status: "pending" })).toEqual([]);
    });

    it("deletes a finished run (then get and join answer 404)", async () => {
      const threadId = await newThread();
      const run = await client.runs.create(threadId, "echo", {
        input: { messages: [{ role: "user", content: "bye" }] },
      });
      await client.runs.join(threadId, run.run_id);
      await client.runs.delete(threadId, run.run_id);
      expect(await failure(getRun(threadId, run.run_id))).toEqual({ status: 404, body: { detail: "Run not found" } });
      expect((await failure(client.runs.join(threadId, run.run_id))).status).toBe(404);
      expect(await client.runs.list(threadId)).toEqual([]);
      expect((await failure(client.runs.delete(threadId, run.run_id))).status).toBe(404);
    });
  });

  describe("runs.stream in every mode", () => {
    const echoInput = (text: string) => ({ messages: [{ role: "user", content: text }] });
    const agentInput = { messages: [{ role: "user", content: "tell me about cloudflare" }] };

    it("values: metadata {run_id, attempt} first, numbered ids, the input state then the final state", async () => {
      const threadId = await newThread();
      let created: { run_id: string; thread_id?: string } | undefined;
      const events = await collect(
        client.runs.stream(threadId, "echo", {
          input: echoInput("hello"),
          streamMode: "values",
          onRunCreated: (m) => (created = m),
        }),
      );
      expect(events[0]).toEqual({ id: "0", event: "metadata", data: { run_id: created?.run_id, attempt: 1 } });
      expect(created?.thread_id).toBe(threadId);
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
      expect(events.slice(1).map((e) => e.event)).toEqual(["values", "values"]);
      const [first, last] = [events[1].data as { messages: Message[] }, events[2].data as { messages: Message[] }];
      expect(first.messages.map((m) => [m.type, content(m)])).toEqual([["human", "hello"]]);
      expect(last.messages.map((m) => [m.type, content(m)])).toEqual([
        ["human", "hello"],
        ["ai", "hello"],
      ]);
      const run = await getRun(threadId, created!.run_id);
      expect(run.status).toBe("success");
    });

    it("updates: one event per node with the node's update", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "steps", { input: { items: [] }, streamMode: "updates" }),
      );
      expect(events.map((e) => e.event)).toEqual(["metadata", "updates", "updates", "updates", "updates"]);
      expect(events.slice(1).map((e) => e.data)).toEqual(ALL_STEPS.map((step) => ({ [step]: { items: [step] } })));
    });

    it("messages-tuple: [chunk, metadata] pairs, token by token from the agent's model", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "agent", { input: agentInput, streamMode: "messages-tuple" }),
      );
      const tuples = events.filter((e) => e.event !== "metadata");
      expect(tuples.length).toBeGreaterThan(5);
      expect(new Set(tuples.map((e) => e.event))).toEqual(new Set(["messages"]));
      for (const { data } of tuples) {
        expect(Array.isArray(data) && data.length === 2).toBe(true);
        const [chunk, metadata] = data as [Message, Record<string, unknown>];
        expect(chunk).toHaveProperty("type");
        expect(metadata).toMatchObject({ langgraph_node: expect.any(String), langgraph_step: expect.any(Number) });
      }
      const byId = new Map<string, string>();
      for (const { data } of tuples) {
        const [chunk, metadata] = data as [Message, Record<string, unknown>];
        if (metadata.langgraph_node === "agent" && chunk.id)
          byId.set(chunk.id, (byId.get(chunk.id) ?? "") + content(chunk));
      }
      expect([...byId.values()]).toContain(ANSWER);
      // Several tokens of the answer arrive separately.
      const answerId = [...byId].find(([, text]) => text === ANSWER)![0];
      expect(tuples.filter((e) => (e.data as [Message])[0].id === answerId).length).toBeGreaterThan(5);
    });

    it("messages (legacy): messages/metadata, growing messages/partial, messages/complete", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "agent", { input: agentInput, streamMode: "messages" }),
      );
      const names = new Set(events.map((e) => e.event));
      expect(names).toEqual(new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete"]));
      const partials = events.filter((e) => e.event === "messages/partial").map((e) => (e.data as Message[])[0]);
      const answer = partials.filter((m) => content(m).startsWith("Here"));
      expect(answer.length).toBeGreaterThan(5);
      expect(content(answer.at(-1)!)).toBe(ANSWER);
      for (let i = 1; i < answer.length; i++) expect(content(answer[i]).startsWith(content(answer[i - 1]))).toBe(true);
      const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data as Message[]);
      expect(complete.map((m) => m.type)).toEqual(expect.arrayContaining(["ai", "tool"]));
      expect(complete.some((m) => m.type === "ai" && content(m) === ANSWER)).toBe(true);
      const metadataEvent = events.find((e) => e.event === "messages/metadata")!.data as Record<
        string,
        { metadata: unknown }
      >;
      expect(Object.values(metadataEvent)[0]).toHaveProperty("metadata");
    });

    it("debug: checkpoint, task and task_result records", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "echo", { input: echoInput("dbg"), streamMode: "debug" }),
      );
      const records = events
        .filter((e) => e.event === "debug")
        .map((e) => e.data as { type: string; step: number; timestamp: string; payload: Record<string, unknown> });
      expect(events.filter((e) => e.event !== "debug").map((e) => e.event)).toEqual(["metadata"]);
      expect(new Set(records.map((r) => r.type))).toEqual(new Set(["checkpoint", "task", "task_result"]));
      for (const record of records)
        expect(record).toMatchObject({
          step: expect.any(Number),
          timestamp: expect.any(String),
          payload: expect.any(Object),
        });
      expect(records.find((r) => r.type === "task")!.payload).toMatchObject({
        name: "respond",
        triggers: expect.any(Array),
      });
      expect(records.find((r) => r.type === "task_result")!.payload).toMatchObject({
        name: "respond",
        result: expect.anything(),
      });
      const lastCheckpoint = records.filter((r) => r.type === "checkpoint").at(-1)!.payload;
      expect(lastCheckpoint).toMatchObject({ next: [], values: { messages: expect.any(Array) } });
    });

    it("events: LangChain stream events, including the model's tokens and the tool", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "agent", { input: agentInput, streamMode: "events" }),
      );
      const records = events
        .filter((e) => e.event === "events")
        .map((e) => e.data as Record<string, unknown> & { event: string; name: string });
      expect(events.filter((e) => e.event !== "events").map((e) => e.event)).toEqual(["metadata"]);
      for (const record of records) {
        expect(record).toMatchObject({
          event: expect.stringMatching(/^on_/),
          name: expect.any(String),
          run_id: expect.any(String),
          tags: expect.any(Array),
          metadata: expect.any(Object),
        });
      }
      const kinds = new Set(records.map((r) => r.event));
      for (const kind of [
        "on_chain_start",
        "on_chain_end",
        "on_chat_model_start",
        "on_chat_model_stream",
        "on_chat_model_end",
        "on_tool_start",
        "on_tool_end",
      ]) {
        expect(kinds).toContain(kind);
      }
      expect(records.find((r) => r.event === "on_tool_end")).toMatchObject({ name: "search" });
      const tokens = records
        .filter((r) => r.event === "on_chat_model_stream")
        .map((r) => content((r.data as { chunk: Message }).chunk))
        .join("");
      expect(tokens).toContain(ANSWER);
    });

    it("tasks: a start and a result per node", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "steps", { input: { items: [] }, streamMode: "tasks" }),
      );
      const tasks = events.filter((e) => e.event === "tasks").map((e) => e.data as Record<string, unknown>);
      expect(tasks.map((t) => [t.name, "result" in t ? "result" : "start"])).toEqual(
        ALL_STEPS.flatMap((step) => [
          [step, "start"],
          [step, "result"],
        ]),
      );
      expect(tasks[0]).toMatchObject({
        id: expect.any(String),
        name: "step1",
        input: { items: [] },
        triggers: expect.any(Array),
      });
      expect(tasks[1]).toMatchObject({ id: tasks[0].id, name: "step1", interrupts: [] });
      expect(JSON.stringify(tasks[1].result)).toContain("step1");
    });

    it("checkpoints: {values, metadata, next, config, tasks} per checkpoint", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "steps", { input: { items: [] }, streamMode: "checkpoints" }),
      );
      const checkpoints = events
        .filter((e) => e.event === "checkpoints")
        .map((e) => e.data as Record<string, unknown> & { values: StepsValues; next: string[] });
      expect(checkpoints.length).toBe(6); // input, then after __start__ and each of the four nodes
      for (const checkpoint of checkpoints) {
        expect(checkpoint).toMatchObject({
          values: expect.any(Object),
          metadata: expect.any(Object),
          next: expect.any(Array),
          config: expect.any(Object),
          tasks: expect.any(Array),
        });
      }
      expect(checkpoints.map((c) => c.next)).toEqual([["__start__"], ["step1"], ["step2"], ["step3"], ["review"], []]);
      expect(checkpoints.at(-1)!.values.items).toEqual(ALL_STEPS);
    });

    it("checkpoint and debug payloads name the checkpoint, never the run's live config or callback handlers", async () => {
      // With a messages mode on, LangGraph adds its StreamMessagesHandler to config.callbacks; that
      // handler (and its record of every message seen) must not be serialised into the events, nor
      // anything else of the run's configurable.
      const events = await collect(
        client.runs.stream(await newThread(), "agent", {
          input: agentInput,
          streamMode: ["checkpoints", "debug", "messages-tuple"],
        }),
      );
      const checkpoints = events
        .filter((e) => e.event === "checkpoints")
        .map((e) => e.data as { config: Record<string, unknown>; checkpoint: unknown });
      const debug = events
        .filter((e) => e.event === "debug" && (e.data as { type: string }).type === "checkpoint")
        .map((e) => (e.data as { payload: Record<string, unknown> }).payload);
      expect(checkpoints.length).toBeGreaterThan(0);
      for (const payload of checkpoints) expect(payload.config).toEqual({ configurable: payload.checkpoint });
      for (const payload of debug) {
        expect(payload.checkpoint).toMatchObject({ checkpoint_ns: "", checkpoint_id: expect.any(String) });
        expect(payload).not.toHaveProperty("config");
      }
      expect(JSON.stringify([...checkpoints, ...debug])).not.toContain("callbacks");
    });

    it("tools: on_tool_start and on_tool_end around the agent's search", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "agent", { input: agentInput, streamMode: "tools" as never }),
      );
      const tools = events.filter((e) => e.event === "tools").map((e) => e.data as Record<string, unknown>);
      expect(tools.map((t) => t.event)).toEqual(["on_tool_start", "on_tool_end"]);
      expect(tools[0]).toMatchObject({ name: "search", toolCallId: expect.any(String) });
      expect(tools[1]).toMatchObject({ name: "search", toolCallId: tools[0].toolCallId });
      expect(JSON.stringify(tools[1].output)).toContain("Cloudflare Workers run JavaScript");
    });

    it("several modes at once, with custom (unused by these graphs) and streamSubgraphs: root event names stay plain", async () => {
      const modes = ["values", "updates", "debug", "tasks", "checkpoints", "custom"] as const;
      const events = await collect(
        client.runs.stream(await newThread(), "steps", {
          input: { items: [] },
          streamMode: [...modes],
          streamSubgraphs: true,
        }),
      );
      expect(events[0].event).toBe("metadata");
      expect(new Set(events.map((e) => e.event))).toEqual(
        new Set(["metadata", "values", "updates", "debug", "tasks", "checkpoints"]),
      );
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i)));
      const values = events.filter((e) => e.event === "values");
      expect((values.at(-1)!.data as StepsValues).items).toEqual(ALL_STEPS);
      expect(events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object)[0])).toEqual(
        ALL_STEPS,
      );
    });

    it("the SSE wire format: headers, `event:`/`data:`/`id:` lines, metadata first", async () => {
      const threadId = await newThread();
      const response = await api(`/threads/${threadId}/runs/stream`, {
        method: "POST",
        body: JSON.stringify({ assistant_id: "echo", input: echoInput("wire"), stream_mode: ["values"] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const location = response.headers.get("content-location");
      expect(location).toMatch(new RegExp(`^/threads/${threadId}/runs/[0-9a-f-]{36}$`));
      const runId = location!.split("/").at(-1)!;
      const text = await response.text();
      const frames = text.split("\n\n").filter((frame) => frame.trim() && !frame.startsWith(":"));
      expect(frames[0]).toBe(`event: metadata\ndata: ${JSON.stringify({ run_id: runId, attempt: 1 })}\nid: 0`);
      frames.forEach((frame, i) =>
        expect(frame).toMatch(new RegExp(`^event: (metadata|values)\\ndata: .+\\nid: ${i}$`)),
      );
      expect(frames).toHaveLength(3);
    });
  });

  describe("wait, joinStream and resumable streams", () => {
    it("joinStream with lastEventId replays exactly the later events, with their ids, mid-run and after the end", async () => {
      const threadId = await newThread();
      const original: StreamEvent[] = [];
      let runId = "";
      let midRun: Promise<StreamEvent[]> | undefined;
      // The run waits at step3's gate after event 5 (step2's values); the join opens it once it has
      // replayed up to there, so it is live for the rest.
      const held = gate("step3");
      const joinMidRun = async () => {
        const joined: StreamEvent[] = [];
        for await (const event of client.runs.joinStream(threadId, runId, { lastEventId: "1" })) {
          joined.push(event as StreamEvent);
          if (event.id === "5") await open(held);
        }
        return joined;
      };
      for await (const event of client.runs.stream(threadId, "steps", {
        input: { items: [] },
        config: held.config,
        streamMode: ["values", "updates"],
        streamResumable: true,
      })) {
        original.push(event as StreamEvent);
        if (event.event === "metadata") runId = (event.data as { run_id: string }).run_id;
        if (event.id === "3" && !midRun) midRun = joinMidRun();
      }
      expect(original.map((e) => e.id)).toEqual(original.map((_, i) => String(i)));
      expect(original.length).toBe(1 + 5 + 4); // metadata, 5 values, 4 updates
      expect(midRun).toBeDefined();
      expect(await midRun).toEqual(original.slice(2));

      const afterEnd = await collect(client.runs.joinStream(threadId, runId, { lastEventId: "4" }));
      expect(afterEnd).toEqual(original.slice(5));
      const fromStart = await collect(client.runs.joinStream(threadId, runId, { lastEventId: "-1" }));
      expect(fromStart).toEqual(original);
    });

    it("joinStream of a running background run delivers its remaining events and ends with the run", async () => {
      const threadId = await newThread();
      // Held at step3's gate until the join is subscribed: it sees step3 and review.
      const held = gate("step3");
      const run = await client.runs.create(threadId, "steps", {
        input: { items: [] },
        config: held.config,
        streamMode: "updates",
      });
      const events = await collect(joinThenOpen(held).runs.joinStream(threadId, run.run_id));
      const updates = events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object)[0]);
      expect(updates.slice(-2)).toEqual(["step3", "review"]);
      expect(ALL_STEPS.slice(-updates.length)).toEqual(updates);
      expect(await runStatus(threadId, run.run_id)).toBe("success");
    });

    it("runs.wait returns the final values", async () => {
      const threadId = await newThread();
      const values = (await client.runs.wait(threadId, "echo", {
        input: { messages: [{ role: "user", content: "ping" }] },
      })) as { messages: Message[] };
      expect(values.messages.map((m) => [m.type, content(m)])).toEqual([
        ["human", "ping"],
        ["ai", "ping"],
      ]);
      expect(values).not.toHaveProperty("__interrupt__");
    });
  });

  describe("large inputs (the default 10 MiB body limit)", () => {
    it("an 8 MB input runs: /wait gives the whole 16 MB state back, and so do the thread and its state", async () => {
      const threadId = await newThread();
      const text = "large input ".repeat(Math.ceil((8 * 1000 * 1000) / 12));
      const response = await api(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: JSON.stringify({ assistant_id: "echo", input: { messages: [{ role: "user", content: text }] } }),
      });
      expect(response.status).toBe(200);
      const values = (await response.json()) as { messages: Message[] };
      expect(values.messages.map((m) => [m.type, (m.content as string).length])).toEqual([
        ["human", text.length],
        ["ai", text.length],
      ]);
      expect(values.messages[1].content).toBe(text);
      const [run] = await client.runs.list(threadId);
      expect(run.status).toBe("success");
      expect((await client.threads.get(threadId)).values).toEqual(values);
      expect((await client.threads.getState(threadId)).values).toEqual(values);

      // The run's trace is kept whole: fields over MAX_TRACED_RUN_BYTES (192 KiB) stored as markers.
      const runsOfTrace = await until(
        async () => {
          const sessions = (await (await api("/api/v1/sessions?name=agent-runs")).json()) as { id: string }[];
          if (!sessions[0]) return [];
          const filter = `and(eq(metadata_key, "run_id"), eq(metadata_value, "${run.run_id}"))`;
          const query = await api("/api/v1/runs/query", {
            method: "POST",
            body: JSON.stringify({ session: [sessions[0].id], filter, limit: 100 }),
          });
          return (
            (await query.json()) as {
              runs: { name: string; is_root: boolean; status: string; inputs: unknown; outputs: unknown }[];
            }
          ).runs;
        },
        (found) => found.some((r) => r.is_root),
      );
      const root = runsOfTrace.find((r) => r.is_root)!;
      expect(root).toMatchObject({ name: "LangGraph", status: "success" });
      expect(root.inputs).toEqual({
        __truncated__: expect.stringMatching(/^inputs of \d+ bytes exceed the 196608-byte trace limit$/),
      });
      expect(runsOfTrace.map((r) => r.name)).toContain("respond");
    }, 60_000);

    it("a thread with three 8 MB runs: list runs, history, state, join, get, patch and copy answer 200 with everything", async () => {
      // Each run adds a human and an AI message of 8 MB: the state ends at 48 MB, and a page of runs,
      // the history and the state are each more than one 32 MiB Durable Object RPC result.
      const threadId = await newThread();
      const texts = ["first", "second", "third"].map((word) =>
        `${word} large input `.repeat(Math.ceil((8 * 1000 * 1000) / (word.length + 13))),
      );
      const runIds: string[] = [];
      for (const text of texts) {
        const response = await api(`/threads/${threadId}/runs/wait`, {
          method: "POST",
          body: JSON.stringify({ assistant_id: "echo", input: { messages: [{ role: "user", content: text }] } }),
        });
        expect(response.status).toBe(200);
        runIds.unshift(response.headers.get("Content-Location")!.split("/").pop()!);
        await response.text();
      }
      const expected = texts.flatMap((text) => [
        ["human", text],
        ["ai", text],
      ]);
      const shape = (values: { messages: Message[] }) => values.messages.map((m) => [m.type, m.content]);

      const listed = await api(`/threads/${threadId}/runs?limit=10`);
      expect(listed.status).toBe(200);
      const runs = (await listed.json()) as (Run & { kwargs: { input: { messages: Message[] } } })[];
      expect(runs.map((run) => [run.run_id, run.status])).toEqual(runIds.map((id) => [id, "success"]));
      expect(runs.map((run) => run.kwargs.input.messages[0].content)).toEqual([...texts].reverse());

      const state = await api(`/threads/${threadId}/state`);
      expect(state.status).toBe(200);
      expect(shape(((await state.json()) as { values: { messages: Message[] } }).values)).toEqual(expected);

      const joined = await api(`/threads/${threadId}/runs/${runIds[0]}/join`);
      expect(joined.status).toBe(200);
      expect(shape((await joined.json()) as { messages: Message[] })).toEqual(expected);

      // The last run's three checkpoints: 40, 40 and 48 MB of state.
      const history = await api(`/threads/${threadId}/history`, { method: "POST", body: JSON.stringify({ limit: 3 }) });
      expect(history.status).toBe(200);
      const states = (await history.json()) as { values: { messages: Message[] }; metadata: { run_id: string } }[];
      expect(states.map((s) => [s.metadata.run_id, s.values.messages.length])).toEqual([
        [runIds[0], 6],
        [runIds[0], 5],
        [runIds[0], 4],
      ]);
      expect(shape(states[0].values)).toEqual(expected);

      const thread = await api(`/threads/${threadId}`);
      expect(thread.status).toBe(200);
      expect(shape(((await thread.json()) as { values: { messages: Message[] } }).values)).toEqual(expected);

      const patched = await api(`/threads/${threadId}`, {
        method: "PATCH",
        body: JSON.stringify({ metadata: { large: true } }),
      });
      expect(patched.status).toBe(200);
      const patchedThread = (await patched.json()) as {
        metadata: Record<string, unknown>;
        values: { messages: Message[] };
      };
      expect(patchedThread.metadata).toMatchObject({ large: true });
      expect(shape(patchedThread.values)).toEqual(expected);

      const copied = await api(`/threads/${threadId}/copy`, { method: "POST" });
      expect(copied.status).toBe(200);
      const copy = (await copied.json()) as { thread_id: string; values: { messages: Message[] } };
      expect(copy.thread_id).not.toBe(threadId);
      expect(shape(copy.values)).toEqual(expected);
      const copyState = await api(`/threads/${copy.thread_id}/state`);
      expect(copyState.status).toBe(200);
      expect(shape(((await copyState.json()) as { values: { messages: Message[] } }).values)).toEqual(expected);
    }, 180_000);

    it("cancelling four pending 9 MB runs of a thread at once answers 204 and cancels them all", async () => {
      // 36 MB of runs: more than one 32 MiB Durable Object RPC result.
      const threadId = await newThread();
      const text = "queued input ".repeat(Math.ceil((9 * 1000 * 1000) / 13));
      const created: string[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await api(`/threads/${threadId}/runs`, {
          method: "POST",
          body: JSON.stringify({
            assistant_id: "echo",
            input: { messages: [{ role: "user", content: text }] },
            after_seconds: 3600,
            multitask_strategy: "enqueue",
          }),
        });
        expect(response.status).toBe(200);
        created.push(((await response.json()) as Run).run_id);
      }
      const cancelled = await api(`/runs/cancel?action=interrupt`, {
        method: "POST",
        body: JSON.stringify({ thread_id: threadId, status: "all" }),
      });
      expect(cancelled.status).toBe(204);
      for (const runId of created) expect(await runStatus(threadId, runId)).toBe("interrupted");
    }, 120_000);

    it("an input over the body limit gets 413 naming the limit, and leaves no run behind", async () => {
      const threadId = await newThread();
      const started = Date.now();
      const response = await api(`/threads/${threadId}/runs/wait`, {
        method: "POST",
        body: JSON.stringify({
          assistant_id: "echo",
          input: { messages: [{ role: "user", content: "x".repeat(10 * 1024 * 1024) }] },
        }),
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({ detail: "Request body is larger than the limit of 10485760 bytes" });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await client.runs.list(threadId)).toEqual([]);
    });
  });

  describe("interrupt() and Command({resume})", () => {
    it("pauses on review (thread interrupted, /wait returns __interrupt__), then resumes to success", async () => {
      const threadId = await newThread();
      let runId = "";
      const paused = (await client.runs.wait(threadId, "steps", {
        input: { items: [], ask_human: true },
        onRunCreated: (m) => (runId = m.run_id),
      })) as StepsValues & { __interrupt__: { id: string; value: unknown }[] };
      expect(paused.items).toEqual(["step1", "step2", "step3"]);
      expect(paused.__interrupt__).toEqual([
        { id: expect.any(String), value: { question: "approve?", items: ["step1", "step2", "step3"] } },
      ]);
      expect(await runStatus(threadId, runId)).toBe("success");

      const thread = await client.threads.get<StepsValues>(threadId);
      expect(thread.status).toBe("interrupted");
      const pending = Object.values(thread.interrupts).flat();
      expect(pending).toEqual([
        { id: paused.__interrupt__[0].id, value: { question: "approve?", items: ["step1", "step2", "step3"] } },
      ]);
      const state = await client.threads.getState<StepsValues>(threadId);
      expect(state.next).toEqual(["review"]);

      const resumed = (await client.runs.wait(threadId, "steps", {
        command: { resume: { approved: true } },
      })) as StepsValues;
      expect(resumed).not.toHaveProperty("__interrupt__");
      expect(resumed.items).toEqual(ALL_STEPS);
      expect(resumed.answer).toEqual({ approved: true });
      const after = await client.threads.get<StepsValues>(threadId);
      expect(after.status).toBe("idle");
      expect(after.interrupts).toEqual({});
      expect(after.values).toMatchObject({ items: ALL_STEPS, answer: { approved: true } });
      expect((await client.runs.list(threadId)).map((r) => r.status)).toEqual(["success", "success"]);
    });

    it("static breakpoints: interrupt_before pauses the thread, input null continues", async () => {
      const threadId = await newThread();
      const paused = (await client.runs.wait(threadId, "steps", {
        input: { items: [] },
        interruptBefore: ["review"],
      })) as StepsValues;
      expect(paused.items).toEqual(["step1", "step2", "step3"]);
      expect((await client.threads.get(threadId)).status).toBe("interrupted");
      expect((await client.threads.getState(threadId)).next).toEqual(["review"]);
      const resumed = (await client.runs.wait(threadId, "steps", { input: null })) as StepsValues;
      expect(resumed.items).toEqual(ALL_STEPS);
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });

    it("streams the interrupt as an updates event and a values event", async () => {
      const events = await collect(
        client.runs.stream(await newThread(), "steps", {
          input: { items: [], ask_human: true },
          streamMode: ["values", "updates"],
        }),
      );
      const interruptEvents = events.filter((e) => e.data && typeof e.data === "object" && "__interrupt__" in e.data);
      expect(interruptEvents.map((e) => e.event)).toEqual(["updates", "values"]);
      for (const event of interruptEvents) {
        expect((event.data as { __interrupt__: { value: unknown }[] }).__interrupt__[0].value).toEqual({
          question: "approve?",
          items: ["step1", "step2", "step3"],
        });
      }
    });
  });

  describe("runs.cancel", () => {
    it("interrupt keeps the steps already done; the run ends interrupted, the thread idle", async () => {
      const threadId = await newThread();
      let runId = "";
      const events: StreamEvent[] = [];
      // Held at step2's gate: the cancel comes while step2 waits.
      const held = gate("step2");
      for await (const event of client.runs.stream(threadId, "steps", {
        input: { items: [] },
        config: held.config,
        streamMode: "updates",
      })) {
        events.push(event as StreamEvent);
        if (event.event === "metadata") runId = (event.data as { run_id: string }).run_id;
        if (event.event === "updates") await client.runs.cancel(threadId, runId, true, "interrupt");
      }
      expect(events.filter((e) => e.event === "updates").map((e) => e.data)).toEqual([{ step1: { items: ["step1"] } }]);
      expect(events.some((e) => e.event === "error")).toBe(false);
      const run = await getRun(threadId, runId);
      expect(run.status).toBe("interrupted");
      const thread = await client.threads.get<StepsValues>(threadId);
      expect(thread.status).toBe("idle");
      const state = await client.threads.getState<StepsValues>(threadId);
      expect(state.values.items).toEqual(["step1"]);
      // The thread accepts the next run (which inherits the request's gate) and continues from the kept state.
      await open(held);
      const values = (await client.runs.wait(threadId, "steps", { input: { items: [] } })) as StepsValues;
      expect(values.items).toEqual(["step1", ...ALL_STEPS]);
    });

    it("rollback deletes the run and its checkpoints: history is back to before the run", async () => {
      const threadId = await newThread();
      await client.runs.wait(threadId, "steps", { input: { items: [] } });
      const before = await history(threadId);
      const run = await client.runs.create(threadId, "steps", {
        input: { items: ["extra"] },
        config: gate("step2").config,
      });
      // Cancel once the run has written checkpoints of its own (it then waits at step2's gate).
      await until(
        () => runCheckpoints(threadId, run.run_id),
        (states) => states.length >= 2,
      );
      await client.runs.cancel(threadId, run.run_id, true, "rollback");

      expect((await failure(getRun(threadId, run.run_id))).status).toBe(404);
      expect((await client.runs.list(threadId)).map((r) => r.run_id)).not.toContain(run.run_id);
      const after = await history(threadId);
      expect(after.map((s) => s.checkpoint.checkpoint_id)).toEqual(before.map((s) => s.checkpoint.checkpoint_id));
      const thread = await client.threads.get<StepsValues>(threadId);
      expect(thread.status).toBe("idle");
      expect(thread.values.items).toEqual(ALL_STEPS);
      expect((await client.threads.getState<StepsValues>(threadId)).values.items).toEqual(ALL_STEPS);
    });

    it("a pending (queued) run cancelled with interrupt never starts", async () => {
      const threadId = await newThread();
      const held = gate();
      const first = await client.runs.create(threadId, "steps", { input: { items: [] }, config: held.config });
      const second = await client.runs.create(threadId, "steps", {
        input: { items: ["queued"] },
        multitaskStrategy: "enqueue",
      });
      expect(await runStatus(threadId, second.run_id)).toBe("pending");
      await client.runs.cancel(threadId, second.run_id, false, "interrupt");
      expect(await runStatus(threadId, second.run_id)).toBe("interrupted");
      await open(held);
      await client.runs.join(threadId, first.run_id);
      expect((await client.threads.getState<StepsValues>(threadId)).values.items).toEqual(ALL_STEPS);
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });

    it("cancel without wait answers at once; the run then ends interrupted", async () => {
      const threadId = await newThread();
      // Held at a gate never opened: the run would not end by itself.
      const run = await client.runs.create(threadId, "steps", { input: { items: [] }, config: gate().config });
      await waitForStatus(threadId, run.run_id, ["running"]);
      const started = Date.now();
      await client.runs.cancel(threadId, run.run_id, false, "interrupt");
      expect(Date.now() - started).toBeLessThan(1_000);
      await waitForStatus(threadId, run.run_id, ["interrupted"], 5_000);
      await until(
        () => client.threads.get(threadId),
        (thread) => thread.status === "idle",
        5_000,
      );
    });

    it("rollback of a queued run deletes it before it starts", async () => {
      const threadId = await newThread();
      const held = gate();
      const first = await client.runs.create(threadId, "steps", { input: { items: [] }, config: held.config });
      const second = await client.runs.create(threadId, "steps", {
        input: { items: ["queued"] },
        multitaskStrategy: "enqueue",
      });
      await client.runs.cancel(threadId, second.run_id, true, "rollback");
      expect((await failure(getRun(threadId, second.run_id))).status).toBe(404);
      await open(held);
      await client.runs.join(threadId, first.run_id);
      expect((await client.runs.list(threadId)).map((r) => [r.run_id, r.status])).toEqual([[first.run_id, "success"]]);
      expect((await client.threads.getState<StepsValues>(threadId)).values.items).toEqual(ALL_STEPS);
    });

    it("on_disconnect=cancel interrupts the run when the streaming client goes away", async () => {
      const threadId = await newThread();
      const controller = new AbortController();
      let runId = "";
      // The server learns of the disconnect when it next writes: step2's update, once its gate opens
      // after the client has gone; step3 waits at a gate never opened, so the cancel finds the run busy.
      const second = gate("step2");
      for await (const event of client.runs.stream(threadId, "steps", {
        input: { items: [] },
        config: heldAt(second, gate("step3")),
        streamMode: "updates",
        onDisconnect: "cancel",
        signal: controller.signal,
      })) {
        if (event.event === "metadata") runId = (event.data as { run_id: string }).run_id;
        if (event.event === "updates") {
          controller.abort();
          break;
        }
      }
      await open(second);
      const run = await waitForStatus(threadId, runId, ["interrupted", "success", "error"], 10_000);
      expect(run.status).toBe("interrupted");
      expect((await client.threads.getState<StepsValues>(threadId)).values.items).not.toContain("review");
    });

    it("a join waiting on a run that is then rolled back gets a complete answer, not a cut-off response", async () => {
      const threadId = await newThread();
      const run = await client.runs.create(threadId, "steps", { input: { items: [] }, config: gate().config });
      const joined = client.runs.join(threadId, run.run_id).then(
        (value) => ({ value, status: 200, message: "" }),
        (error: { status?: number; message: string }) => ({
          value: undefined,
          status: error.status,
          message: String(error.message),
        }),
      );
      await waitForStatus(threadId, run.run_id, ["running"]);
      await client.runs.cancel(threadId, run.run_id, true, "rollback");
      const result = await joined;
      // Either an HTTP 404, or a JSON body reporting the missing run (as /wait does with __error__) —
      // never a 200 whose body is cut off ("TypeError: terminated").
      expect(result.message).not.toMatch(/terminated/);
      expect(result.status === 404 || /not found/i.test(JSON.stringify(result.value))).toBe(true);
    });

    it("cancel of an unknown run answers 404", async () => {
      const threadId = await newThread();
      const missing = crypto.randomUUID();
      expect(await failure(client.runs.cancel(threadId, missing))).toEqual({
        status: 404,
        body: { detail: "Run not found" },
      });
    });
  });

  describe("double texting (multitask strategies)", () => {
    // The first run is held at a gate: busy for as long as the test needs.
    const slow = { items: [] as string[] };

    it("reject: a second run on a busy thread answers 409 and is not created", async () => {
      const threadId = await newThread();
      const held = gate();
      const first = await client.runs.create(threadId, "steps", { input: slow, config: held.config });
      const refused = await failure(
        client.runs.create(threadId, "steps", { input: { items: [] }, multitaskStrategy: "reject" }),
      );
      expect(refused.status).toBe(409);
      expect(JSON.stringify(refused.body)).toContain("Thread is already running a task");
      await open(held);
      await client.runs.join(threadId, first.run_id);
      expect((await client.runs.list(threadId)).map((r) => r.run_id)).toEqual([first.run_id]);
      expect(await runStatus(threadId, first.run_id)).toBe("success");
    });

    it("enqueue: the second run waits, then runs after the first", async () => {
      const threadId = await newThread();
      const held = gate();
      const first = await client.runs.create(threadId, "steps", { input: slow, config: held.config });
      const second = await client.runs.create(threadId, "steps", {
        input: { items: ["second"] },
        multitaskStrategy: "enqueue",
      });
      expect(second.status).toBe("pending");
      await waitForStatus(threadId, first.run_id, ["running"]);
      expect(await runStatus(threadId, second.run_id)).toBe("pending");
      expect((await client.threads.get(threadId)).status).toBe("busy");
      await open(held);

      const values = (await client.runs.join(threadId, second.run_id)) as StepsValues;
      expect(await runStatus(threadId, first.run_id)).toBe("success");
      expect(await runStatus(threadId, second.run_id)).toBe("success");
      expect(values.items).toEqual([...ALL_STEPS, "second", ...ALL_STEPS]);
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });

    it("interrupt: the first run ends interrupted (its finished steps kept), the second runs", async () => {
      const threadId = await newThread();
      const first = await client.runs.create(threadId, "steps", { input: slow, config: gate("step2").config });
      await until(
        () => runCheckpoints(threadId, first.run_id),
        (states) => states.some((s) => s.values.items?.includes("step1")),
      );
      const second = await client.runs.create(threadId, "steps", {
        input: { items: ["second"] },
        multitaskStrategy: "interrupt",
      });
      const values = (await client.runs.join(threadId, second.run_id)) as StepsValues;
      expect(await runStatus(threadId, first.run_id)).toBe("interrupted");
      expect(await runStatus(threadId, second.run_id)).toBe("success");
      // Run 1 stopped at step2's gate, and run 2 started from what it kept.
      expect(values.items).toEqual(["step1", "second", ...ALL_STEPS]);
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });

    it("rollback: the first run is deleted with its checkpoints, the second runs from the state before it", async () => {
      const threadId = await newThread();
      const first = await client.runs.create(threadId, "steps", { input: slow, config: gate("step2").config });
      await until(
        () => runCheckpoints(threadId, first.run_id),
        (states) => states.some((s) => s.values.items?.includes("step1")),
      );
      const second = await client.runs.create(threadId, "steps", {
        input: { items: ["second"] },
        multitaskStrategy: "rollback",
      });
      const values = (await client.runs.join(threadId, second.run_id)) as StepsValues;
      expect(values.items).toEqual(["second", ...ALL_STEPS]);
      expect((await failure(getRun(threadId, first.run_id))).status).toBe(404);
      expect(await runCheckpoints(threadId, first.run_id)).toEqual([]);
      expect((await client.runs.list(threadId)).map((r) => r.run_id)).toEqual([second.run_id]);
      expect((await client.threads.get(threadId)).status).toBe("idle");
    });
  });

  describe("stateless runs", () => {
    it("runs.wait(null, ...) returns the final values", async () => {
      let created: { run_id: string; thread_id?: string } | undefined;
      const values = (await client.runs.wait(null, "echo", {
        input: { messages: [{ role: "user", content: "stateless" }] },
        onRunCreated: (m) => (created = m),
      })) as { messages: Message[] };
      expect(values.messages.map((m) => [m.type, content(m)])).toEqual([
        ["human", "stateless"],
        ["ai", "stateless"],
      ]);
      expect(created?.run_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created?.thread_id).toBeUndefined();
    });

    it("runs.stream(null, ...) streams metadata then values", async () => {
      let created: { run_id: string } | undefined;
      const events = await collect(
        client.runs.stream(null, "steps", {
          input: { items: [] },
          streamMode: ["values"],
          onRunCreated: (m) => (created = m),
        }),
      );
      expect(events[0]).toMatchObject({ event: "metadata", data: { run_id: created?.run_id, attempt: 1 } });
      expect(events.slice(1).every((e) => e.event === "values")).toBe(true);
      expect((events.at(-1)!.data as StepsValues).items).toEqual(ALL_STEPS);
    });

    it("runs.create(null, ...) runs in the background on a temporary thread, removed when done", async () => {
      // Held at step1's gate until the join is subscribed: it sees every step.
      const held = gate();
      const run = await client.runs.create(null, "steps", {
        input: { items: [] },
        config: held.config,
        streamMode: "updates",
      });
      expect(run).toMatchObject({ status: "pending", thread_id: expect.any(String) });
      const events = await collect(joinThenOpen(held).runs.joinStream(null, run.run_id));
      const updates = events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object)[0]);
      expect(updates).toEqual(ALL_STEPS);
      expect(updates.at(-1)).toBe("review");
      await until(
        () => failure(client.threads.get(run.thread_id)).catch(() => ({ status: 200, body: null })),
        (r) => r.status === 404,
        10_000,
        100,
      );
    });

    it("runs.createBatch creates independent runs, each of which completes (seen through webhooks)", async () => {
      const hook = receiver.url("/batch");
      const runs = await client.runs.createBatch([
        { assistantId: "echo", input: { messages: [{ role: "user", content: "one" }] }, webhook: hook },
        { assistantId: "steps", input: { items: [] }, webhook: hook },
      ] as Parameters<Client["runs"]["createBatch"]>[0]);
      expect(runs).toHaveLength(2);
      expect(runs.map((r) => r.status)).toEqual(["pending", "pending"]);
      expect(new Set(runs.map((r) => r.run_id)).size).toBe(2);
      expect(new Set(runs.map((r) => r.thread_id)).size).toBe(2);
      const delivered = await until(
        async () => receiver.on("/batch"),
        (hooks) => hooks.length >= 2,
        20_000,
        100,
      );
      expect(new Set(delivered.map((h) => h.body.run_id))).toEqual(new Set(runs.map((r) => r.run_id)));
      expect(delivered.map((h) => h.body.status)).toEqual(["success", "success"]);
    });
  });

  describe("webhooks", () => {
    it("POSTs the finished run, with its values, to the webhook", async () => {
      const threadId = await newThread();
      let runId = "";
      await client.runs.wait(threadId, "steps", {
        input: { items: [] },
        webhook: receiver.url("/hook"),
        onRunCreated: (m) => (runId = m.run_id),
      });
      const [hook] = await until(
        async () => receiver.on("/hook"),
        (hooks) => hooks.length >= 1,
        15_000,
        100,
      );
      expect(hook.body).toMatchObject({
        __method: "POST",
        run_id: runId,
        thread_id: threadId,
        status: "success",
        values: { items: ALL_STEPS },
      });
      // Time itself is under test: no second delivery comes within 300 ms.
      await sleep(300);
      expect(receiver.on("/hook")).toHaveLength(1);
    });

    it("retries a webhook the receiver answered with 500", async () => {
      const threadId = await newThread();
      const run = await client.runs.create(threadId, "echo", {
        input: { messages: [{ role: "user", content: "hook" }] },
        webhook: receiver.url("/flaky"),
      });
      const hooks = await until(
        async () => receiver.on("/flaky"),
        (all) => all.length >= 2,
        20_000,
        100,
      );
      expect(hooks.map((h) => h.body.run_id)).toEqual([run.run_id, run.run_id]);
      expect(hooks[1].body).toMatchObject({ status: "success", values: { messages: expect.any(Array) } });
      // Time itself is under test: no third attempt comes within 1.5 s of the success.
      await sleep(1_500);
      expect(receiver.on("/flaky")).toHaveLength(2);
    });
  });

  describe("webhooks, continued", () => {
    it("reports a failed run with status error and its error message", async () => {
      const threadId = await newThread();
      const run = await client.runs.create(threadId, "steps", {
        input: { items: [] },
        config: { recursion_limit: 2 },
        webhook: receiver.url("/failed"),
      });
      const [hook] = await until(
        async () => receiver.on("/failed"),
        (hooks) => hooks.length >= 1,
        15_000,
        100,
      );
      expect(hook.body).toMatchObject({
        run_id: run.run_id,
        thread_id: threadId,
        status: "error",
        error: expect.stringMatching(/Recursion/i),
      });
    });
  });

  describe("scheduling", () => {
    it("after_seconds keeps the run pending until it is due", async () => {
      const threadId = await newThread();
      const run = await client.runs.create(threadId, "echo", {
        input: { messages: [{ role: "user", content: "later" }] },
        afterSeconds: 1,
      });
      // Time itself is under test: a run due in 1 s has not started 300 ms later.
      await sleep(300);
      expect(await runStatus(threadId, run.run_id)).toBe("pending");
      expect((await client.threads.get(threadId)).status).toBe("busy");
      const values = (await client.runs.join(threadId, run.run_id)) as { messages: Message[] };
      expect(values.messages.map((m) => content(m))).toEqual(["later", "later"]);
      expect(await runStatus(threadId, run.run_id)).toBe("success");
    });
  });

  describe("errors", () => {
    it("run routes of a missing thread answer 404", async () => {
      const missing = crypto.randomUUID();
      expect((await failure(client.runs.list(missing))).status).toBe(404);
      expect((await failure(client.runs.get(missing, crypto.randomUUID()))).status).toBe(404);
      expect((await failure(client.runs.join(missing, crypto.randomUUID()))).status).toBe(404);
    });

    it("an unknown assistant answers 404 naming it", async () => {
      const threadId = await newThread();
      const missing = await failure(client.runs.create(threadId, "no-such-graph", { input: {} }));
      expect(missing.status).toBe(404);
      expect(JSON.stringify(missing.body)).toContain("no-such-graph");
      expect((await failure(client.runs.wait(null, "no-such-graph", { input: {} }))).status).toBe(404);
    });

    it("a run on a missing thread answers 404 unless if_not_exists is create", async () => {
      const threadId = crypto.randomUUID();
      expect(
        (await failure(client.runs.create(threadId, "echo", { input: { messages: [] }, ifNotExists: "reject" })))
          .status,
      ).toBe(404);
      expect((await failure(client.runs.create(threadId, "echo", { input: { messages: [] } }))).status).toBe(404);
      const values = (await client.runs.wait(threadId, "echo", {
        input: { messages: [{ role: "user", content: "made" }] },
        ifNotExists: "create",
      })) as { messages: Message[] };
      expect(values.messages).toHaveLength(2);
      expect((await client.threads.get(threadId)).metadata).toMatchObject({ graph_id: "echo" });
    });

    it("an invalid stream_mode answers 422", async () => {
      const threadId = await newThread();
      const invalid = await failure(client.runs.create(threadId, "echo", { input: {}, streamMode: "bogus" as never }));
      expect(invalid.status).toBe(422);
      expect(await client.runs.list(threadId)).toEqual([]);
    });

    it("a graph error ends the run with status error and an SSE error event", async () => {
      const threadId = await newThread();
      // recursion_limit 2 cannot fit the four steps.
      const events = await collect(
        client.runs.stream(threadId, "steps", {
          input: { items: [] },
          config: { recursion_limit: 2 },
          streamMode: "updates",
        }),
      );
      const error = events.find((e) => e.event === "error");
      expect(error?.data).toMatchObject({ error: expect.stringMatching(/Recursion/), message: expect.any(String) });
      const [run] = await client.runs.list(threadId);
      expect(run.status).toBe("error");
      expect((await client.threads.get(threadId)).status).toBe("error");
      await expect(
        client.runs.wait(threadId, "steps", { input: { items: [] }, config: { recursion_limit: 2 } }),
      ).rejects.toThrow(/Recursion/);
    });
  });
});
