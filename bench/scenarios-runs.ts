/**
 * Run scenarios (issue targets, concurrency 16: 10× the official JS dev server's ~26 runs/s, p50
 * `wait` ≤ 25 ms, time to first event p50 ≤ 10 ms).
 */
import { performance } from "node:perf_hooks";
import type { Scenario } from "./context.ts";

const human = (content: string) => ({ messages: [{ role: "user", content }] });

export const RUN_SCENARIOS: Scenario[] = [
  {
    name: "wait",
    description: "client.threads.create() then client.runs.wait(thread, 'echo')",
    concurrency: 16,
    run: async (ctx) => {
      const thread = await ctx.client.threads.create();
      await ctx.client.runs.wait(thread.thread_id, "echo", { input: human("hello") });
    },
  },
  {
    name: "stream",
    description: "client.runs.stream(thread, 'agent', modes values+updates+messages-tuple) to the end",
    concurrency: 16,
    run: async (ctx) => {
      const thread = await ctx.client.threads.create();
      const start = performance.now();
      let firstEvent: number | undefined;
      for await (const chunk of ctx.client.runs.stream(thread.thread_id, "agent", {
        input: human("what is langgraph?"),
        streamMode: ["values", "updates", "messages-tuple"],
      })) {
        firstEvent ??= performance.now() - start;
        if (chunk.event === "error") throw new Error(JSON.stringify(chunk.data));
      }
      return { "first-event": firstEvent ?? Number.NaN };
    },
  },
  {
    name: "stateless",
    description: "client.runs.wait(null, 'echo'): a run without a thread",
    concurrency: 16,
    run: async (ctx) => void (await ctx.client.runs.wait(null, "echo", { input: human("stateless") })),
  },
  {
    name: "hitl",
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
