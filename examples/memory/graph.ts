import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/**
 * A memory agent without a chat model: it remembers what a user tells it and, asked a question,
 * recalls the memories closest in meaning (langgraph.json `store.index` embeds every memory's `text`).
 * Memories live under ["memories", <user_id>], so each user has their own, across threads.
 */

const textOf = (message: HumanMessage): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

/** Related enough to mention: cosine similarity of the question and the memory. */
const MIN_SCORE = 0.3;

async function respond(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
  const store = config.store;
  if (!store) throw new Error("The memory example needs the platform's store");
  const userId = typeof config.configurable?.user_id === "string" ? config.configurable.user_id : "anonymous";
  const namespace = ["memories", userId];
  const last = state.messages.findLast((message) => HumanMessage.isInstance(message));
  const text = last ? textOf(last).trim() : "";
  if (!text) return { messages: [new AIMessage("Tell me something about you, or ask me what I remember.")] };

  if (!text.endsWith("?")) {
    await store.put(namespace, crypto.randomUUID(), { text });
    return { messages: [new AIMessage(`I'll remember that: "${text}"`)] };
  }
  const memories = await store.search(namespace, { query: text, limit: 3 });
  const related = memories.filter((memory) => (memory.score ?? 0) >= MIN_SCORE);
  if (!related.length) return { messages: [new AIMessage("I don't remember anything about that.")] };
  const lines = related.map((memory) => `- ${String(memory.value.text)} (score ${memory.score!.toFixed(2)})`);
  return { messages: [new AIMessage(`Here is what I remember:\n${lines.join("\n")}`)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("respond", respond)
  .addEdge("__start__", "respond")
  .addEdge("respond", "__end__")
  .compile();
