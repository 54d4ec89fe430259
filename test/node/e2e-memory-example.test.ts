// examples/memory end to end, with its real provider (`openai:text-embedding-3-small`) pointed at a
// local stand-in for the OpenAI embeddings endpoint: the agent recalls by meaning, each put and each
// search is one provider call, and a provider failure is a clear error that stores nothing.
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmbeddingsStandIn, startEmbeddingsStandIn } from "../fixtures/openai-embeddings-stand-in.ts";
import { type startDeployment, startTestServer } from "./helpers.ts";

const KEY = "sk-stand-in-secret-key";
let standIn: EmbeddingsStandIn;
let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  standIn = await startEmbeddingsStandIn(1536);
  deployment = await startTestServer({
    config: "examples/memory/langgraph.json",
    vars: { OPENAI_BASE_URL: standIn.baseUrl, OPENAI_API_KEY: KEY },
  });
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
  await standIn?.close();
}, 60_000);

const client = () => new Client({ apiUrl: deployment.url, apiKey: deployment.apiKey });

async function say(threadId: string, user: string, content: string): Promise<string> {
  const state = (await client().runs.wait(threadId, "memory", {
    input: { messages: [{ role: "user", content }] },
    config: { configurable: { user_id: user } },
  })) as { messages: { content: string }[] };
  return state.messages.at(-1)!.content;
}

describe("the memory example", () => {
  it("remembers what a user says and recalls it by meaning, in another thread", async () => {
    const user = `user-${crypto.randomUUID()}`;
    const first = await client().threads.create();
    const calls = standIn.calls.length;
    expect(await say(first.thread_id, user, "I love spicy ramen")).toBe('I\'ll remember that: "I love spicy ramen"');
    await say(first.thread_id, user, "My dog is called Rex");
    await say(first.thread_id, user, "I work night shifts at the hospital");
    // One provider call per put, with the model and the key from the environment.
    expect(standIn.calls.slice(calls)).toEqual([
      { model: "text-embedding-3-small", input: ["I love spicy ramen"], authorization: `Bearer ${KEY}` },
      { model: "text-embedding-3-small", input: ["My dog is called Rex"], authorization: `Bearer ${KEY}` },
      {
        model: "text-embedding-3-small",
        input: ["I work night shifts at the hospital"],
        authorization: `Bearer ${KEY}`,
      },
    ]);

    const other = await client().threads.create();
    const answer = await say(other.thread_id, user, "What should I cook tonight?");
    expect(answer).toMatch(/^Here is what I remember:\n- I love spicy ramen \(score 0\.\d\d\)$/);
    expect(standIn.calls.at(-1)!.input).toEqual(["What should I cook tonight?"]);
    expect(await say(other.thread_id, user, "Who takes care of my pet?")).toContain("My dog is called Rex");
    // Another user has no memories.
    expect(await say(other.thread_id, `${user}-else`, "What should I cook tonight?")).toBe(
      "I don't remember anything about that.",
    );

    const found = await client().store.searchItems(["memories", user], { query: "dinner ideas", limit: 1 });
    expect(found.items[0].value.text).toBe("I love spicy ramen");
    expect(found.items[0].score).toBeGreaterThan(0);
  });

  it("a provider failure answers an error naming the provider, and stores nothing", async () => {
    const ns = ["memories", `fail-${crypto.randomUUID()}`];
    const response = await fetch(`${deployment.url}/store/items`, {
      method: "PUT",
      headers: { "x-api-key": deployment.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ namespace: ns, key: "k", value: { text: "FAIL-UPSTREAM please" } }),
    });
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(response.status).not.toBe(500);
    const body = (await response.json()) as { detail: string };
    expect(body.detail).toContain("openai:text-embedding-3-small");
    expect(body.detail).toContain("500");
    expect(body.detail).not.toContain(KEY);
    expect(await client().store.getItem(ns, "k")).toBeNull();
  });
});
