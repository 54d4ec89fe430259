import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Annotation, Command, interrupt, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { type ActionRequest, type HumanInterrupt, type HumanResponse, ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { chatModel } from "./model.ts";

/**
 * A chat agent whose actions wait for a person: it drafts emails and calls `send_email`, and every
 * call pauses the run with an `interrupt()` in Agent Inbox's `HumanInterrupt` shape, so Agent Chat UI
 * and Agent Inbox show their accept / edit / respond / ignore buttons. The run resumes with the
 * person's `HumanResponse` (`Command({ resume: [{ type: "accept" }] })`).
 */

const ApprovalState = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Why the person's last answer could not be used; shown with the request they are asked again. */
  review_note: Annotation<string | null>({ reducer: (_, next) => next, default: () => null }),
});

type State = typeof ApprovalState.State;

/** The action a person approves. Replace the body with your real outbox (an email API...). */
export const sendEmail = tool(async ({ to, subject }) => `Sent the email to ${to} with the subject "${subject}".`, {
  name: "send_email",
  description: "Send an email. A person approves, edits or answers every call first.",
  schema: z.object({
    to: z.string().describe("The recipient's address"),
    subject: z.string().describe("The subject line"),
    body: z.string().describe("The message"),
  }),
});

const PROMPT =
  "You help the user write and send emails. Draft the email they ask for and send it with send_email; " +
  "a person reviews every email before it goes out. If they answer instead of approving, revise the email.";

async function agent(state: State) {
  const model = chatModel().bindTools([sendEmail]);
  return { messages: [await model.invoke([{ role: "system", content: PROMPT }, ...state.messages])] };
}

const lastToolCall = (state: State) => {
  const last = state.messages.at(-1);
  return last && AIMessage.isInstance(last) ? last.tool_calls?.[0] : undefined;
};

/** What the person may do with a call: everything Agent Inbox offers. */
const REVIEW_CONFIG = { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true };

const EXPECTED_SHAPE = `[{"type": "accept" | "edit" | "response" | "ignore", "args": ...}]`;

/** A resume value: a list holding one HumanResponse (or the response itself), else undefined. */
function parseResponse(answer: unknown): HumanResponse | undefined {
  const response = (Array.isArray(answer) ? answer[0] : answer) as HumanResponse | null | undefined;
  switch (response?.type) {
    case "accept":
    case "ignore":
    case "response":
      return response;
    case "edit": {
      const edited = response.args as ActionRequest | null;
      const args = edited && typeof edited === "object" ? edited.args : undefined;
      return args && typeof args === "object" && !Array.isArray(args) ? response : undefined;
    }
    default:
      return undefined;
  }
}

/** Pauses on the agent's tool call for a person, then carries out their answer. */
function humanReview(state: State): Command {
  const last = state.messages.at(-1) as AIMessage;
  const call = lastToolCall(state);
  if (!call?.id) return new Command({ goto: "__end__" });
  const request: HumanInterrupt = {
    action_request: { action: call.name, args: call.args },
    config: REVIEW_CONFIG,
    description:
      `The agent wants to send an email to ${String(call.args.to)}. Accept it, edit it, answer the agent, or ignore it.` +
      (state.review_note ? ` (${state.review_note})` : ""),
  };
  const answer = interrupt<HumanInterrupt[], unknown>([request]);
  const response = parseResponse(answer);
  if (!response) {
    // A wrong answer does not end the run: the same request comes back, saying what was wrong.
    const note = `Your last answer, ${JSON.stringify(answer)}, was not one of ${EXPECTED_SHAPE}; an "edit" carries {"action": ..., "args": {...}}.`;
    return new Command({ goto: "human_review", update: { review_note: note } });
  }
  switch (response.type) {
    case "accept":
      return new Command({ goto: "tools", update: { review_note: null } });
    case "edit": {
      const edited = response.args as ActionRequest;
      // Same message id: the messages reducer replaces the agent's call with the edited one.
      const revised = new AIMessage({
        id: last.id,
        content: last.content,
        tool_calls: [{ ...call, args: { ...call.args, ...edited.args } }],
      });
      return new Command({ goto: "tools", update: { messages: [revised], review_note: null } });
    }
    case "response": {
      const text = typeof response.args === "string" ? response.args : JSON.stringify(response.args);
      const answered = new ToolMessage({
        tool_call_id: call.id,
        name: call.name,
        content: `The person did not send the email and answered: ${text}`,
      });
      return new Command({ goto: "agent", update: { messages: [answered], review_note: null } });
    }
    case "ignore": {
      const skipped = new ToolMessage({ tool_call_id: call.id, name: call.name, content: "Ignored: not sent." });
      return new Command({
        goto: "__end__",
        update: { messages: [skipped, new AIMessage("OK, I left the email unsent.")], review_note: null },
      });
    }
  }
}

/** The graph before compiling: tests compile it with a checkpointer of their own. */
export const builder = new StateGraph(ApprovalState)
  .addNode("agent", agent)
  .addNode("human_review", humanReview, { ends: ["tools", "agent", "human_review", "__end__"] })
  .addNode("tools", new ToolNode([sendEmail]))
  .addEdge("__start__", "agent")
  .addConditionalEdges("agent", (state: State) => (lastToolCall(state) ? "human_review" : "__end__"), [
    "human_review",
    "__end__",
  ])
  .addEdge("tools", "agent");

/** The platform gives the compiled graph its own checkpointer (threads are kept in Durable Objects). */
export const graph = builder.compile();
