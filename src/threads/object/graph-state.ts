// Inside the thread's Durable Object (threads/object/): binding the deployed graph, and a checkpoint as the thread's state JSON.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import { toJson, toJsonObject } from "../../db/serialize.ts";
import type { LoadedGraph } from "../../deployment/graphs.ts";
import { graphs } from "../../deployment/index.ts";
import type { CheckpointRef, CheckpointSelector, ThreadStateJson, ThreadTaskJson } from "../types.ts";

/** Node names an update may be attributed to besides the graph's own nodes. */
const SPECIAL_NODES = ["__input__", "__start__", "__end__", "__copy__"];

/**
 * The deployed graph bound to this thread's checkpointer. A copy (`withConfig`), because the compiled
 * graph is shared by every Durable Object of the isolate.
 */
export async function bindGraph(
  graphId: string,
  checkpointer: BaseCheckpointSaver,
  config: RunnableConfig,
  store?: BaseStore,
): Promise<LoadedGraph | undefined> {
  const graph = await graphs.load(graphId, config);
  if (!graph) return undefined;
  const bound = graph.withConfig({}) as LoadedGraph;
  bound.checkpointer = checkpointer;
  if (store) bound.store = store;
  return bound;
}

/** Why `asNode` cannot be used with this graph, or null when it can. */
export function unknownNode(graph: LoadedGraph, graphId: string, asNode: string): string | null {
  if (SPECIAL_NODES.includes(asNode) || asNode in graph.nodes) return null;
  const nodes = Object.keys(graph.nodes).filter((n) => !n.startsWith("__"));
  return `as_node "${asNode}" is not a node of graph "${graphId}" (nodes: ${nodes.join(", ")})`;
}

export function checkpointConfig(threadId: string, selector: CheckpointSelector = {}): RunnableConfig {
  const configurable: Record<string, unknown> = { thread_id: threadId, checkpoint_ns: selector.checkpoint_ns ?? "" };
  if (selector.checkpoint_id) configurable.checkpoint_id = selector.checkpoint_id;
  if (selector.checkpoint_map) configurable.checkpoint_map = selector.checkpoint_map;
  return { configurable };
}

/**
 * The config a thread's graph is built with outside runs (state reads, updates, history): the
 * thread's config, which a graph factory may depend on, addressed to the thread's root checkpoints.
 */
export function threadGraphConfig(thread: { threadId: string; config: Record<string, unknown> }): RunnableConfig {
  // A copy: the record's config is shared by every reader of the thread, and a graph factory may change it.
  const config = structuredClone(thread.config);
  const configurable = config.configurable;
  return {
    ...config,
    configurable: {
      ...(configurable && typeof configurable === "object" ? configurable : {}),
      ...checkpointConfig(thread.threadId).configurable,
    },
  };
}

export function checkpointRef(config: RunnableConfig | undefined): CheckpointRef | null {
  const configurable = config?.configurable;
  if (!configurable?.thread_id) return null;
  return {
    thread_id: String(configurable.thread_id),
    checkpoint_ns: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
    checkpoint_id: typeof configurable.checkpoint_id === "string" ? configurable.checkpoint_id : null,
    checkpoint_map: (configurable.checkpoint_map as Record<string, unknown> | undefined) ?? null,
  };
}

export const EMPTY_STATE: ThreadStateJson = {
  values: {},
  next: [],
  tasks: [],
  metadata: {},
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
  checkpoint_id: null,
  parent_checkpoint_id: null,
  interrupts: [],
};

const isSnapshot = (value: unknown): value is StateSnapshot =>
  typeof value === "object" && value !== null && "values" in value && "next" in value;

/**
 * `graphId` joins the metadata, as on the platform's states (LangGraph itself adds `thread_id`).
 */
export function stateJson(snapshot: StateSnapshot, graphId?: string): ThreadStateJson {
  const tasks: ThreadTaskJson[] = snapshot.tasks.map((task) => ({
    id: task.id,
    name: task.name,
    path: (toJson(task.path ?? []) as unknown[]) ?? [],
    error: task.error ? errorText(task.error) : null,
    interrupts: (toJson(task.interrupts) as unknown[]) ?? [],
    checkpoint: task.state && !isSnapshot(task.state) ? toJsonObject(task.state.configurable) : null,
    state: isSnapshot(task.state) ? stateJson(task.state, graphId) : null,
    result: task.result === undefined ? null : toJson(task.result),
  }));
  const checkpoint = checkpointRef(snapshot.config);
  const parent = checkpointRef(snapshot.parentConfig);
  return {
    values: toJson(snapshot.values) ?? {},
    next: [...snapshot.next],
    tasks,
    metadata: { ...(graphId ? { graph_id: graphId } : {}), ...toJsonObject(snapshot.metadata) },
    created_at: snapshot.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parent,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parent?.checkpoint_id ?? null,
    interrupts: tasks.flatMap((task) => task.interrupts),
  };
}

/** `{task_id: interrupts}` of the tasks that are waiting on an interrupt, for the thread record. */
export function pendingInterrupts(state: ThreadStateJson): Record<string, unknown[]> {
  return Object.fromEntries(state.tasks.filter((t) => t.interrupts.length > 0).map((t) => [t.id, t.interrupts]));
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === "string" ? error : JSON.stringify(toJson(error));
}
