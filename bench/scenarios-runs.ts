/**
 * Run scenarios (issue targets, concurrency 16: 10× the official JS dev server's ~26 runs/s, p50
 * `wait` ≤ 25 ms, time to first event p50 ≤ 10 ms).
 */
import { performance } from "node:perf_hooks";
import { Client } from "@langchain/langgraph-sdk";
import type { BenchContext, Scenario } from "./context.ts";

/** Concurrent streams in `streams-500`. */
const STREAMS = 500;
/**
 * `streams-500` waits longer than the bench's per-operation timeout: a server that runs runs from a
 * small worker pool (the reference runs 10 at a time, about 26 runs/s) takes ~20 s to finish 500.
 */
const STREAMS_TIMEOUT_MS = 120_000;

const human = (content: string) => ({ messages: [{ role: "user", content }] });

/** A new thread, then one run of `graph` streamed to its end in three modes; marks the first event. */
async function streamOnNewThread(ctx: BenchContext, graph: string, message: string) {
  const thread = await ctx.client.threads.create();
  const start = performance.now();
  let firstEvent: number | undefined;
  for await (const chunk of ctx.client.runs.stream(thread.thread_id, graph, {
    input: human(message),
    streamMode: ["values", "updates", "messages-tuple"],
  })) {
    firstEvent ??= performance.now() - start;
    if (chunk.event === "error") throw new Error(JSON.stringify(chunk.data));
  }
  return { "first-event": firstEvent ?? Number.NaN };
}

export const RUN_SCENARIOS: Scenario[] = [
  {
    name: "wait",
    work: { agentRuns: 1, nodes: 1 },
    description: "client.threads.create() then client.runs.wait(thread, 'echo')",
    concurrency: 16,
    run: async (ctx) => {
      const thread = await ctx.client.threads.create();
      await ctx.client.runs.wait(thread.thread_id, "echo", { input: human("hello") });
    },
  },
  {
    name: "stream",
    work: { agentRuns: 1, nodes: 3 },
    reference: false,
    description: "client.runs.stream(thread, 'agent', modes values+updates+messages-tuple) to the end",
    concurrency: 16,
    run: (ctx) => streamOnNewThread(ctx, "agent", "what is langgraph?"),
  },
  {
    name: "stream-echo",
    work: { agentRuns: 1, nodes: 1 },
    description: "client.runs.stream(thread, 'echo', modes values+updates+messages-tuple) to the end",
    concurrency: 16,
    run: (ctx) => streamOnNewThread(ctx, "echo", "hello"),
  },
  {
    name: "streams-500",
    work: { agentRuns: 1, nodes: 1 },
    description: `${STREAMS} concurrent client.runs.stream(thread, 'echo', values) on ${STREAMS} fresh threads, once`,
    concurrency: STREAMS,
    ops: STREAMS,
    setup: async (ctx) => {
      // Threads are created before the measured window (in batches of 50), so it holds only the streams:
      // one per stream, plus one for the unmeasured preflight operation.
      const threads: string[] = [];
      while (threads.length < STREAMS + 1) {
        const size = Math.min(50, STREAMS + 1 - threads.length);
        const batch = await Promise.all(Array.from({ length: size }, () => ctx.client.threads.create()));
        threads.push(...batch.map((thread) => thread.thread_id));
      }
      ctx.state.threadIds = threads;
      ctx.state.streamClient = new Client({
        apiUrl: ctx.baseUrl,
        apiKey: ctx.apiKey ?? null,
        timeoutMs: STREAMS_TIMEOUT_MS,
        // The SDK queues calls beyond 4 at a time by default: the load generator sets the concurrency.
        callerOptions: { maxRetries: 0, maxConcurrency: Number.POSITIVE_INFINITY },
      });
    },
    run: async (ctx: BenchContext) => {
      const client = ctx.state.streamClient as Client;
      const threadId = (ctx.state.threadIds as string[]).pop() ?? (await ctx.client.threads.create()).thread_id;
      const start = performance.now();
      let firstEvent: number | undefined;
      let values = 0;
      for await (const chunk of client.runs.stream(threadId, "echo", {
        input: human("hello"),
        streamMode: "values",
      })) {
        firstEvent ??= performance.now() - start;
        if (chunk.event === "error") throw new Error(JSON.stringify(chunk.data));
        if (chunk.event === "values") values++;
      }
      if (!values) throw new Error("the stream ended without a values event");
      return { "first-event": firstEvent ?? Number.NaN };
    },
  },
  {
    name: "stateless",
    work: { agentRuns: 1, nodes: 1 },
    description: "client.runs.wait(null, 'echo'): a run without a thread",
    concurrency: 16,
    run: async (ctx) => void (await ctx.client.runs.wait(null, "echo", { input: human("stateless") })),
  },
  {
    name: "hitl",
    // Two runs (a resume is a new run): steps 1–3 and review up to its interrupt, then review again.
    work: { agentRuns: 2, nodes: 5 },
    description: "'steps' until interrupt(), then resume with Command({resume})",
    concurrency: 16,
    run: async (ctx) => {
      const thread = await ctx.client.threads.create();
      const paused = (await ctx.client.runs.wait(thread.thread_id, "steps", { input: { ask_human: true } })) as Record<
        string,
        unknown
      >;
      if (!Array.isArray(paused.__interrupt__)) throw new Error("steps did not pause at its interrupt");
      const done = (await ctx.client.runs.wait(thread.thread_id, "steps", {
        command: { resume: "approved" },
      })) as Record<string, unknown>;
      if (done.answer !== "approved") throw new Error("resume value not stored");
    },
  },
];
