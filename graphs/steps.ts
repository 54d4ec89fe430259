import { Annotation, interrupt, StateGraph } from "@langchain/langgraph";

/**
 * A four-step pipeline for exercising runs: each step records itself in `items`; `review` can pause
 * for a human (`ask_human`) and `delay_ms` slows every node down (for cancellation and streaming).
 */
export const StepsState = Annotation.Root({
  items: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  ask_human: Annotation<boolean>(),
  answer: Annotation<unknown>(),
  delay_ms: Annotation<number>(),
});

type State = typeof StepsState.State;

const pause = (state: State) =>
  state.delay_ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, state.delay_ms)) : undefined;

const step = (name: string) => async (state: State) => {
  await pause(state);
  return { items: [name] };
};

async function review(state: State) {
  await pause(state);
  if (!state.ask_human) return { items: ["review"] };
  const answer = interrupt({ question: "approve?", items: state.items });
  return { answer, items: ["review"] };
}

export const graph = new StateGraph(StepsState)
  .addNode("step1", step("step1"))
  .addNode("step2", step("step2"))
  .addNode("step3", step("step3"))
  .addNode("review", review)
  .addEdge("__start__", "step1")
  .addEdge("step1", "step2")
  .addEdge("step2", "step3")
  .addEdge("step3", "review")
  .addEdge("review", "__end__")
  .compile();
