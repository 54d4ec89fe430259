import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

/**
 * The smallest useful graph: one node that greets whoever the run names and counts the greetings of
 * the thread. Start here and add nodes, edges and state.
 */

const State = Annotation.Root({
  /** Who to greet: the run's input. */
  name: Annotation<string>(),
  greeting: Annotation<string>(),
  /** Summed over the thread's runs (the reducer adds each run's 1). */
  count: Annotation<number>({ reducer: (total, more) => total + more, default: () => 0 }),
});

function greet(state: typeof State.State, config: LangGraphRunnableConfig) {
  // A setting from the environment (.env, or the Worker's vars), and one from the run's config.
  const word = process.env.GREETING || "Hello";
  const punctuation = config.configurable?.excited ? "!" : ".";
  return { greeting: `${word}, ${state.name || "world"}${punctuation}`, count: 1 };
}

/** The graph before compiling: tests compile it with a checkpointer of their own. */
export const builder = new StateGraph(State)
  .addNode("greet", greet)
  .addEdge("__start__", "greet")
  .addEdge("greet", "__end__");

/** The platform gives the compiled graph its own checkpointer (threads are kept in Durable Objects). */
export const graph = builder.compile();
