// Real providers kept working: the `agent` template (createReactAgent on @langchain/openai's
// ChatOpenAI), written by `agent-platform new` and served by `agent-platform dev`, against a local
// OpenAI-compatible stand-in on loopback (the template's own, templates/agent/test/openai-stand-in.ts:
// SSE chunks with tool calls and text, the usage in a last chunk). Driven with the official SDK: the
// tool call and the tokens stream through `messages-tuple`, the thread's state holds the tool's
// result, and the trace holds each LLM run with its token usage and its cost (MODEL_PRICES from the
// template's wrangler.jsonc).
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChatRequest,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
} from "../../templates/agent/test/openai-stand-in.ts";
import { until } from "../fixtures/until.ts";
import { type ServedTemplate, serveTemplate } from "./template-project.ts";

const KEY = "sk-stand-in-provider-key";
const ANSWER = "6 times 7 is 42.";
/** The template's price of its default model (templates/agent/wrangler.jsonc), USD per million tokens. */
const PRICE = { input_per_million: 0.4, output_per_million: 1.6 };

/** Asked for arithmetic, the model calls the calculator; with its result in the messages, it answers. */
function reply(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === "tool") return { content: `6 times 7 is ${String(last.content)}.` };
  return { toolCalls: [{ name: "calculator", args: { operation: "multiply", a: 6, b: 7 } }] };
}

let standIn: OpenAIStandIn;
let served: ServedTemplate;

beforeAll(async () => {
  standIn = await startOpenAIStandIn(reply);
  // The user's step: the key (and here the endpoint) in .env.
  served = await serveTemplate("agent", "my-agent", { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: standIn.baseUrl });
}, 200_000);

afterAll(async () => {
  await served?.stop();
  await standIn?.close();
});

type MessageChunk = {
  type: string;
  content: string | unknown[];
  tool_call_chunks?: { name?: string; args?: string }[];
  tool_calls?: { name: string; args: Record<string, unknown> }[];
};
type Run = {
  id: string;
  name: string;
  run_type: string;
  parent_run_id: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  extra: { metadata?: Record<string, unknown> };
};

async function tracing<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${served.url}/api/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "x-api-key": served.apiKey, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe("the agent template on a real provider, served by agent-platform dev", () => {
  it("streams the tool call and the tokens, keeps the tool's result, and traces the LLM runs with usage and cost", async () => {
    const client = new Client({ apiUrl: served.url, apiKey: served.apiKey });
    const thread = await client.threads.create();
    const calls = standIn.chats.length;
    const chunks: [MessageChunk, Record<string, unknown>][] = [];
    let runId = "";
    for await (const event of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "What is 6 times 7?" }] },
      streamMode: "messages-tuple",
    })) {
      if (event.event === "metadata") runId = (event.data as { run_id: string }).run_id;
      if (event.event === "messages") chunks.push(event.data as [MessageChunk, Record<string, unknown>]);
    }

    // The model was called twice, with the key, both tools and streamed usage asked for.
    const requests = standIn.chats.slice(calls);
    expect(requests).toHaveLength(2);
    for (const { request, authorization } of requests) {
      expect(authorization).toBe(`Bearer ${KEY}`);
      expect(request).toMatchObject({ model: "gpt-4.1-mini", stream: true, stream_options: { include_usage: true } });
      expect(request.tools?.map((tool) => tool.function.name)).toEqual(["calculator", "current_time"]);
    }
    expect(requests[1].request.messages.at(-1)).toMatchObject({ role: "tool", content: "42" });

    // messages-tuple: the tool call as it streamed, the tool's message, then the answer token by token.
    const fromAgent = chunks.filter(([, metadata]) => metadata.langgraph_node === "agent").map(([chunk]) => chunk);
    const callChunks = fromAgent.flatMap((chunk) => chunk.tool_call_chunks ?? []);
    expect(callChunks.find((call) => call.name)?.name).toBe("calculator");
    expect(JSON.parse(callChunks.map((call) => call.args ?? "").join(""))).toEqual({
      operation: "multiply",
      a: 6,
      b: 7,
    });
    const tokens = fromAgent
      .map((chunk) => chunk.content)
      .filter((text): text is string => typeof text === "string" && text !== "");
    expect(tokens.length).toBeGreaterThan(2);
    expect(tokens.join("")).toBe(ANSWER);
    const fromTools = chunks.filter(([, metadata]) => metadata.langgraph_node === "tools").map(([chunk]) => chunk);
    expect(fromTools.map((chunk) => [chunk.type, chunk.content])).toEqual([["tool", "42"]]);

    // The thread's state holds the call, the tool's result and the answer.
    const state = await client.threads.getState<{ messages: MessageChunk[] }>(thread.thread_id);
    expect(state.values.messages.map((message) => [message.type, message.content])).toEqual([
      ["human", "What is 6 times 7?"],
      ["ai", ""],
      ["tool", "42"],
      ["ai", ANSWER],
    ]);
    expect(state.values.messages[1].tool_calls?.[0]).toMatchObject({
      name: "calculator",
      args: { operation: "multiply", a: 6, b: 7 },
    });

    // The trace: each LLM run with the usage the provider reported, priced by the template's MODEL_PRICES.
    const llms = await until(
      async () => {
        const [session] = await tracing<{ id: string }[]>("/sessions?name=agent-runs");
        if (!session) return [];
        const { runs } = await tracing<{ runs: Run[] }>("/runs/query", {
          session: [session.id],
          filter: `and(eq(metadata_key, "run_id"), eq(metadata_value, "${runId}"))`,
          limit: 100,
        });
        return runs.filter((run) => run.run_type === "llm");
      },
      (runs) => runs.length === 2,
      30_000,
      100,
    );
    const byCall = [...llms].sort((a, b) => (a.prompt_tokens ?? 0) - (b.prompt_tokens ?? 0));
    byCall.forEach((run, i) => {
      const usage = requests[i].usage;
      expect(run).toMatchObject({
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
      });
      expect(run.extra.metadata).toMatchObject({ ls_model_name: "gpt-4.1-mini", ls_provider: "openai" });
      expect(run.prompt_cost).toBeCloseTo((usage.prompt_tokens * PRICE.input_per_million) / 1e6, 12);
      expect(run.completion_cost).toBeCloseTo((usage.completion_tokens * PRICE.output_per_million) / 1e6, 12);
      expect(run.total_cost).toBeCloseTo(run.prompt_cost! + run.completion_cost!, 12);
      expect(run.total_cost).toBeGreaterThan(0);
    });
  });
});
