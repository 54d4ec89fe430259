// The agent, run in Node against a local stand-in for the OpenAI API (test/openai-stand-in.ts): the
// real ChatOpenAI streams the stand-in's tool call and tokens, and the tool's result reaches the answer.

import { ChatAnthropic } from "@langchain/anthropic";
import { type AIMessage, type AIMessageChunk, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { graph } from "../src/graph.ts";
import { chatModel } from "../src/model.ts";
import { type ChatRequest, type OpenAIStandIn, type ScriptedReply, startOpenAIStandIn } from "./openai-stand-in.ts";

/** Asked "6 times 7", the model calls the calculator; with its result it answers. */
function reply(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === "tool") return { content: `6 times 7 is ${String(last.content)}.` };
  return { toolCalls: [{ name: "calculator", args: { operation: "multiply", a: 6, b: 7 } }] };
}

const SETTINGS = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "OPENAI_MODEL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "MODEL_PROVIDER",
];
const saved = Object.fromEntries(SETTINGS.map((name) => [name, process.env[name]]));
let standIn: OpenAIStandIn;
beforeAll(async () => {
  standIn = await startOpenAIStandIn(reply);
});
afterAll(() => standIn.close());
afterEach(() => {
  for (const name of SETTINGS) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

function useStandIn(): void {
  for (const name of SETTINGS) delete process.env[name];
  process.env.OPENAI_API_KEY = "sk-test";
  process.env.OPENAI_BASE_URL = standIn.baseUrl;
}

describe("the agent", () => {
  it("calls the calculator and answers from its result, streaming the model's tokens", async () => {
    useStandIn();
    const chunks: AIMessageChunk[] = [];
    let state: { messages: (AIMessage | ToolMessage)[] } | undefined;
    for await (const [mode, value] of await graph.stream(
      { messages: [{ role: "user", content: "What is 6 times 7?" }] },
      { streamMode: ["messages", "values"] },
    )) {
      if (mode === "messages" && value[1].langgraph_node === "agent") chunks.push(value[0] as AIMessageChunk);
      if (mode === "values") state = value as typeof state;
    }
    // The tool call streamed, then the answer a few characters at a time.
    expect(chunks.some((chunk) => chunk.tool_call_chunks?.some((call) => call.name === "calculator"))).toBe(true);
    const text = chunks.map((chunk) => (typeof chunk.content === "string" ? chunk.content : "")).filter(Boolean);
    expect(text.length).toBeGreaterThan(1);
    expect(text.join("")).toBe("6 times 7 is 42.");

    const [human, call, result, answer] = state!.messages;
    expect(human.content).toBe("What is 6 times 7?");
    expect((call as AIMessage).tool_calls?.[0]).toMatchObject({
      name: "calculator",
      args: { operation: "multiply", a: 6, b: 7 },
    });
    expect(result).toBeInstanceOf(ToolMessage);
    expect(result.content).toBe("42");
    expect(answer.content).toBe("6 times 7 is 42.");
    expect((answer as AIMessage).usage_metadata?.total_tokens).toBeGreaterThan(0);

    // The model was asked with the key, both tools and the usage in the stream.
    const { request, authorization } = standIn.chats.at(-1)!;
    expect(authorization).toBe("Bearer sk-test");
    expect(request.model).toBe("gpt-4.1-mini");
    expect(request.tools?.map((tool) => tool.function.name)).toEqual(["calculator", "current_time"]);
    expect(request.stream_options).toEqual({ include_usage: true });
  });

  it("runs on Anthropic when only ANTHROPIC_API_KEY is set", async () => {
    for (const name of SETTINGS) delete process.env[name];
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    process.env.ANTHROPIC_BASE_URL = standIn.anthropicUrl;
    const tokens: string[] = [];
    let state: { messages: (AIMessage | ToolMessage)[] } | undefined;
    for await (const [mode, value] of await graph.stream(
      { messages: [{ role: "user", content: "What is 6 times 7?" }] },
      { streamMode: ["messages", "values"] },
    )) {
      if (mode === "messages" && value[1].langgraph_node === "agent") {
        const { content } = value[0] as AIMessageChunk;
        if (typeof content === "string" && content) tokens.push(content);
        else if (Array.isArray(content)) {
          for (const part of content) if (part.type === "text" && typeof part.text === "string") tokens.push(part.text);
        }
      }
      if (mode === "values") state = value as typeof state;
    }
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join("")).toBe("6 times 7 is 42.");
    const messages = state!.messages;
    expect(messages[2]).toBeInstanceOf(ToolMessage);
    expect(messages[2].content).toBe("42");
    expect((messages[3] as AIMessage).usage_metadata?.total_tokens).toBeGreaterThan(0);
    const { request, authorization, api } = standIn.chats.at(-1)!;
    expect({ api, authorization, model: request.model }).toEqual({
      api: "anthropic",
      authorization: "sk-ant-test",
      model: "claude-haiku-4-5",
    });
    expect(request.tools?.map((tool) => tool.function.name)).toEqual(["calculator", "current_time"]);
  });

  it("picks the provider from the environment, and says what to set when there is none", () => {
    for (const name of SETTINGS) delete process.env[name];
    expect(() => chatModel()).toThrow(/set OPENAI_API_KEY .* or ANTHROPIC_API_KEY/);
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    expect(chatModel()).toBeInstanceOf(ChatAnthropic);
    process.env.OPENAI_API_KEY = "sk-test";
    process.env.OPENAI_MODEL = "gpt-4.1";
    const openai = chatModel();
    expect(openai).toBeInstanceOf(ChatOpenAI);
    expect((openai as ChatOpenAI).model).toBe("gpt-4.1");
    process.env.MODEL_PROVIDER = "anthropic";
    expect(chatModel()).toBeInstanceOf(ChatAnthropic);
    process.env.MODEL_PROVIDER = "mistral";
    expect(() => chatModel()).toThrow('MODEL_PROVIDER is "mistral"');
  });
});
