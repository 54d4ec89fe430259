import { BaseTracer, type Run } from "@langchain/core/tracers/base";
import { bySize, rpcBytes } from "../core/batches.ts";
import { isObject, isPlainObject } from "../core/json.ts";
import { MAX_SHARD_RPC_BYTES } from "../core/limits.ts";
import { toJson } from "../db/serialize.ts";

/**
 * Traces the Agent Server's own runs: a LangChain callback handler that collects the run tree
 * (graph, nodes, model and tool calls) in memory while the graph executes and hands it over, as
 * runs in the ingestion format, once the run is over, in batches of bounded size. Nothing is written
 * while the graph runs, so tracing costs a run only the callback bookkeeping LangChain does anyway.
 */

/** The project agent runs are traced into when neither the deployment nor the run names one. */
export const DEFAULT_AGENT_PROJECT = "agent-runs";

/** A traced run as the ingestion path takes it (see `RunPostSchema` in schemas.ts). */
export type TracedRun = {
  id: string;
  name: string;
  run_type: string;
  start_time: number;
  end_time: number;
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown> | null;
  error: string | null;
  extra: Record<string, unknown>;
  events: Record<string, unknown>[];
  tags: string[];
  parent_run_id: string | null;
  trace_id: string;
  dotted_order: string;
  session_name: string;
};

/** The ids every traced run carries in its metadata, so a trace leads back to its thread and run. */
export type AgentRunIds = { thread_id: string; run_id: string; assistant_id: string; graph_id: string };

const HIDDEN = "langsmith:hidden";
const asObject = (value: unknown): Record<string, unknown> => {
  const json = toJson(value);
  if (isObject(json)) return json;
  return json === null || json === undefined ? {} : { output: json };
};

export class AgentRunTracer extends BaseTracer {
  name = "agent_server_tracer";
  readonly #finished: Run[] = [];

  constructor(
    private readonly ids: AgentRunIds,
    private readonly project: string,
  ) {
    // Awaited inline: the tree must be complete when the graph's stream ends.
    super({ _awaitHandler: true });
  }

  protected async persistRun(run: Run): Promise<void> {
    this.#finished.push(run);
  }

  /**
   * Every run of the finished trees, parents before children. Runs still open (a cancelled or
   * crashed graph never ends them) are closed now with `reason` as their error.
   */
  takeRuns(reason = "Cancelled"): TracedRun[] {
    return [...this.takeRunBatches(reason, Number.POSITIVE_INFINITY)].flat();
  }

  /**
   * The runs of `takeRuns` in consecutive batches of about `maxBytes` of JSON each (a run larger
   * than that goes alone), converted as they are taken: the tracer lets go of each run once it is
   * converted, so a long trace is never held twice, and never whole in one RPC (see MAX_SHARD_RPC_BYTES).
   */
  takeRunBatches(reason = "Cancelled", maxBytes = MAX_SHARD_RPC_BYTES): Generator<TracedRun[]> {
    // Measured as the ingestor measures a run for its RPC.
    return bySize(this.#takeConverted(reason), rpcBytes, maxBytes);
  }

  /** The runs, converted one by one as they are read, each let go of once converted. */
  *#takeConverted(reason: string): Generator<TracedRun> {
    const endedAt = Date.now();
    const roots = [...this.#finished];
    this.#finished.length = 0;
    for (const open of this.runMap.values()) {
      if (open.parent_run_id === undefined) roots.push(open);
    }
    this.runMap.clear();
    // Depth first, parents before children, in the order they ran.
    const pending: Run[] = roots.reverse();
    for (let run = pending.pop(); run; run = pending.pop()) {
      const children = run.child_runs;
      run.child_runs = [];
      if (!isHiddenLeaf({ ...run, child_runs: children })) yield this.#convert(run, endedAt, reason);
      for (let i = children.length - 1; i >= 0; i--) pending.push(children[i]);
    }
  }

  #convert(run: Run, endedAt: number, reason: string): TracedRun {
    const open = run.end_time === undefined;
    const extra = { ...(run.extra ?? {}) };
    if (isObject(extra.options)) extra.options = callOptionsOnly(extra.options);
    extra.metadata = { ...((extra.metadata as Record<string, unknown> | undefined) ?? {}), ...this.ids };
    return {
      id: run.id,
      name: run.name,
      run_type: run.run_type,
      start_time: run.start_time,
      end_time: run.end_time ?? endedAt,
      inputs: asObject(run.inputs),
      outputs: run.outputs === undefined ? null : asObject(run.outputs),
      error: run.error ?? (open ? reason : null),
      extra: asObject(extra),
      events: compactEvents(run.events),
      tags: run.tags ?? [],
      parent_run_id: run.parent_run_id ?? null,
      trace_id: run.trace_id ?? run.id,
      dotted_order: run.dotted_order ?? "",
      session_name: this.project,
    };
  }
}

/**
 * A model run's call options without what is not an option: a model invoked with the node's whole
 * config (as createReactAgent's is) gets LangGraph's runtime handles among its options, the run's
 * store among them, and the store holds the Worker's bindings, whose every property reads as an RPC
 * method: converted, they would fail the whole trace's RPC to its shard (DataCloneError). Options are
 * data: primitives, arrays and plain objects (tools, tool_choice, stop, stream_options...) stay;
 * class instances and functions go.
 */
function callOptionsOnly(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) =>
      value === null || typeof value !== "object"
        ? typeof value !== "function"
        : Array.isArray(value) || isPlainObject(value),
    ),
  );
}

/** LangGraph's bookkeeping runs (channel writes) are tagged hidden; the UI never shows them. */
function isHiddenLeaf(run: Run): boolean {
  return (run.tags ?? []).includes(HIDDEN) && run.child_runs.every(isHiddenLeaf);
}

/**
 * Run events without the per-token stream: `start`, `end`, errors and the first `new_token` (the
 * time to first token) are kept; a long completion would otherwise store one event per token.
 */
function compactEvents(events: Run["events"]): Record<string, unknown>[] {
  let sawToken = false;
  const kept: Record<string, unknown>[] = [];
  for (const event of events ?? []) {
    if (event.name === "new_token") {
      if (sawToken) continue;
      sawToken = true;
    }
    kept.push(asObject(event));
  }
  return kept;
}

/**
 * The project a run is traced into: the run's own choice (`langsmith_tracer.project_name`, or
 * `configurable.langsmith_project` as the SDK sets it), else the deployment's, else the default.
 */
export function agentTraceProject(
  configured: string | undefined,
  kwargs: { langsmith_tracer?: { project_name?: string } | null; config: Record<string, unknown> },
): string {
  if (kwargs.langsmith_tracer?.project_name) return kwargs.langsmith_tracer.project_name;
  const configurable = kwargs.config.configurable as { langsmith_project?: unknown } | undefined;
  if (typeof configurable?.langsmith_project === "string" && configurable.langsmith_project)
    return configurable.langsmith_project;
  return configured?.trim() || DEFAULT_AGENT_PROJECT;
}
