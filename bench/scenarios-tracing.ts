/**
 * Tracing scenarios (issue targets: ingest ≥ 5,000 runs/s through the langsmith SDK's multipart
 * path; a filtered runs/query p50 ≤ 50 ms over a day holding 100k runs).
 */
import { Client, uuid7FromTime } from "langsmith";
import type { RunCreate } from "langsmith/schemas";
import type { BenchContext, Scenario } from "./context.ts";

/** Runs per SDK flush, the SDK's default batch size: one `ingest` operation posts this many runs. */
export const RUNS_PER_BATCH = 100;
/** Runs loaded into one day before `query` is measured (BENCH_QUERY_RUNS overrides, e.g. for a quick check). */
const QUERY_DAY_RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 100_000);

const PROMPT = "Summarise the following support ticket and propose a next step for the on-call engineer. ".repeat(4);
const ANSWER =
  "The customer reports intermittent 502s from the EU edge after the last deploy; roll back the cache rule. ".repeat(4);

/**
 * One trace of realistic size (~1.5 KB per run): an agent root, then model and tool calls under it.
 * Ids are UUIDv7 from the start time, as the SDK's RunTree and LangChain's callbacks make them.
 */
function trace(project: string, day: string, index: number): RunCreate[] {
  const start = Date.parse(`${day}T00:00:00Z`) + (index % 86_000) * 1000;
  const rootId = uuid7FromTime(start);
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, "").replace(".", "").replace("Z", "000Z");
  const rootOrder = `${stamp(start)}${rootId}`;
  const runs: RunCreate[] = [];
  for (let i = 0; i < RUNS_PER_BATCH; i++) {
    const at = start + i * 5;
    const id = i === 0 ? rootId : uuid7FromTime(at);
    const llm = i % 2 === 1;
    runs.push({
      id,
      name: i === 0 ? "agent" : llm ? "ChatOpenAI" : "search",
      run_type: i === 0 ? "chain" : llm ? "llm" : "tool",
      start_time: at,
      end_time: at + (i % 7) * 700,
      session_name: project,
      trace_id: rootId,
      dotted_order: i === 0 ? rootOrder : `${rootOrder}.${stamp(at)}${id}`,
      parent_run_id: i === 0 ? undefined : rootId,
      inputs: { messages: [{ role: "user", content: `${PROMPT}#${index}.${i}` }] },
      outputs: llm
        ? {
            generations: [[{ text: ANSWER }]],
            usage_metadata: { input_tokens: 120, output_tokens: 40, total_tokens: 160 },
          }
        : { result: ANSWER },
      extra: { metadata: { thread_id: `thread-${index % 500}`, user: `user-${index % 50}` } },
      tags: i % 10 === 1 ? ["production"] : [],
    } as RunCreate);
  }
  return runs;
}

function sdkClient(ctx: BenchContext, fetchImplementation?: typeof fetch): Client {
  return new Client({
    apiUrl: `${ctx.baseUrl}/api/v1`,
    apiKey: ctx.apiKey,
    autoBatchTracing: false,
    fetchImplementation,
  });
}

/** Distinct SDK batches prepared for `ingest-server` (BENCH_INGEST_BATCHES overrides). */
const SERVER_BATCHES = Number(process.env.BENCH_INGEST_BATCHES ?? 1000);

type CapturedBatch = { headers: Headers; body: ArrayBuffer };

/**
 * The exact requests the SDK sends for `count` distinct batches: the SDK serialises and gzips them
 * (after asking the server's /info), a capturing fetch keeps the multipart bodies instead of sending them.
 */
async function captureSdkBatches(ctx: BenchContext, project: string, count: number): Promise<CapturedBatch[]> {
  const batches: CapturedBatch[] = [];
  const capture: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith("/runs/multipart")) return fetch(input, init);
    const request = new Request(url, init);
    batches.push({ headers: request.headers, body: await request.arrayBuffer() });
    return new Response(JSON.stringify({ accepted: RUNS_PER_BATCH, errors: [] }), {
      status: 202,
      headers: { "Content-Type": "application/json" },
    });
  };
  const client = sdkClient(ctx, capture);
  for (let i = 0; i < count; i++)
    await client.multipartIngestRuns({ runCreates: trace(project, "2026-11-18", i) }, { useGzip: true });
  return batches;
}

export const TRACING_SCENARIOS: Scenario[] = [
  {
    name: "ingest",
    work: { tracedRuns: RUNS_PER_BATCH, traces: 1 },
    reference: false,
    description: `langsmith Client.multipartIngestRuns with ${RUNS_PER_BATCH} runs (~1.5 KB each); runs/s = ops/s × ${RUNS_PER_BATCH}`,
    concurrency: 8,
    setup: async (ctx) => {
      const client = sdkClient(ctx);
      const project = `bench-ingest-${Date.now()}`;
      // The SDK only warns when a flush fails, so prove once that a batch really lands.
      const probe = trace(project, "2026-11-20", 0);
      await client.multipartIngestRuns({ runCreates: probe });
      await ctx.request(`/api/v1/runs/${probe[RUNS_PER_BATCH - 1].id}`, { auth: true });
      Object.assign(ctx.state, { client, project, next: 1 });
    },
    run: async (ctx) => {
      const state = ctx.state as { client: Client; project: string; next: number };
      // gzip, as the SDK's default (batched) path does when /info advertises it.
      await state.client.multipartIngestRuns(
        { runCreates: trace(state.project, "2026-11-20", state.next++) },
        { useGzip: true },
      );
    },
  },
  {
    name: "ingest-server",
    work: { tracedRuns: RUNS_PER_BATCH, traces: 1 },
    reference: false,
    description: `the server alone: replays distinct multipart batches the SDK encoded (gzip, ${RUNS_PER_BATCH} runs each); runs/s = ops/s × ${RUNS_PER_BATCH}`,
    concurrency: 8,
    setup: async (ctx) => {
      const project = `bench-ingest-server-${Date.now()}`;
      const batches = await captureSdkBatches(ctx, project, SERVER_BATCHES);
      if (batches.length !== SERVER_BATCHES)
        throw new Error(`captured ${batches.length} of ${SERVER_BATCHES} SDK batches`);
      if (batches[0].headers.get("content-encoding") !== "gzip")
        throw new Error("the SDK did not gzip its batches; is /api/v1/info advertising gzip?");
      Object.assign(ctx.state, { batches, next: 0 });
    },
    run: async (ctx) => {
      const state = ctx.state as { batches: CapturedBatch[]; next: number };
      // Every operation ingests new runs; past the prepared batches it would only re-post (idempotent) ones.
      if (state.next >= state.batches.length)
        throw new Error(`out of prepared batches; raise BENCH_INGEST_BATCHES above ${state.batches.length}`);
      const batch = state.batches[state.next++];
      const response = await ctx.request("/api/v1/runs/multipart", {
        auth: true,
        method: "POST",
        headers: batch.headers,
        body: batch.body,
      });
      const result = (await response.json()) as { accepted: number; errors: unknown[] };
      if (result.accepted !== RUNS_PER_BATCH || result.errors.length)
        throw new Error(`ingest answered ${JSON.stringify(result).slice(0, 200)}`);
    },
  },
  {
    name: "query",
    reference: false,
    description: `POST /api/v1/runs/query with a filter over one day holding ${QUERY_DAY_RUNS} runs`,
    concurrency: 8,
    setup: async (ctx) => {
      const client = sdkClient(ctx);
      const project = `bench-query-${Date.now()}`;
      const batches = Math.ceil(QUERY_DAY_RUNS / RUNS_PER_BATCH);
      let next = 0;
      const worker = async () => {
        while (next < batches) await client.multipartIngestRuns({ runCreates: trace(project, "2026-11-19", next++) });
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      const sessions = (await (await ctx.request(`/api/v1/sessions?name=${project}`, { auth: true })).json()) as {
        id: string;
      }[];
      ctx.state.session = sessions[0].id;
    },
    run: async (ctx) => {
      const response = await ctx.request("/api/v1/runs/query", {
        auth: true,
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          session: [ctx.state.session],
          filter: 'and(eq(run_type, "llm"), gt(latency, "2s"), has(tags, "production"))',
          limit: 20,
          select: ["name", "start_time", "latency"],
        }),
      });
      const page = (await response.json()) as { runs: unknown[] };
      if (page.runs.length === 0) throw new Error("the filtered query found no runs");
    },
  },
];
