// The official langsmith SDK traces into the platform through its default path (GET /info, then
// batched, gzip-compressed multipart), and the runs come back through /runs/query.
import { HumanMessage } from "@langchain/core/messages";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { Client as AgentClient } from "@langchain/langgraph-sdk";
import { Client } from "langsmith";
import { traceable } from "langsmith/traceable";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { graph as agentGraph } from "../../graphs/agent.ts";
import { until } from "../fixtures/until.ts";
import { sharedServer } from "./helpers.ts";

const server = sharedServer();

type Run = {
  id: string;
  name: string;
  run_type: string;
  status: string;
  parent_run_id: string | null;
  trace_id: string;
  inputs: unknown;
  outputs: unknown;
  tags: string[];
  dotted_order: string;
  extra: { metadata?: Record<string, unknown> };
};

async function api<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Api-Key": server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe("langsmith SDK tracing", () => {
  it("traces nested traceable functions with multipart batches", async () => {
    const project = `sdk-${crypto.randomUUID()}`;
    // The server advertises both codecs: the JS SDK gzips (it reads gzip_body_enabled only), Python zstd.
    const info = await api<{ instance_flags: Record<string, boolean> }>("/info");
    expect(info.instance_flags).toMatchObject({ gzip_body_enabled: true, zstd_compression_enabled: true });
    // Its default path (info, then batched gzip multipart) must work without a single warning.
    const warnings = vi.spyOn(console, "warn");
    onTestFinished(() => warnings.mockRestore());
    const client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: true });
    const double = traceable(async (x: number) => x * 2, {
      name: "double",
      run_type: "tool",
      client,
      project_name: project,
      tracingEnabled: true,
    });
    const pipeline = traceable(
      async (x: number) => {
        const a = await double(x);
        const b = await double(a);
        return { result: b + 1 };
      },
      {
        name: "pipeline",
        client,
        project_name: project,
        tracingEnabled: true,
        tags: ["e2e"],
        metadata: { thread_id: "sdk-thread" },
      },
    );
    expect(await pipeline(3)).toEqual({ result: 13 });
    await client.awaitPendingTraceBatches();
    expect(warnings.mock.calls).toEqual([]);

    const [session] = await api<{ id: string }[]>(`/sessions?name=${project}`);
    expect(session).toBeDefined();
    const { runs } = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], order: "asc" });
    expect(runs.map((run) => run.name)).toEqual(["pipeline", "double", "double"]);
    const [root, first, second] = runs;
    expect(root).toMatchObject({ status: "success", parent_run_id: null, tags: ["e2e"], outputs: { result: 13 } });
    expect(first).toMatchObject({
      run_type: "tool",
      status: "success",
      parent_run_id: root.id,
      trace_id: root.id,
      outputs: { outputs: 6 },
    });
    expect(second.outputs).toEqual({ outputs: 12 });
    expect(second.dotted_order.startsWith(root.dotted_order)).toBe(true);

    const filtered = await api<{ runs: Run[] }>("/runs/query", {
      session: [session.id],
      filter: 'and(eq(run_type, "tool"), eq(output_value, "12"))',
    });
    expect(filtered.runs.map((run) => run.id)).toEqual([second.id]);
    // traceable children inherit their parent's metadata, so the whole trace is in the thread.
    const byThread = await api<{ runs: Run[] }>("/runs/query", {
      session: [session.id],
      filter: 'eq(thread_id, "sdk-thread")',
    });
    expect(byThread.runs).toHaveLength(3);
    const rootsOfThread = await api<{ runs: Run[] }>("/runs/query", {
      session: [session.id],
      filter: 'and(eq(thread_id, "sdk-thread"), eq(is_root, true))',
    });
    expect(rootsOfThread.runs.map((run) => run.id)).toEqual([root.id]);
  });

  it("stores the attachments the SDK sends with a run", async () => {
    const project = `attach-${crypto.randomUUID()}`;
    const client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: true });
    const png = new Uint8Array(200_000).map((_, i) => i % 256);
    const withFile = traceable(async (question: string, _file: Uint8Array) => `answered: ${question}`, {
      name: "with-file",
      client,
      project_name: project,
      tracingEnabled: true,
      // The SDK's way to send an argument as an attachment instead of an input.
      extractAttachments: (question: string, file: Uint8Array) => [{ screenshot: ["image/png", file] }, { question }],
    });
    await withFile("what is in the picture?", png);
    await client.awaitPendingTraceBatches();
    const [session] = await api<{ id: string }[]>(`/sessions?name=${project}`);
    const { runs } = await api<{ runs: Run[] }>("/runs/query", { session: [session.id] });
    const run = await api<{ s3_urls: Record<string, { presigned_url: string; mime_type: string; size: number }> }>(
      `/runs/${runs[0].id}`,
    );
    // Attachments are listed only under s3_urls, as LangSmith lists them.
    expect(run).not.toHaveProperty("attachments");
    expect(Object.keys(run.s3_urls)).toEqual(["attachment.screenshot"]);
    expect(run.s3_urls["attachment.screenshot"]).toMatchObject({ mime_type: "image/png", size: png.byteLength });
    // Pre-signed: fetched as the SDKs fetch it, without the API key.
    const download = await fetch(run.s3_urls["attachment.screenshot"].presigned_url);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(png);
  });

  it("traces a LangGraph graph through LangChain's LangSmith tracer", async () => {
    const project = `graph-${crypto.randomUUID()}`;
    const client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: true });
    const tracer = new LangChainTracer({ client, projectName: project });
    const result = await agentGraph.invoke(
      { messages: [new HumanMessage("what is langgraph?")] },
      { callbacks: [tracer], runName: "agent-graph" },
    );
    expect(String(result.messages.at(-1)?.content)).toContain("LangGraph builds stateful agents");
    await client.awaitPendingTraceBatches();

    const [session] = await api<{ id: string }[]>(`/sessions?name=${project}`);
    const { runs } = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], order: "asc", limit: 100 });
    const root = runs.find((run) => run.parent_run_id === null)!;
    expect(root).toMatchObject({ name: "agent-graph", run_type: "chain", status: "success" });
    expect(runs.every((run) => run.trace_id === root.id)).toBe(true);
    expect(
      runs
        .filter((run) => run.parent_run_id === root.id && !run.tags.includes("langsmith:hidden"))
        .map((run) => run.name),
    ).toEqual(["agent", "tools", "agent"]);
    expect(runs.filter((run) => run.run_type === "llm")).toHaveLength(2);
    const tool = runs.find((run) => run.run_type === "tool")!;
    expect(tool).toMatchObject({ name: "search", status: "success" });
    // The nodes' LangGraph metadata survives the trip, so it filters.
    const toolsNode = await api<{ runs: Run[] }>("/runs/query", {
      session: [session.id],
      filter: 'and(eq(metadata_key, "langgraph_node"), eq(metadata_value, "tools"), eq(run_type, "tool"))',
    });
    expect(toolsNode.runs.map((run) => run.id)).toEqual([tool.id]);
  });
});

describe("agent runs on the server", () => {
  it("appear as a trace with their LLM and tool children", async () => {
    const agents = new AgentClient({ apiUrl: server.url, apiKey: server.apiKey });
    const thread = await agents.threads.create();
    const run = await agents.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "what is parquet?" }] },
    });
    await agents.runs.join(thread.thread_id, run.run_id);

    const trace = await until(
      async () => {
        const [session] = await api<{ id: string }[]>("/sessions?name=agent-runs");
        if (!session) return [];
        const roots = await api<{ runs: Run[] }>("/runs/query", {
          session: [session.id],
          is_root: true,
          filter: `and(eq(metadata_key, "run_id"), eq(metadata_value, "${run.run_id}"))`,
        });
        if (!roots.runs[0]) return [];
        return (await api<{ runs: Run[] }>("/runs/query", { trace: roots.runs[0].id, order: "asc", limit: 100 })).runs;
      },
      (runs) => runs.length > 0,
      15_000,
      50,
    );
    const root = trace.find((r) => r.parent_run_id === null)!;
    expect(root).toMatchObject({ run_type: "chain", status: "success" });
    expect(root.extra.metadata).toMatchObject({
      thread_id: thread.thread_id,
      run_id: run.run_id,
      assistant_id: run.assistant_id,
      graph_id: "agent",
    });
    const llms = trace.filter((r) => r.run_type === "llm");
    const tools = trace.filter((r) => r.run_type === "tool");
    expect(llms).toHaveLength(2);
    expect(tools.map((r) => r.name)).toEqual(["search"]);
    expect(JSON.stringify(tools[0].outputs)).toContain("Parquet is a columnar file format");
    // Children hang off the graph's nodes, which hang off the root.
    const nodeIds = new Set(trace.filter((r) => r.parent_run_id === root.id).map((r) => r.id));
    expect(
      [...llms, ...tools].every(
        (r) =>
          nodeIds.has(r.parent_run_id!) || trace.some((n) => n.id === r.parent_run_id && nodeIds.has(n.parent_run_id!)),
      ),
    ).toBe(true);
  });
});
