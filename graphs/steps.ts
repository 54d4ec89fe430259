import { Annotation, interrupt, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

/**
 * A four-step pipeline for exercising runs: each step records itself in `items`; `review` can pause
 * for a human (`ask_human`) and `delay_ms` slows every node down (for the wall-clock limit and the
 * bench).
 *
 * A gate holds a run busy for exactly as long as a test needs, with no timing assumption: a run whose
 * `config.configurable.gates` maps a node to a gate name (`{ "step2": "<name>" }`) stops before that
 * node until the store holds an item under the namespace ["gates"] with that name as key (the test
 * opens it with `PUT /store/items`), or until the run is stopped (cancelled, or over its wall-clock
 * limit). The store is the signal because a node reaches it in workerd tests and in the local server
 * alike, and a test can write it with one call. The gates live in the configurable, not the state, so
 * they never show in the graph's values; like any request config they carry over to the thread's
 * next run, which passes a gate once it is open.
 */
export const StepsState = Annotation.Root({
  items: Annotation<string[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  ask_human: Annotation<boolean>(),
  answer: Annotation<unknown>(),
  delay_ms: Annotation<number>(),
});

type State = typeof StepsState.State;

/** The store namespace of the gates. */
export const GATES = ["gates"];

/** How long a node at a closed gate waits before it looks again: 5 ms, doubling up to 50 ms. */
const GATE_FIRST_LOOK_MS = 5;
const GATE_LAST_LOOK_MS = 50;

/** Waits `ms`, or rejects as soon as the run is stopped (cancelled, or over its wall-clock limit). */
function stoppable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** Waits until the run's gate before `node`, if it has one, is open in the store (or the run is stopped). */
async function passGate(node: string, config: LangGraphRunnableConfig): Promise<void> {
  const gates: unknown = config.configurable?.gates;
  const gate = gates !== null && typeof gates === "object" ? (gates as Record<string, unknown>)[node] : undefined;
  if (typeof gate !== "string") return;
  const store = config.store;
  if (!store) throw new Error("A gated steps run needs the platform's store");
  for (let wait = GATE_FIRST_LOOK_MS; !(await store.get(GATES, gate)); wait = Math.min(wait * 2, GATE_LAST_LOOK_MS))
    await stoppable(wait, config.signal);
}

/** The gate at this node, then `delay_ms`. */
async function pause(node: string, state: State, config: LangGraphRunnableConfig): Promise<void> {
  await passGate(node, config);
  if (state.delay_ms > 0) await stoppable(state.delay_ms, config.signal);
}

const step = (name: string) => async (state: State, config: LangGraphRunnableConfig) => {
  await pause(name, state, config);
  return { items: [name] };
};

async function review(state: State, config: LangGraphRunnableConfig) {
  await pause("review", state, config);
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
