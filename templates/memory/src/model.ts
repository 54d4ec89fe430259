import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOpenAI } from "@langchain/openai";

/**
 * The chat model, chosen by the environment each time a run needs it (so a secret set after the
 * deployment started is used): OpenAI when OPENAI_API_KEY is set (OPENAI_BASE_URL points it at another
 * OpenAI-compatible endpoint), else Anthropic when ANTHROPIC_API_KEY is set. MODEL_PROVIDER
 * ("openai" or "anthropic") picks one when both keys are set; OPENAI_MODEL / ANTHROPIC_MODEL pick
 * the model. Values come from the Worker's vars and secrets, else from .env (langgraph.json "env").
 */

export const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";
export const DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5";

/** A setting from the environment; an empty value counts as unset (.env.example leaves them empty). */
function setting(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value ? value : undefined;
}

export function chatModel(): ChatOpenAI | ChatAnthropic {
  const provider = setting("MODEL_PROVIDER")?.toLowerCase();
  if (provider !== undefined && provider !== "openai" && provider !== "anthropic") {
    throw new Error(`MODEL_PROVIDER is "${provider}"; use "openai" or "anthropic"`);
  }
  const openaiKey = setting("OPENAI_API_KEY");
  const anthropicKey = setting("ANTHROPIC_API_KEY");
  if (provider === "openai" || (provider === undefined && openaiKey)) {
    if (!openaiKey) throw new Error("MODEL_PROVIDER is openai but OPENAI_API_KEY is not set");
    return new ChatOpenAI({
      model: setting("OPENAI_MODEL") ?? DEFAULT_OPENAI_MODEL,
      apiKey: openaiKey,
      configuration: { baseURL: setting("OPENAI_BASE_URL") },
    });
  }
  if (provider === "anthropic" || (provider === undefined && anthropicKey)) {
    if (!anthropicKey) throw new Error("MODEL_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set");
    return new ChatAnthropic({
      model: setting("ANTHROPIC_MODEL") ?? DEFAULT_ANTHROPIC_MODEL,
      apiKey: anthropicKey,
      anthropicApiUrl: setting("ANTHROPIC_BASE_URL"),
    });
  }
  throw new Error(
    "No model provider is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible endpoint) or ANTHROPIC_API_KEY, in .env for `agent-platform dev`, or as secrets of the deployed Worker",
  );
}
