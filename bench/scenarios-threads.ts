/** Thread scenarios (issue targets: 2× the official JS dev server; getHistory(100) under 20 ms p50). */
import type { BenchContext, Scenario } from "./context.ts";

const ids = (ctx: BenchContext) => ctx.state.threadIds as string[];

/** 150 checkpoints: `__input__`, then 149 alternating human/AI turns of an echo conversation. */
async function longConversation(ctx: BenchContext): Promise<string> {
  const supersteps = [{ updates: [{ values: {}, asNode: "__input__" }] }];
  for (let turn = 0; turn < 149; turn++) {
    const human = turn % 2 === 0;
    supersteps.push({
      updates: [
        {
          values: {
            messages: [
              {
                type: human ? "human" : "ai",
                content: `${human ? "question" : "answer"} ${turn}: ${"lorem ipsum ".repeat(8)}`,
              },
            ],
          },
          asNode: human ? "__start__" : "respond",
        },
      ],
    });
  }
  const thread = await ctx.client.threads.create({ graphId: "echo", supersteps, metadata: { bench: "history" } });
  return thread.thread_id;
}

/** 150 checkpoints of the `steps` graph, each adding one short item: a small state. */
async function shortStateThread(ctx: BenchContext): Promise<string> {
  const supersteps = [{ updates: [{ values: {}, asNode: "__input__" }] }];
  const nodes = ["step1", "step2", "step3"];
  for (let i = 0; i < 149; i++) {
    supersteps.push({ updates: [{ values: { items: [`item ${i}`] }, asNode: i === 0 ? "__start__" : nodes[i % 3] }] });
  }
  const thread = await ctx.client.threads.create({
    graphId: "steps",
    supersteps,
    metadata: { bench: "history-small" },
  });
  return thread.thread_id;
}

export const THREAD_SCENARIOS: Scenario[] = [
  {
    name: "threads-create",
    description: "client.threads.create({metadata}) at concurrency 16",
    concurrency: 16,
    run: async (ctx) =>
      void (await ctx.client.threads.create({
        metadata: { bench: "create", user: `u${Math.floor(Math.random() * 100)}` },
      })),
  },
  {
    name: "threads-get",
    description: "client.threads.get(id) over 200 threads at concurrency 16",
    concurrency: 16,
    setup: async (ctx) => {
      const created = [];
      for (let i = 0; i < 200; i += 20) {
        created.push(
          ...(await Promise.all(
            Array.from({ length: 20 }, () => ctx.client.threads.create({ metadata: { bench: "get" } })),
          )),
        );
      }
      ctx.state.threadIds = created.map((t) => t.thread_id);
    },
    run: async (ctx) => {
      const all = ids(ctx);
      await ctx.client.threads.get(all[Math.floor(Math.random() * all.length)]);
    },
  },
  {
    name: "threads-search",
    description: "client.threads.search({metadata: {bench, user}, limit 10}) at concurrency 16",
    concurrency: 16,
    run: async (ctx) =>
      void (await ctx.client.threads.search({
        metadata: { bench: "create", user: `u${Math.floor(Math.random() * 100)}` },
        limit: 10,
      })),
  },
  {
    name: "history-100",
    description: "client.threads.getHistory(id, {limit: 100}) on a thread with 150 checkpoints",
    concurrency: 1,
    setup: async (ctx) => {
      ctx.state.threadId = await longConversation(ctx);
    },
    run: async (ctx) => void (await ctx.client.threads.getHistory(ctx.state.threadId as string, { limit: 100 })),
  },
  {
    name: "history-100-small",
    description: "client.threads.getHistory(id, {limit: 100}) on a thread with 150 checkpoints of a small state",
    concurrency: 1,
    setup: async (ctx) => {
      ctx.state.threadId = await shortStateThread(ctx);
    },
    run: async (ctx) => void (await ctx.client.threads.getHistory(ctx.state.threadId as string, { limit: 100 })),
  },
  {
    name: "get-state",
    description: "client.threads.getState(id) on a thread with 150 checkpoints",
    concurrency: 1,
    setup: async (ctx) => {
      ctx.state.threadId = await longConversation(ctx);
    },
    run: async (ctx) => void (await ctx.client.threads.getState(ctx.state.threadId as string)),
  },
];
