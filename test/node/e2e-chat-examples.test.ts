// The example graphs as chat UIs drive them (Agent Chat UI, the SDK's useStream): human messages whose
// content is a list of blocks, and the approval example's Agent Inbox interrupt answered with each kind
// of HumanResponse. Through the official JS SDK, against `npm start`'s runtime.
import { Client, type Message } from "@langchain/langgraph-sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { type SharedServerInfo, sharedServer } from "./helpers.ts";

let server: SharedServerInfo;
let client: Client;

beforeAll(async () => {
  server = sharedServer();
  client = new Client({ apiUrl: server.url, apiKey: server.apiKey });
});

/** A human turn as chat UIs send it: content blocks, text among an image. */
const blocks = (text: string) => ({
  type: "human",
  content: [
    { type: "text", text },
    { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
  ],
});

const textOf = (message: Message | undefined): string => {
  const content = message?.content;
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
};

type ChatState = { messages: Message[] };

/** Runs `graph` on a new thread with one content-block message; answers the thread's final state. */
async function chat(graph: string, text: string, config?: Record<string, unknown>) {
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, graph, {
    input: { messages: [blocks(text)] },
    config: config && { configurable: config },
  })) as ChatState;
  return { thread, values, answer: textOf(values.messages.at(-1)) };
}

describe("every chat example reads a message whose content is a list of blocks", () => {
  it("echo answers with the text, not the blocks' JSON", async () => {
    expect((await chat("echo", "hello there")).answer).toBe("hello there");
  });

  it("agent looks up the text and answers from the tool", async () => {
    const { values, answer } = await chat("agent", "Tell me about Parquet");
    const call = values.messages.find((m) => m.type === "ai" && (m.tool_calls?.length ?? 0) > 0);
    expect(call?.type === "ai" && call.tool_calls?.[0]?.args).toEqual({ query: "Tell me about Parquet" });
    expect(answer).toBe("Here is what I found: Parquet is a columnar file format designed for analytics.");
  });

  it("memory stores the text in the store", async () => {
    const { answer } = await chat("memory", "remember the milk", { user_id: "chat-ui-user" });
    expect(answer).toBe("I have 1 memories for you.");
    const items = await client.store.searchItems(["memories", "chat-ui-user"]);
    expect(items.items.map((item) => item.value)).toEqual([{ text: "remember the milk" }]);
  });

  it("factory echoes the text", async () => {
    expect((await chat("factory", "made by a factory")).answer).toBe("made by a factory");
  });

  it("weather reads the city from the text", async () => {
    expect((await chat("weather", "Berlin")).answer).toMatch(/ in Berlin\.$/);
  });

  it("approval drafts its email from the text", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "approval", { input: { messages: [blocks("Lunch at noon?")] } });
    const state = await client.threads.getState(thread.thread_id);
    const value = state.tasks[0]?.interrupts[0]?.value as { action_request: { args: Record<string, string> } }[];
    expect(value[0].action_request.args).toEqual({
      to: "team@example.com",
      subject: "Lunch at noon?",
      body: "Lunch at noon?",
    });
  });
});

describe("approval: a tool call that waits for a person, in Agent Inbox's shape", () => {
  /** Starts the approval agent on a new thread and waits for its interrupt. */
  async function interrupted(text: string) {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "approval", { input: { messages: [blocks(text)] } });
    return thread.thread_id;
  }
  const resume = (threadId: string, value: unknown) =>
    client.runs.wait(threadId, "approval", { command: { resume: value } }) as Promise<ChatState>;

  it("pauses with a HumanInterrupt: the action, its args, every choice allowed and a description", async () => {
    const threadId = await interrupted("Ship the release notes");
    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe("interrupted");
    const state = await client.threads.getState(threadId);
    expect(state.next).toEqual(["human_review"]);
    const [interrupt] = state.tasks[0].interrupts;
    expect(interrupt.value).toEqual([
      {
        action_request: {
          action: "send_email",
          args: { to: "team@example.com", subject: "Ship the release notes", body: "Ship the release notes" },
        },
        config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
        description: expect.stringContaining("send an email to team@example.com"),
      },
    ]);
    // The thread's messages end on the agent's call: a chat UI has something to show.
    const messages = (state.values as ChatState).messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai"]);
  });

  it("accept: the email is sent as drafted and the agent says so", async () => {
    const threadId = await interrupted("Ship it");
    const values = await resume(threadId, [{ type: "accept", args: null }]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(textOf(values.messages[2])).toBe('I sent the email to team@example.com with the subject "Ship it".');
    expect(textOf(values.messages.at(-1))).toBe('I sent the email to team@example.com with the subject "Ship it".');
    expect((await client.threads.get(threadId)).status).toBe("idle");
  });

  it("edit: the edited call is the one that runs, in place of the draft", async () => {
    const threadId = await interrupted("Draft");
    const values = await resume(threadId, [
      {
        type: "edit",
        args: { action: "send_email", args: { to: "boss@example.com", subject: "Final", body: "Done." } },
      },
    ]);
    const calls = values.messages.filter((m) => m.type === "ai" && (m.tool_calls?.length ?? 0) > 0);
    expect(calls).toHaveLength(1);
    expect(calls[0].type === "ai" && calls[0].tool_calls?.[0]?.args).toEqual({
      to: "boss@example.com",
      subject: "Final",
      body: "Done.",
    });
    expect(textOf(values.messages.at(-1))).toBe('I sent the email to boss@example.com with the subject "Final".');
  });

  it("response: nothing is sent, and the person's answer reaches the agent", async () => {
    const threadId = await interrupted("Invite everyone");
    const values = await resume(threadId, [{ type: "response", args: "Not today, the office is closed." }]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(textOf(values.messages.at(-1))).toBe(
      "I did not send the email. Your answer: Not today, the office is closed.",
    );
  });

  it("ignore: nothing is sent and the run ends", async () => {
    const threadId = await interrupted("Spam the list");
    const values = await resume(threadId, [{ type: "ignore", args: null }]);
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(textOf(values.messages.at(-1))).toBe("OK, I left the email unsent.");
    expect((await client.threads.getState(threadId)).next).toEqual([]);
  });

  it("streams the interrupt to a useStream client; a wrong answer asks again, and nothing is lost", async () => {
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "approval", {
      input: { messages: [blocks("Streamed")] },
      streamMode: ["values", "messages-tuple", "updates"],
    })) {
      events.push(part);
    }
    const interruptUpdate = events.find(
      (e) => e.event === "updates" && typeof e.data === "object" && e.data !== null && "__interrupt__" in e.data,
    );
    expect(interruptUpdate).toBeDefined();

    // A chat box's plain text is no HumanResponse: the same request comes back, saying so.
    await resume(thread.thread_id, "yes please");
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    const again = await client.threads.getState(thread.thread_id);
    expect(again.next).toEqual(["human_review"]);
    const [request] = again.tasks[0].interrupts[0].value as { description: string; action_request: unknown }[];
    expect(request.description).toContain('Your last answer, "yes please", was not one of');
    expect(request.action_request).toEqual({
      action: "send_email",
      args: { to: "team@example.com", subject: "Streamed", body: "Streamed" },
    });
    // An edit without the edited call is refused the same way.
    await resume(thread.thread_id, [{ type: "edit", args: null }]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

    const values = await resume(thread.thread_id, [{ type: "accept", args: null }]);
    expect(textOf(values.messages.at(-1))).toBe('I sent the email to team@example.com with the subject "Streamed".');
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
  });
});
