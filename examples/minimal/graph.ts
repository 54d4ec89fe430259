import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

const CounterState = Annotation.Root({
  count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  greeting: Annotation<string>(),
});

function build(greeting: string) {
  return new StateGraph(CounterState)
    .addNode("increment", () => ({ count: 1, greeting }))
    .addEdge("__start__", "increment")
    .addEdge("increment", "__end__");
}

/** An uncompiled StateGraph: the platform compiles it. */
export const counter = build(process.env.GREETING ?? "hello");

/** A factory: the platform calls it with each run's config. */
export function greeterFactory(config: LangGraphRunnableConfig) {
  const name = typeof config.configurable?.name === "string" ? config.configurable.name : "world";
  return build(`hello, ${name}`).compile();
}
