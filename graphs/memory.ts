import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { messageText } from "./lib/message-text.ts";

/**
 * Long-term memory through the platform's store: every human message is saved under
 * ["memories", <user_id>], and the reply says how many memories that user has and recalls the ones
 * closest to the message. With langgraph.json `store.index`, "closest" is by meaning (each recalled
 * memory with its score); without one, the store matches the message's text. Items put through the
 * /store API under the same namespace count too.
 */
async function remember(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
  const store = config.store;
  if (!store) throw new Error("The memory graph needs the platform's store");
  const userId = typeof config.configurable?.user_id === "string" ? config.configurable.user_id : "default";
  const namespace = ["memories", userId];
  const last = state.messages.findLast((message) => HumanMessage.isInstance(message));
  const text = last ? messageText(last) : "";
  // Recalled before the message is saved, so it does not recall itself.
  const recalled = text ? await store.search(namespace, { query: text, limit: 3 }) : [];
  if (text) await store.put(namespace, crypto.randomUUID(), { text });
  const memories = await store.search(namespace, { limit: 1000 });
  const lines = [`I have ${memories.length} memories for you.`];
  // Memories are `{text}`; items of another shape under the namespace are counted, not recalled.
  const related = recalled.filter(
    (item) => typeof item.value.text === "string" && (item.score === undefined || item.score > 0),
  );
  if (related.length) {
    const shown = related.map((item) =>
      item.score === undefined ? item.value.text : `${item.value.text} (${item.score.toFixed(3)})`,
    );
    lines.push(`Related: ${shown.join("; ")}`);
  }
  return { messages: [new AIMessage(lines.join("\n"))] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("remember", remember)
  .addEdge("__start__", "remember")
  .addEdge("remember", "__end__")
  .compile();
