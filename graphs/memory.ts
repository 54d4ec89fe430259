import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { messageText } from "./lib/message-text.ts";

/**
 * Long-term memory through the platform's store: every human message is saved under
 * ["memories", <user_id>] and the reply says how many memories that user has. Items put through the
 * /store API under the same namespace are counted too.
 */
async function remember(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
  const store = config.store;
  if (!store) throw new Error("The memory graph needs the platform's store");
  const userId = typeof config.configurable?.user_id === "string" ? config.configurable.user_id : "default";
  const namespace = ["memories", userId];
  const last = state.messages.findLast((message) => HumanMessage.isInstance(message));
  if (last) await store.put(namespace, crypto.randomUUID(), { text: messageText(last) });
  const memories = await store.search(namespace, { limit: 1000 });
  return { messages: [new AIMessage(`I have ${memories.length} memories for you.`)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("remember", remember)
  .addEdge("__start__", "remember")
  .addEdge("remember", "__end__")
  .compile();
