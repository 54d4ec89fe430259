import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

/**
 * A graph with a subgraph, for `stream_subgraphs` (events named `<mode>|child:<task id>`), and a node
 * that records what the platform put in its config (`seen`), so clients can check both.
 */
const State = Annotation.Root({
  trail: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  seen: Annotation<Record<string, unknown>>(),
});

const child = new StateGraph(State)
  .addNode("inner", () => ({ trail: ["inner"] }))
  .addEdge("__start__", "inner")
  .addEdge("inner", "__end__")
  .compile();

/**
 * Every scalar configurable value the run provides (ids, assistant settings, copied `x-` headers),
 * and the identity of the custom-auth user it acts for, if any.
 */
function observe(_state: typeof State.State, config: LangGraphRunnableConfig) {
  const configurable = config.configurable ?? {};
  const identity = (key: string) => (configurable[key] as { identity?: unknown } | undefined)?.identity;
  const seen = Object.fromEntries(
    Object.entries(configurable).filter(
      ([key, value]) => !key.startsWith("__") && !key.startsWith("checkpoint_") && typeof value !== "object",
    ),
  );
  const authIdentity = identity("langgraph_auth_user") ?? identity("platform_auth_user") ?? null;
  return {
    seen: { ...seen, metadata_run_id: config.metadata?.run_id ?? null, auth_identity: authIdentity },
    trail: ["observe"],
  };
}

export const graph = new StateGraph(State)
  .addNode("observe", observe)
  .addNode("child", child)
  .addEdge("__start__", "observe")
  .addEdge("observe", "child")
  .addEdge("child", "__end__")
  .compile();
