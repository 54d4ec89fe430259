/**
 * Semantic store search (issue 30 targets: search p50 ≤ 25 ms and server CPU ≤ 20 ms per search, over
 * 10,000 items of 768 dimensions in one namespace prefix). It runs on a deployment of its own,
 * bench/fixtures/semantic/langgraph.json (`store.index` with a local embedding function), which the
 * bench starts for it. Setup loads the items through the API (`PUT /store/items`, BENCH_STORE_ITEMS of
 * them, STORE_LOADERS at a time) and reports that load's throughput, CPU and rows written per put;
 * the measured operation is `POST /store/items/search` with `query` over the whole prefix, limit 10.
 * The reference (the LangGraph.js dev server) has no semantic search: the figures stand against the
 * targets alone, not as a ratio.
 */

import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { seededRandom } from "../test/fixtures/random.ts";
import type { BenchContext, Scenario } from "./context.ts";
import { treeCpuMs } from "./proc-cpu.ts";
import { unitsPerOp } from "./usage.ts";

/** The deployment the scenario runs on (relative to the project root). */
export const SEMANTIC_DEPLOYMENT = "bench/fixtures/semantic/langgraph.json";
const ITEMS = Number(process.env.BENCH_STORE_ITEMS ?? 10_000);
/** Concurrent puts while loading, as an application with many users would write its memories. */
const STORE_LOADERS = 16;
const SUB_NAMESPACES = 10;
const LIMIT = 10;

/** 256 words, so items share words with queries and with each other, as memories about people do. */
const WORDS = (
  "user likes prefers dislikes spicy ramen sushi pizza pasta salad coffee tea wine beer chocolate cheese " +
  "bread rice noodles curry tacos burger steak chicken fish vegan vegetarian allergic peanuts gluten dairy " +
  "morning evening night weekend monday friday travel flight hotel train car bike walk run swim yoga gym " +
  "tennis football soccer chess piano guitar jazz rock classical podcast book novel poetry history science " +
  "math physics biology chemistry art painting photography movie series comedy drama horror anime museum " +
  "garden plants flowers dog cat bird fish hamster horse pet vet doctor dentist appointment meeting project " +
  "deadline report email slack calendar reminder birthday anniversary wedding party gift family sister " +
  "brother mother father daughter son friend colleague manager team office remote home apartment house " +
  "kitchen bedroom city village beach mountain lake forest snow rain sun summer winter spring autumn " +
  "japan italy france spain mexico india china brazil canada germany london paris tokyo berlin madrid " +
  "rome lisbon oslo language french spanish german japanese italian english learning course exam school " +
  "university degree job engineer teacher nurse chef designer writer lawyer startup salary budget savings " +
  "investment rent mortgage insurance bank card phone laptop tablet camera headphones watch shoes jacket " +
  "hat glasses blue green red black white favorite color number song album concert festival tickets seat " +
  "window aisle early late quiet loud busy calm happy tired stressed healthy sleep diet water vitamins " +
  "medicine pain knee back headache"
).split(" ");

function sentence(next: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(" ");
}

/** Item `n`: a memory of 8 to 20 words. */
function item(n: number): Record<string, unknown> {
  const next = seededRandom(n + 1);
  return { text: `memory ${n}: ${sentence(next, 8 + Math.floor(next() * 13))}`, n };
}

const QUERIES = Array.from({ length: 64 }, (_, i) => {
  const next = seededRandom(1_000_003 + i);
  return sentence(next, 2 + Math.floor(next() * 4));
});

interface StoreState {
  prefix: string[];
  query: number;
}

const state = (ctx: BenchContext) => ctx.state as unknown as StoreState;

const per = (value: number, ops: number) => (ops > 0 ? value / ops : Number.NaN);
const fixed = (value: number | undefined, digits = 2) =>
  value === undefined || Number.isNaN(value) ? "-" : value.toFixed(digits);

/**
 * Puts ITEMS items through the API, STORE_LOADERS at a time, and notes the load's figures: items/s,
 * server CPU per put, and the units (rows written, object calls) the usage meter counted.
 */
async function load(ctx: BenchContext, prefix: string[]): Promise<void> {
  await ctx.usage?.reset();
  const cpuBefore = ctx.serverPid ? treeCpuMs(ctx.serverPid) : undefined;
  const start = performance.now();
  let next = 0;
  const loader = async () => {
    for (let n = next++; n < ITEMS; n = next++)
      await ctx.client.store.putItem([...prefix, `u${n % SUB_NAMESPACES}`], `m${n}`, item(n));
  };
  await Promise.all(Array.from({ length: STORE_LOADERS }, loader));
  const seconds = (performance.now() - start) / 1000;
  const cpuAfter = ctx.serverPid ? treeCpuMs(ctx.serverPid) : undefined;
  const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? per(cpuAfter - cpuBefore, ITEMS) : undefined;
  const heap = ctx.heap?.peakMb();
  ctx.notes.push(
    `load: ${ITEMS.toLocaleString("en-US")} items of 768 dimensions put through PUT /store/items (each embedded on the`,
    `  put, one call of the local embedding function), ${STORE_LOADERS} at a time, in ${seconds.toFixed(1)} s:` +
      ` ${(ITEMS / seconds).toFixed(0)} items/s, ${fixed(cpuMs)} ms server CPU per put` +
      (heap !== undefined ? `, isolate heap peak ${heap.toFixed(1)} MB` : ""),
  );
  if (ctx.usage) {
    const { perOp } = unitsPerOp(await ctx.usage.read(), ITEMS, cpuMs);
    ctx.notes.push(
      `  per put: ${fixed(perOp.workerRequests)} Worker requests, ${fixed(perOp.objectRequests)} Durable Object calls,` +
        ` rows written ${fixed(perOp.objectRowsWritten + perOp.d1RowsWritten)} (objects ${fixed(perOp.objectRowsWritten)},` +
        ` D1 ${fixed(perOp.d1RowsWritten)}), rows read ${fixed(perOp.objectRowsRead + perOp.d1RowsRead)}`,
    );
  }
}

async function search(ctx: BenchContext) {
  const { prefix } = state(ctx);
  const query = QUERIES[state(ctx).query++ % QUERIES.length];
  return ctx.client.store.searchItems(prefix, { query, limit: LIMIT });
}

export const STORE_SCENARIOS: Scenario[] = [
  {
    name: "store-search",
    description: `client.store.searchItems(prefix, {query, limit: ${LIMIT}}) over ${ITEMS.toLocaleString("en-US")} items of 768 dims (semantic index)`,
    deployment: SEMANTIC_DEPLOYMENT,
    reference: false,
    concurrency: 1,
    targets: { p50Ms: 25, cpuMsPerOp: 20 },
    setup: async (ctx) => {
      // A prefix of this run's own: against --url, earlier runs' items stay out of the scan.
      const prefix = ["bench-search", randomUUID().slice(0, 8)];
      ctx.state.prefix = prefix;
      ctx.state.query = 0;
      // A server without a semantic index answers no scores: say so before loading anything.
      const probe = ["bench-search-probe", prefix[1]];
      await ctx.client.store.putItem(probe, "probe", item(0));
      const probed = await ctx.client.store.searchItems(probe, { query: QUERIES[0], limit: 1 });
      if (typeof probed.items[0]?.score !== "number")
        throw new Error(
          `the search answered no scores: the server has no store.index (start it with npm start -- --config ${SEMANTIC_DEPLOYMENT})`,
        );
      await load(ctx, prefix);
      const found = await search(ctx);
      if (found.items.length !== LIMIT)
        throw new Error(`the search answered ${found.items.length} items, not ${LIMIT}`);
      // The heap figure of the row is then the searches' alone (the load's is in the notes).
      ctx.heap?.reset();
    },
    run: async (ctx) => void (await search(ctx)),
  },
];
