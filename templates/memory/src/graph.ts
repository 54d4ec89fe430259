import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseStore, type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
import { chatModel } from "./model.ts";

/**
 * A chat agent with a long-term memory of each user, across threads: it saves what is worth keeping
 * with `upsert_memory`, and before it answers, recalls the memories closest in meaning to the user's
 * message (langgraph.json `store.index` embeds each memory's `content`, so "what should I cook?"
 * finds "loves spicy ramen"). Memories live in the store under ["memories", <user_id>], where
 * `user_id` is the run's `configurable.user_id`.
 */

type State = typeof MessagesAnnotation.State;

/** How many memories the model sees with each message. */
const RECALLED = 5;

/** The tool the model saves memories with; `store_memories` carries out its calls. */
const UPSERT_MEMORY = {
  name: "upsert_memory",
  description:
    "Save a memory about the user: a fact, a preference, a plan. Pass memory_id (shown before each memory you remember) to update that memory instead of adding one.",
  schema: z.object({
    content: z.string().describe("The memory, e.g. 'Loves spicy ramen'"),
    context: z.string().optional().describe("When or why the user said it"),
    memory_id: z.string().optional().describe("The id of the memory to update"),
  }),
};

function storeOf(config: LangGraphRunnableConfig): BaseStore {
  if (!config.store) throw new Error("The memory agent needs a store (the platform gives every run one)");
  return config.store;
}

function namespaceOf(config: LangGraphRunnableConfig): string[] {
  const userId = config.configurable?.user_id;
  return ["memories", typeof userId === "string" && userId ? userId : "anonymous"];
}

const textOf = (message: HumanMessage): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");

async function callModel(state: State, config: LangGraphRunnableConfig) {
  const last = state.messages.findLast((message) => HumanMessage.isInstance(message));
  const query = last ? textOf(last).trim() : "";
  const memories = query ? await storeOf(config).search(namespaceOf(config), { query, limit: RECALLED }) : [];
  const remembered = memories.map(
    (memory) =>
      `- [${memory.key}] ${String(memory.value.content)}${memory.value.context ? ` (${String(memory.value.context)})` : ""}`,
  );
  const system =
    "You are a helpful assistant with a long-term memory of the user. Save what is worth remembering about " +
    "them with upsert_memory, and use what you remember.\n\nWhat you remember about the user, closest first:\n" +
    (remembered.join("\n") || "(nothing yet)");
  const model = chatModel().bindTools([UPSERT_MEMORY]);
  return { messages: [await model.invoke([{ role: "system", content: system }, ...state.messages])] };
}

/** Carries out the model's upsert_memory calls. */
async function storeMemories(state: State, config: LangGraphRunnableConfig) {
  const last = state.messages.at(-1) as AIMessage;
  const messages = await Promise.all(
    (last.tool_calls ?? []).map(async (call) => {
      const parsed = UPSERT_MEMORY.schema.safeParse(call.args);
      if (!parsed.success) {
        return new ToolMessage({
          tool_call_id: call.id!,
          name: call.name,
          content: `Not saved: ${parsed.error.message}`,
        });
      }
      const { content, context, memory_id } = parsed.data;
      const key = memory_id ?? crypto.randomUUID();
      await storeOf(config).put(namespaceOf(config), key, { content, context: context ?? null });
      return new ToolMessage({ tool_call_id: call.id!, name: call.name, content: `Saved memory ${key}` });
    }),
  );
  return { messages };
}

const hasToolCalls = (state: State) => {
  const last = state.messages.at(-1);
  return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "store_memories" : "__end__";
};

/** The graph before compiling: tests compile it with a store and a checkpointer of their own. */
export const builder = new StateGraph(MessagesAnnotation)
  .addNode("call_model", callModel)
  .addNode("store_memories", storeMemories)
  .addEdge("__start__", "call_model")
  .addConditionalEdges("call_model", hasToolCalls, ["store_memories", "__end__"])
  .addEdge("store_memories", "call_model");

/** The platform gives the compiled graph its store (with the index of langgraph.json) and checkpointer. */
export const graph = builder.compile();
