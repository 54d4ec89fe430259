import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { ScriptedChatModel } from "./lib/scripted-chat-model.ts";

/** A tiny offline knowledge base, so the agent's tool has something real to return. */
const FACTS: Record<string, string> = {
  cloudflare: "Cloudflare Workers run JavaScript at the edge in V8 isolates.",
  langgraph: "LangGraph builds stateful agents as graphs of nodes that share state.",
  parquet: "Parquet is a columnar file format designed for analytics.",
};

export const search = tool(
  async ({ query }: { query: string }) => {
    const topic = Object.keys(FACTS).find((key) => query.toLowerCase().includes(key));
    return topic ? FACTS[topic] : `No facts stored about "${query}".`;
  },
  {
    name: "search",
    description: "Look up a short fact about a topic.",
    schema: z.object({ query: z.string().describe("What to look up") }),
  },
);

const model = new ScriptedChatModel({ toolName: search.name, tokenDelayMs: 5 });
const tools = new ToolNode([search]);

/** A tool-calling agent: the model asks for `search`, the tool answers, the model streams a reply. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state: typeof MessagesAnnotation.State) => ({
    messages: [await model.invoke(state.messages)],
  }))
  .addNode("tools", tools)
  .addEdge("__start__", "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", "__end__"])
  .addEdge("tools", "agent")
  .compile();
