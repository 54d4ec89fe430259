// The memory agent, run in Node with a store indexed like langgraph.json's `store.index`
// (OpenAIEmbeddings, 1,536 dimensions, the `content` field), against a local stand-in for the OpenAI
// API (test/openai-stand-in.ts), which answers chats and embeddings: what a user says in one thread is
// saved, and recalled by meaning in another.
import type { BaseMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { OpenAIEmbeddings } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builder } from "../src/graph.ts";
import {
  type ChatRequest,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
  textOf,
} from "./openai-stand-in.ts";

const MEMORIES = "closest first:\n";

/** Told something, the model saves it; asked something, it answers with the closest memory. */
function reply(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === "tool") return { content: "Got it, I'll remember that." };
  const text = textOf(last.content);
  if (!text.endsWith("?")) return { toolCalls: [{ name: "upsert_memory", args: { content: text } }] };
  const system = textOf(request.messages[0].content);
  const closest = system.slice(system.indexOf(MEMORIES) + MEMORIES.length).split("\n")[0];
  return { content: `From memory: ${closest.replace(/^- \[[^\]]+\] /, "")}` };
}

let standIn: OpenAIStandIn;
let graph: ReturnType<typeof builder.compile>;
let store: InMemoryStore;
const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
beforeAll(async () => {
  standIn = await startOpenAIStandIn(reply);
  process.env.OPENAI_API_KEY = "sk-test";
  process.env.OPENAI_BASE_URL = standIn.baseUrl;
  const embeddings = new OpenAIEmbeddings({
    model: "text-embedding-3-small",
    dimensions: 1536,
    apiKey: "sk-test",
    configuration: { baseURL: standIn.baseUrl },
  });
  store = new InMemoryStore({ index: { dims: 1536, embeddings, fields: ["content"] } });
  graph = builder.compile({ checkpointer: new MemorySaver(), store });
});
afterAll(async () => {
  await standIn.close();
  for (const [name, value] of [
    ["OPENAI_API_KEY", saved.key],
    ["OPENAI_BASE_URL", saved.url],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function say(userId: string, threadId: string, content: string): Promise<string> {
  const state = (await graph.invoke(
    { messages: [{ role: "user", content }] },
    { configurable: { thread_id: threadId, user_id: userId } },
  )) as { messages: BaseMessage[] };
  return String(state.messages.at(-1)!.content);
}

describe("the memory agent", () => {
  it("saves what a user says and recalls it by meaning in another thread", async () => {
    const first = crypto.randomUUID();
    expect(await say("ada", first, "I love spicy ramen")).toBe("Got it, I'll remember that.");
    await say("ada", first, "My dog is called Rex");
    await say("ada", first, "I work night shifts at the hospital");
    const saved = await store.search(["memories", "ada"]);
    expect(saved.map((item) => item.value.content).sort()).toEqual([
      "I love spicy ramen",
      "I work night shifts at the hospital",
      "My dog is called Rex",
    ]);

    // "cook" and "ramen" share no word: the search ranks by the embeddings' meaning.
    const other = crypto.randomUUID();
    expect(await say("ada", other, "What should I cook tonight?")).toBe("From memory: I love spicy ramen");
    expect(await say("ada", other, "Who needs a walk?")).toBe("From memory: My dog is called Rex");
    expect(standIn.embeddings.at(-1)).toEqual({ model: "text-embedding-3-small", input: ["Who needs a walk?"] });
  });

  it("keeps each user's memories apart", async () => {
    expect(await say("grace", crypto.randomUUID(), "What should I cook tonight?")).toBe("From memory: (nothing yet)");
  });
});
