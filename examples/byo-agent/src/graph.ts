import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { getLogger } from "@langchain/langgraph-sdk/logging";
import { typedUi, type UIMessage, uiMessageReducer } from "@langchain/langgraph-sdk/react-ui/server";
import { greet } from "fun-greeting";
import type components from "./ui.tsx";

// At module load, as the official servers allow.
const logger = getLogger();
logger.info("greeter graph loaded");

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  ui: Annotation<UIMessage[]>({ reducer: uiMessageReducer, default: () => [] }),
  /** Whether the input message is an instance of this project's HumanMessage (one shared copy). */
  shared_core: Annotation<boolean>(),
});

/** Greets the sender of the last message, with a greeting from the project's own package. */
export const graph = new StateGraph(State)
  .addNode("greet", (state: typeof State.State, config: LangGraphRunnableConfig) => {
    const last = state.messages.at(-1);
    // `.text` reads string content and chat UIs' content blocks alike.
    const name = last?.text || "stranger";
    logger.info("greeting", { name });
    const message = new AIMessage({
      id: crypto.randomUUID(),
      content: `${greet(name)} (${process.env.GREETER_SIGNATURE})`,
    });
    typedUi<typeof components>(config).push({ name: "greeting", props: { name } }, { message });
    return { messages: [message], shared_core: last instanceof HumanMessage };
  })
  .addEdge("__start__", "greet")
  .compile();
