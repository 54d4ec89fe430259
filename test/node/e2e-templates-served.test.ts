// The approval and memory templates as a user runs them: written by `agent-platform new`, served by
// `agent-platform dev` (in workerd, with the platform's checkpointer and store), against the
// templates' loopback OpenAI stand-in, and driven with the official SDK. Their own tests run the same
// graphs in Node (test/node/templates.test.ts); here the pause of an interrupt is the thread's, and the
// semantic index is the platform's (langgraph.json `store.index`).
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ChatRequest,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
  textOf,
} from "../../templates/agent/test/openai-stand-in.ts";
import { type ServedTemplate, serveTemplate } from "./template-project.ts";

const KEY = "sk-stand-in-templates-key";
type Message = { type: string; content: string };

describe("the approval template, served", () => {
  const DRAFT = { to: "team@example.com", subject: "Release 1.0 is out", body: "Hi all, release 1.0 is out." };
  let standIn: OpenAIStandIn;
  let served: ServedTemplate;
  beforeAll(async () => {
    standIn = await startOpenAIStandIn((request: ChatRequest): ScriptedReply => {
      const last = request.messages.at(-1)!;
      if (last.role === "tool") return { content: `Done. ${textOf(last.content)}` };
      return { toolCalls: [{ name: "send_email", args: DRAFT }] };
    });
    served = await serveTemplate("approval", "my-approval", { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: standIn.baseUrl });
  }, 200_000);
  afterAll(async () => {
    await served?.stop();
    await standIn?.close();
  });

  it("pauses the thread on send_email in Agent Inbox's shape, and sends the edited email once resumed", async () => {
    const client = new Client({ apiUrl: served.url, apiKey: served.apiKey });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "approval", {
      input: { messages: [{ role: "user", content: "Tell the team release 1.0 is out" }] },
    });
    const paused = await client.threads.get(thread.thread_id);
    expect(paused.status).toBe("interrupted");
    const state = await client.threads.getState(thread.thread_id);
    expect(state.tasks[0].interrupts[0].value).toEqual([
      {
        action_request: { action: "send_email", args: DRAFT },
        config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
        description: expect.stringContaining("team@example.com"),
      },
    ]);

    const edit = { action: "send_email", args: { subject: "Release 1.0 is out today" } };
    const done = (await client.runs.wait(thread.thread_id, "approval", {
      command: { resume: [{ type: "edit", args: edit }] },
    })) as { messages: Message[] };
    expect(done.messages.at(-1)!.content).toBe(
      'Done. Sent the email to team@example.com with the subject "Release 1.0 is out today".',
    );
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    expect(standIn.chats.map((chat) => chat.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });
});

describe("the memory template, served", () => {
  const MEMORIES = "closest first:\n";
  let standIn: OpenAIStandIn;
  let served: ServedTemplate;
  beforeAll(async () => {
    standIn = await startOpenAIStandIn((request: ChatRequest): ScriptedReply => {
      const last = request.messages.at(-1)!;
      if (last.role === "tool") return { content: "Got it, I'll remember that." };
      const text = textOf(last.content);
      if (!text.endsWith("?")) return { toolCalls: [{ name: "upsert_memory", args: { content: text } }] };
      const system = textOf(request.messages[0].content);
      const closest = system.slice(system.indexOf(MEMORIES) + MEMORIES.length).split("\n")[0];
      return { content: `From memory: ${closest.replace(/^- \[[^\]]+\] /, "")}` };
    });
    served = await serveTemplate("memory", "my-memory", { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: standIn.baseUrl });
  }, 200_000);
  afterAll(async () => {
    await served?.stop();
    await standIn?.close();
  });

  it("saves what a user says through the platform's store and recalls it by meaning in another thread", async () => {
    const client = new Client({ apiUrl: served.url, apiKey: served.apiKey });
    const user = `user-${crypto.randomUUID()}`;
    const say = async (threadId: string, content: string) => {
      const state = (await client.runs.wait(threadId, "memory", {
        input: { messages: [{ role: "user", content }] },
        config: { configurable: { user_id: user } },
      })) as { messages: Message[] };
      return state.messages.at(-1)!.content;
    };
    const first = await client.threads.create();
    expect(await say(first.thread_id, "I love spicy ramen")).toBe("Got it, I'll remember that.");
    await say(first.thread_id, "My dog is called Rex");
    // Each memory's content was embedded by the platform's index (langgraph.json store.index).
    expect(standIn.embeddings).toEqual(
      expect.arrayContaining([
        { model: "text-embedding-3-small", input: ["I love spicy ramen"] },
        { model: "text-embedding-3-small", input: ["My dog is called Rex"] },
      ]),
    );

    const other = await client.threads.create();
    expect(await say(other.thread_id, "Who needs a walk?")).toBe("From memory: My dog is called Rex");
    expect(await say(other.thread_id, "What should I cook tonight?")).toBe("From memory: I love spicy ramen");
    const found = await client.store.searchItems(["memories", user], { query: "dinner ideas", limit: 1 });
    expect(found.items[0].value.content).toBe("I love spicy ramen");
  });
});
