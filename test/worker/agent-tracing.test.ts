// Every run the Agent Server executes is traced into the shards of its workspace.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadRecord } from "../../src/threads/object/record.ts";
import { agentTraceSink } from "../../src/threads/runs/trace-sink.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { AgentRunTracer, agentTraceProject, DEFAULT_AGENT_PROJECT } from "../../src/tracing/agent-tracer.ts";
import { oversizeDetail, truncateOversize } from "../../src/tracing/run-size.ts";
import { gate } from "../fixtures/gate.ts";
import { until } from "../fixtures/until.ts";
import { call, json } from "./helpers.ts";

type TraceRun = {
  id: string;
  name: string;
  run_type: string;
  status: string;
  error: string | null;
  parent_run_id: string | null;
  trace_id: string;
  session_id: string;
  is_root: boolean;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown> | null;
  extra: { metadata: Record<string, unknown> };
  events: { name: string }[];
  total_tokens: number | null;
};
type Project = { id: string; name: string };

let key: string;
const human = (content: string) => ({ messages: [{ role: "user", content }] });
const post = (path: string, body: unknown) => call(path, { method: "POST", key, json: body });

beforeAll(async () => {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Agent tracing" } }),
  );
  key = (
    await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }))
  ).key;
});

async function projectNamed(name: string): Promise<Project | null> {
  const projects = await json<Project[]>(await call(`/api/v1/sessions?name=${encodeURIComponent(name)}`, { key }));
  return projects[0] ?? null;
}

/** The trace is written just after the run ends, off the run's path: poll for its root. */
async function traceOf(runId: string, project = "agent-runs"): Promise<TraceRun[]> {
  const root = await until(
    async () => {
      const session = await projectNamed(project);
      if (!session) return undefined;
      const roots = await json<{ runs: TraceRun[] }>(
        await post("/api/v1/runs/query", {
          session: [session.id],
          is_root: true,
          filter: `and(eq(metadata_key, "run_id"), eq(metadata_value, "${runId}"))`,
        }),
      );
      return roots.runs[0];
    },
    (found) => found !== undefined,
  );
  return (
    await json<{ runs: TraceRun[] }>(await post("/api/v1/runs/query", { trace: root!.id, order: "asc", limit: 100 }))
  ).runs;
}

async function waitRun(body: Record<string, unknown>): Promise<{ threadId: string; runId: string; result: unknown }> {
  const threadId = (await json<ThreadJson>(await post("/threads", {}))).thread_id;
  const response = await post(`/threads/${threadId}/runs/wait`, body);
  expect(response.status).toBe(200);
  const runId = response.headers.get("content-location")!.split("/").at(-1)!;
  return { threadId, runId, result: await response.json() };
}

describe("agent runs are traced", () => {
  it("records an agent run as one trace with its nodes, LLM and tool children", async () => {
    const { threadId, runId } = await waitRun({ assistant_id: "agent", input: human("what is cloudflare?") });
    const runs = await traceOf(runId);
    const root = runs.find((run) => run.is_root)!;
    expect(root).toMatchObject({
      name: "LangGraph",
      run_type: "chain",
      status: "success",
      parent_run_id: null,
      error: null,
    });
    // Everything recorded for this agent run (looked up by its metadata, not by trace) is this one trace.
    const project = await projectNamed("agent-runs");
    const tagged = await json<{ runs: TraceRun[] }>(
      await post("/api/v1/runs/query", {
        session: [project!.id],
        filter: `and(eq(metadata_key, "run_id"), eq(metadata_value, "${runId}"))`,
        limit: 100,
      }),
    );
    expect(tagged.runs.map((run) => run.id).sort()).toEqual(runs.map((run) => run.id).sort());
    expect(tagged.runs.every((run) => run.trace_id === root.id)).toBe(true);

    // Every run carries the ids that lead back to the thread, the run, the assistant and the graph.
    for (const run of runs) {
      expect(run.extra.metadata).toMatchObject({ thread_id: threadId, run_id: runId, graph_id: "agent" });
      expect(run.extra.metadata.assistant_id).toMatch(/^[0-9a-f-]{36}$/);
    }

    const nodes = runs.filter((run) => run.parent_run_id === root.id).map((run) => run.name);
    expect(nodes).toEqual(["agent", "tools", "agent"]);
    const llms = runs.filter((run) => run.run_type === "llm");
    expect(llms).toHaveLength(2);
    const tool = runs.find((run) => run.run_type === "tool")!;
    expect(tool).toMatchObject({ name: "search", status: "success" });
    expect(JSON.stringify(tool.outputs)).toContain("Cloudflare Workers run JavaScript at the edge");
    // The model's run has its prompt, its answer and the first token (not one event per token).
    const answer = llms[1];
    expect(JSON.stringify(answer.inputs)).toContain("what is cloudflare?");
    expect(JSON.stringify(answer.outputs)).toContain("Cloudflare Workers");
    expect(answer.events.filter((event) => event.name === "new_token")).toHaveLength(1);
  });

  it("records a failed run with its error", async () => {
    const threadId = (await json<ThreadJson>(await post("/threads", {}))).thread_id;
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: "steps",
      input: {},
      config: { recursion_limit: 2 },
    });
    const runId = response.headers.get("content-location")!.split("/").at(-1)!;
    const runs = await traceOf(runId);
    const root = runs.find((run) => run.is_root)!;
    expect(root.status).toBe("error");
    expect(root.error).toContain("Recursion limit");
  });

  it("ends the steps of a cancelled run with an error", async () => {
    const threadId = (await json<ThreadJson>(await post("/threads", {}))).thread_id;
    // Held at step2's gate (never opened) once step1 is done: step2 is the step the cancel cuts off.
    const run = await json<{ run_id: string }>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "steps", input: {}, config: gate("step2").config }),
    );
    await until(
      async () => json<{ values: { items?: string[] } }>(await call(`/threads/${threadId}/state`, { key })),
      (state) => state.values.items?.includes("step1") === true,
    );
    const cancelled = await call(`/threads/${threadId}/runs/${run.run_id}/cancel?wait=1&action=interrupt`, {
      method: "POST",
      key,
    });
    expect(cancelled.status).toBe(200);
    const runs = await traceOf(run.run_id);
    const root = runs.find((r) => r.is_root)!;
    // LangGraph ends the steps it was running with the abort; any it left open end as Cancelled.
    expect(root.status).toBe("error");
    expect(root.error).toMatch(/Abort|Cancelled/);
    expect(runs.find((r) => r.name === "step1")).toMatchObject({ status: "success" });
    const cutOff = runs.filter((r) => r.parent_run_id === root.id && r.status === "error");
    expect(cutOff.length).toBe(1);
    expect(["step2", "step3", "review"]).toContain(cutOff[0].name);
  });

  it("traces into the project a run names with langsmith_tracer", async () => {
    const { runId } = await waitRun({
      assistant_id: "echo",
      input: human("hi"),
      langsmith_tracer: { project_name: "my-evals" },
    });
    const runs = await traceOf(runId, "my-evals");
    expect(runs.find((run) => run.is_root)).toMatchObject({ status: "success" });
    const project = await projectNamed("my-evals");
    expect(runs.every((run) => run.session_id === project!.id)).toBe(true);
  });

  it("traces into config.configurable.langsmith_project, and picks the project in order", async () => {
    const { runId } = await waitRun({
      assistant_id: "echo",
      input: human("hi"),
      config: { configurable: { langsmith_project: "from-config" } },
    });
    expect((await traceOf(runId, "from-config")).find((run) => run.is_root)).toMatchObject({ status: "success" });
    const config = { configurable: { langsmith_project: "c" } };
    expect(agentTraceProject("deployment", { langsmith_tracer: { project_name: "t" }, config })).toBe("t");
    expect(agentTraceProject("deployment", { langsmith_tracer: null, config })).toBe("c");
    expect(agentTraceProject("deployment", { config: {} })).toBe("deployment");
    expect(agentTraceProject(undefined, { config: {} })).toBe(DEFAULT_AGENT_PROJECT);
  });

  it("keeps the whole trace of a run whose fields exceed MAX_TRACED_RUN_BYTES, with markers in their place", async () => {
    // The workerd tests run with MAX_TRACED_RUN_BYTES = 32768 (vitest.config.ts); the run is unaffected.
    const text = "z".repeat(40_000);
    const { threadId, runId, result } = await waitRun({ assistant_id: "echo", input: human(text) });
    expect((result as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual([text, text]);
    const runs = await traceOf(runId);
    const root = runs.find((run) => run.is_root)!;
    expect(root).toMatchObject({ name: "LangGraph", status: "success", error: null });
    expect(runs.map((run) => run.name)).toContain("respond");
    const marker = /^(inputs|outputs) of \d+ bytes exceed the 32768-byte trace limit$/;
    expect(root.inputs).toEqual({ __truncated__: expect.stringMatching(marker) });
    expect(root.outputs).toEqual({ __truncated__: expect.stringMatching(marker) });
    // The ids leading back to the thread and run survive, and no stored run is over the limit.
    for (const run of runs) {
      expect(run.extra.metadata).toMatchObject({ thread_id: threadId, run_id: runId });
      for (const field of [run.inputs, run.outputs, run.extra, run.events])
        expect(JSON.stringify(field).length).toBeLessThanOrEqual(32768);
    }
  });

  it("replaces each field over the limit by its marker and leaves the others", () => {
    const run = {
      id: "r",
      inputs: { small: true },
      outputs: { text: "o".repeat(200) },
      extra: { metadata: { run_id: "r" }, runtime: "x".repeat(200) },
      events: [{ name: "start", data: "e".repeat(200) }],
      error: "E".repeat(2000),
      tags: ["a"],
    };
    expect(oversizeDetail(run, 150)).toBe(
      "Run r: outputs is 211 bytes, extra is 240 bytes, events is 228 bytes, error is 2000 bytes of JSON; the limit for each field of a traced run is 150 bytes (MAX_TRACED_RUN_BYTES)",
    );
    expect(truncateOversize(run, 150)).toEqual({
      id: "r",
      inputs: { small: true },
      outputs: { __truncated__: "outputs of 211 bytes exceed the 150-byte trace limit" },
      extra: { metadata: { run_id: "r" }, __truncated__: "extra of 240 bytes exceed the 150-byte trace limit" },
      events: [{ name: "__truncated__", __truncated__: "events of 228 bytes exceed the 150-byte trace limit" }],
      error: `${"E".repeat(1024)}… [error of 2000 bytes exceed the 150-byte trace limit]`,
      tags: ["a"],
    });
    expect(oversizeDetail(run, 5000)).toBeNull();
  });

  it("closes the steps a run left open with the reason it ended", () => {
    const tracer = new AgentRunTracer({ thread_id: "t", run_id: "r", assistant_id: "a", graph_id: "g" }, "p");
    const rootId = crypto.randomUUID();
    const childId = crypto.randomUUID();
    tracer._addRunToRunMap({
      id: rootId,
      name: "graph",
      run_type: "chain",
      start_time: Date.now(),
      inputs: {},
      execution_order: 1,
      child_runs: [],
      child_execution_order: 1,
      events: [],
      tags: [],
    } as never);
    tracer._addRunToRunMap({
      id: childId,
      name: "node",
      run_type: "chain",
      parent_run_id: rootId,
      start_time: Date.now(),
      inputs: {},
      execution_order: 2,
      child_runs: [],
      child_execution_order: 2,
      events: [],
      tags: [],
    } as never);
    const runs = tracer.takeRuns("Run ended: lost its worker");
    expect(runs.map((run) => [run.name, run.error, run.parent_run_id])).toEqual([
      ["graph", "Run ended: lost its worker", null],
      ["node", "Run ended: lost its worker", rootId],
    ]);
    expect(
      runs.every(
        (run) =>
          run.session_name === "p" && run.extra.metadata && (run.extra.metadata as { run_id: string }).run_id === "r",
      ),
    ).toBe(true);
    expect(tracer.takeRuns()).toEqual([]);
  });

  it("keeps a model's call options but not the runtime handles a whole config carries, so the trace can be sent", async () => {
    // createReactAgent invokes its model with the node's config: LangGraph's store (which holds the
    // Worker's bindings) and stream writer land among the model's call options.
    const tracer = new AgentRunTracer({ thread_id: "t", run_id: "r", assistant_id: "a", graph_id: "g" }, "p");
    class PlatformStore {
      constructor(readonly bindings: typeof env) {}
    }
    const tools = [{ type: "function", function: { name: "calculator", parameters: { type: "object" } } }];
    const runId = crypto.randomUUID();
    await tracer.handleChatModelStart({ lc: 1, type: "not_implemented", id: ["ChatOpenAI"] }, [[]], runId, undefined, {
      options: {
        tools,
        tool_choice: "auto",
        stream_options: { include_usage: true },
        store: new PlatformStore(env),
        writer: () => undefined,
        signal: new AbortController().signal,
      },
      invocation_params: { model: "gpt-4.1-mini" },
    });
    await tracer.handleLLMEnd({ generations: [] }, runId);
    const [run] = tracer.takeRuns();
    expect(run.extra.options).toEqual({ tools, tool_choice: "auto", stream_options: { include_usage: true } });
    expect(run.extra.invocation_params).toEqual({ model: "gpt-4.1-mini" });
    // What the shard's RPC does with it.
    expect(() => structuredClone(run)).not.toThrow();
  });

  it("hands a long trace over in batches of bounded size, and the sink stores it whole", async () => {
    const project = `batched-${crypto.randomUUID()}`;
    const tracer = new AgentRunTracer({ thread_id: "t", run_id: "r", assistant_id: "a", graph_id: "g" }, project);
    const rootId = crypto.randomUUID();
    const open = (id: string, parent: string | undefined, inputs: Record<string, unknown>, order: number) =>
      tracer._addRunToRunMap({
        id,
        name: parent ? `llm-${order}` : "graph",
        run_type: parent ? "llm" : "chain",
        parent_run_id: parent,
        start_time: Date.parse("2026-11-22T09:00:00Z") + order,
        inputs,
        execution_order: order,
        child_runs: [],
        child_execution_order: order,
        events: [],
        tags: [],
      } as never);
    open(rootId, undefined, {}, 1);
    // A conversation that grows with every step, as an agent's does.
    const steps = Array.from({ length: 40 }, () => crypto.randomUUID());
    steps.forEach((id, i) => open(id, rootId, { messages: "m".repeat(2_000 * (i + 1)) }, i + 2));
    const batches = [...tracer.takeRunBatches("Cancelled", 200_000)];
    expect(batches.length).toBeGreaterThan(4);
    for (const batch of batches) expect(2 * JSON.stringify(batch).length).toBeLessThanOrEqual(200_000 + 1_000);
    expect(batches.flat().map((run) => run.id)).toEqual([rootId, ...steps]);

    const sink = agentTraceSink(env, { threadId: "t", workspaceId: DEFAULT_WORKSPACE_ID } as ThreadRecord);
    await sink!.record(batches);
    const stored = await json<{ runs: TraceRun[] }>(
      await call("/api/v1/runs/query", {
        method: "POST",
        json: { trace: rootId, order: "asc", limit: 100, select: ["id"] },
      }),
    );
    expect(stored.runs.map((run) => run.id).sort()).toEqual([rootId, ...steps].sort());
  });

  it("rejects a langsmith_tracer that is not an object with a project name", async () => {
    const threadId = (await json<ThreadJson>(await post("/threads", {}))).thread_id;
    const response = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: "echo",
      input: human("hi"),
      langsmith_tracer: { project_name: 7 },
    });
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain("langsmith_tracer");
  });
});
