import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** Answers every turn with an AI message whose content is the last human message's content. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", (state: typeof MessagesAnnotation.State) => {
    const lastHuman = state.messages.findLast((message) => HumanMessage.isInstance(message));
    return { messages: [new AIMessage({ content: lastHuman?.content ?? "" })] };
  })
  .addEdge("__start__", "respond")
  .addEdge("respond", "__end__")
  .compile();
