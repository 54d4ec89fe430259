import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { messageText } from "./lib/message-text.ts";

/**
 * A graph factory: the platform calls it with the run's config (and with the thread's config for
 * state reads and updates). Its one node, which echoes the last human message, is named by
 * `configurable.nodeName` (default `respond`), so what a thread's graph looks like depends on its config.
 */
export function graph(config: LangGraphRunnableConfig) {
  const nodeName = typeof config.configurable?.nodeName === "string" ? config.configurable.nodeName : "respond";
  return new StateGraph(MessagesAnnotation)
    .addNode(nodeName, (state: typeof MessagesAnnotation.State) => {
      const lastHuman = state.messages.findLast((message) => HumanMessage.isInstance(message));
      return { messages: [new AIMessage({ content: messageText(lastHuman) })] };
    })
    .addEdge("__start__", nodeName)
    .addEdge(nodeName, "__end__")
    .compile();
}
