// The approval agent, run in Node with a checkpointer of its own against a local stand-in for the
// OpenAI API (test/openai-stand-in.ts): every send_email call pauses in Agent Inbox's shape, and each
// kind of answer (accept, edit, response, ignore) does what Agent Inbox's button says.
import type { BaseMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import type { HumanInterrupt } from "@langchain/langgraph/prebuilt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builder } from "../src/graph.ts";
import {
  type ChatRequest,
  type OpenAIStandIn,
  type ScriptedReply,
  startOpenAIStandIn,
  textOf,
} from "./openai-stand-in.ts";

const DRAFT = { to: "team@example.com", subject: "Release 1.0 is out", body: "Hi all, release 1.0 is out." };

/** The model drafts the email; told the person's answer, it drafts again; told it was sent, it says so. */
function reply(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  const text = textOf(last.content);
  if (last.role === "tool" && text.startsWith("The person did not send")) {
    return { toolCalls: [{ name: "send_email", args: { ...DRAFT, subject: "Release 1.0 is out (with notes)" } }] };
  }
  if (last.role === "tool") return { content: `Done. ${text}` };
  return { toolCalls: [{ name: "send_email", args: DRAFT }] };
}

let standIn: OpenAIStandIn;
const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
beforeAll(async () => {
  standIn = await startOpenAIStandIn(reply);
  process.env.OPENAI_API_KEY = "sk-test";
  process.env.OPENAI_BASE_URL = standIn.baseUrl;
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

const graph = builder.compile({ checkpointer: new MemorySaver() });
type Values = { messages: BaseMessage[] };

/** Starts a thread with the user's request; answers its config and the pause's requests. */
async function ask() {
  const config = { configurable: { thread_id: crypto.randomUUID() } };
  await graph.invoke({ messages: [{ role: "user", content: "Tell the team release 1.0 is out" }] }, config);
  return { config, requests: await pending(config) };
}

/** The HumanInterrupt list the thread waits on, if it waits. */
async function pending(config: { configurable: { thread_id: string } }): Promise<HumanInterrupt[] | undefined> {
  const state = await graph.getState(config);
  return state.tasks.flatMap((task) => task.interrupts)[0]?.value as HumanInterrupt[] | undefined;
}

const lastText = (values: Values) => String(values.messages.at(-1)!.content);

describe("the approval agent", () => {
  it("pauses every send_email call in Agent Inbox's shape, and sends it once accepted", async () => {
    const { config, requests } = await ask();
    expect(requests).toEqual([
      {
        action_request: { action: "send_email", args: DRAFT },
        config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
        description: expect.stringContaining("team@example.com"),
      },
    ]);
    const done = (await graph.invoke(new Command({ resume: [{ type: "accept", args: null }] }), config)) as Values;
    expect(lastText(done)).toBe('Done. Sent the email to team@example.com with the subject "Release 1.0 is out".');
    expect(await pending(config)).toBeUndefined();
  });

  it("sends the person's edit instead of the draft", async () => {
    const { config } = await ask();
    const edit = { action: "send_email", args: { subject: "Release 1.0 is out today" } };
    const done = (await graph.invoke(new Command({ resume: [{ type: "edit", args: edit }] }), config)) as Values;
    expect(lastText(done)).toBe(
      'Done. Sent the email to team@example.com with the subject "Release 1.0 is out today".',
    );
  });

  it("gives the person's answer to the agent, which drafts again and waits again", async () => {
    const { config } = await ask();
    await graph.invoke(new Command({ resume: [{ type: "response", args: "Mention the release notes" }] }), config);
    const again = await pending(config);
    expect(again?.[0].action_request.args.subject).toBe("Release 1.0 is out (with notes)");
    const toolMessages = (await graph.getState(config)).values.messages.filter(
      (message: BaseMessage) => message.getType() === "tool",
    );
    expect(toolMessages.map((message: BaseMessage) => message.content)).toEqual([
      "The person did not send the email and answered: Mention the release notes",
    ]);
  });

  it("leaves the email unsent when ignored, and asks again on an answer it cannot use", async () => {
    const { config } = await ask();
    await graph.invoke(new Command({ resume: [{ type: "approve" }] }), config);
    expect((await pending(config))?.[0].description).toContain("was not one of");
    const done = (await graph.invoke(new Command({ resume: [{ type: "ignore", args: null }] }), config)) as Values;
    expect(lastText(done)).toBe("OK, I left the email unsent.");
    expect(standIn.chats.every((chat) => chat.authorization === "Bearer sk-test")).toBe(true);
  });
});
