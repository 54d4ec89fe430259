import { Annotation, interrupt, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

/**
 * A four-step pipeline for exercising runs: each step records itself in `items`; `review` can pause
 * for a human (`ask_human`) and `delay_ms` slows every node down (for cancellation, streaming and the
 * wall-clock limit).
 */
export const StepsState = Annotation.Root({
  items: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  ask_human: Annotation<boolean>(),
  answer: Annotation<unknown>(),
  delay_ms: Annotation<number>(),
});

type State = typeof StepsState.State;

/** Waits `delay_ms`, or until the run is stopped (cancelled, or over its wall-clock limit). */
function pause(state: State, config: LangGraphRunnableConfig): Promise<void> | undefined {
  if (!(state.delay_ms > 0)) return undefined;
  return new Promise<void>((resolve, reject) => {
    const signal = config.signal;
    const timer = setTimeout(resolve, state.delay_ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

const step = (name: string) => async (state: State, config: LangGraphRunnableConfig) => {
  await pause(state, config);
  return { items: [name] };
};

async function review(state: State, config: LangGraphRunnableConfig) {
  await pause(state, config);
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
