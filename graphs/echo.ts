import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { messageText } from "./lib/message-text.ts";

/** Answers every turn with the text of the last human message (string or content blocks). */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state: typeof MessagesAnnotation.State) => {
    const lastHuman = state.messages.findLast((message) => HumanMessage.isInstance(message));
    return { messages: [new AIMessage({ content: messageText(lastHuman) })] };
  })
  .addEdge("__start__", "respond")
  .addEdge("respond", "__end__")
  .compile();
