import type { CompiledGraph, LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";
import { describeValue, graphExportKind } from "./graph-kind.ts";
import type { DeploymentManifest, GraphEntry } from "./manifest.ts";

export type LoadedGraph = CompiledGraph<string>;
type GraphFactory = (config: LangGraphRunnableConfig) => unknown;

/**
 * The deployed graphs, looked up by graph id. Compiled and uncompiled exports are resolved once per
 * isolate; a factory export is called for every load with the run's effective config.
 */
export class GraphRegistry {
  readonly #entries: Map<string, GraphEntry>;
  readonly #resolved = new Map<string, LoadedGraph>();

  constructor(manifest: Pick<DeploymentManifest, "graphs">) {
    this.#entries = new Map(manifest.graphs.map((entry) => [entry.id, entry]));
  }

  ids(): string[] {
    return [...this.#entries.keys()];
  }

  has(graphId: string): boolean {
    return this.#entries.has(graphId);
  }

  entry(graphId: string): GraphEntry | undefined {
    return this.#entries.get(graphId);
  }

  /** Returns the compiled graph for `graphId`, or undefined when the deployment has no such graph. */
  async load(graphId: string, config: LangGraphRunnableConfig = {}): Promise<LoadedGraph | undefined> {
    const entry = this.#entries.get(graphId);
    if (!entry) return undefined;
    const cached = this.#resolved.get(graphId);
    if (cached) return cached;

    const exported = entry.module[entry.exportName];
    if (graphExportKind(exported) === "factory") {
      return this.#toCompiled(entry, await (exported as GraphFactory)(config));
    }
    const graph = await this.#toCompiled(entry, exported);
    this.#resolved.set(graphId, graph);
    return graph;
  }

  async #toCompiled(entry: GraphEntry, value: unknown): Promise<LoadedGraph> {
    const settled = await value;
    switch (graphExportKind(settled)) {
      case "compiled":
        return settled as LoadedGraph;
      case "uncompiled":
        return (settled as StateGraph<unknown>).compile() as unknown as LoadedGraph;
      default:
        throw new Error(`Graph "${entry.id}" (${entry.source}) did not produce a graph: got ${describeValue(settled)}`);
    }
  }
}
