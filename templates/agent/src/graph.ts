import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { chatModel } from "./model.ts";
import { TOOLS } from "./tools.ts";

/**
 * A tool-calling agent: the model answers, or calls a tool and answers from its result. The model is
 * picked per run from the environment (src/model.ts), so the same graph runs on OpenAI or Anthropic.
 * Add your own tools to src/tools.ts.
 */
export const graph = createReactAgent({
  llm: () => chatModel().bindTools(TOOLS),
  tools: TOOLS,
  prompt: "You are a helpful assistant. Use the calculator for arithmetic and current_time for the date or time.",
});
