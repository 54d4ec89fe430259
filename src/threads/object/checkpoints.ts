// Inside the thread's Durable Object (threads/object/): the thread's checkpoint saver and the graphs bound to it.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { SqlStore } from "../../db/sql.ts";
import type { LoadedGraph } from "../../deployment/graphs.ts";
import { type CheckpointChangeListener, SqliteCheckpointSaver } from "./checkpointer.ts";
import { bindGraph, threadGraphConfig } from "./graph-state.ts";
import type { ThreadRecord } from "./record.ts";

/** A deployed graph bound to the thread, with the id it was deployed under. */
export type ThreadGraph = LoadedGraph & { graphId: string };

/**
 * The thread's checkpoint saver over the Durable Object's SQLite, and the deployed graphs bound to
 * it. The saver tells `onChange` of every checkpoint it changes, so derived caches stay honest; it is
 * replaced when the thread's storage is wiped.
 */
export class ThreadCheckpoints {
  #saver: SqliteCheckpointSaver;

  constructor(
    private readonly sql: SqlStore,
    private readonly onChange: CheckpointChangeListener,
    /** The workspace's long-term memory store, for the graph's nodes. */
    private readonly memory: (workspaceId: string) => BaseStore,
  ) {
    this.#saver = this.#newSaver();
  }

  get saver(): SqliteCheckpointSaver {
    return this.#saver;
  }

  /** The thread's graph as state reads and updates use it, or undefined when it has none deployed. */
  async graph(record: ThreadRecord): Promise<ThreadGraph | undefined> {
    const graphId = record.metadata.graph_id;
    if (typeof graphId !== "string") return undefined;
    const graph = await bindGraph(graphId, this.#saver, threadGraphConfig(record), this.memory(record.workspaceId));
    return graph && Object.assign(graph, { graphId });
  }

  /** A deployed graph bound to this thread's checkpoints with a run's config. */
  bind(graphId: string, config: RunnableConfig, workspaceId: string | undefined): Promise<LoadedGraph | undefined> {
    return bindGraph(graphId, this.#saver, config, workspaceId === undefined ? undefined : this.memory(workspaceId));
  }

  /** Forgets everything held for the old storage (after a wipe). */
  reset(): void {
    this.#saver = this.#newSaver();
  }

  #newSaver(): SqliteCheckpointSaver {
    return new SqliteCheckpointSaver(this.sql, undefined, this.onChange);
  }
}
