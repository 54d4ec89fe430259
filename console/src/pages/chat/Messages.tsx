import type { AIMessage, Message, ToolMessage } from "@langchain/langgraph-sdk";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { messageText } from "./util.ts";

/**
 * The conversation: human and AI turns, each AI turn with the tool calls it asked for and, once it
 * arrives, each tool's result (tool messages are shown under their call, not on their own).
 */
export function Messages({ messages, streaming }: { messages: Message[]; streaming: boolean }) {
  const results = new Map<string, ToolMessage>();
  for (const message of messages) if (message.type === "tool") results.set(message.tool_call_id, message);
  const called = new Set<string>();
  for (const message of messages) {
    if (message.type === "ai") for (const call of message.tool_calls ?? []) if (call.id) called.add(call.id);
  }
  const last = messages.at(-1);
  return (
    <ol className="chat-messages" aria-label="Messages">
      {messages.map((message, index) => {
        const key = message.id ?? `i${index}`;
        if (message.type === "tool" && called.has(message.tool_call_id)) return null;
        const text = messageText(message);
        const calls = message.type === "ai" ? (message.tool_calls ?? []) : [];
        const live = streaming && message === last && message.type === "ai";
        return (
          <li key={key} className={`chat-message chat-${message.type}`} data-message-type={message.type}>
            <div className="chat-role muted">{roleName(message)}</div>
            {text ? (
              <div className="chat-text" data-testid={message.type === "ai" ? "ai-text" : undefined} aria-busy={live}>
                {text}
              </div>
            ) : null}
            {calls.map((call, callIndex) => (
              <ToolCallCard
                key={call.id ?? callIndex}
                call={call}
                result={call.id ? results.get(call.id) : undefined}
              />
            ))}
          </li>
        );
      })}
    </ol>
  );
}

function roleName(message: Message): string {
  switch (message.type) {
    case "human":
      return "You";
    case "ai":
      return "Assistant";
    case "tool":
      return `Tool ${message.name ?? ""}`.trim();
    default:
      return message.type;
  }
}

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

function ToolCallCard({ call, result }: { call: ToolCall; result: ToolMessage | undefined }) {
  const status = result ? (result.status === "error" ? "error" : "completed") : "running";
  return (
    <section className="chat-tool" aria-label={`Tool call ${call.name}`} data-tool-status={status}>
      <div className="row">
        <strong className="mono">{call.name}</strong>
        <StatusBadge status={status} />
      </div>
      <figure aria-label="Arguments">
        <figcaption className="muted">arguments</figcaption>
        <pre>{JSON.stringify(call.args, null, 2)}</pre>
      </figure>
      {result ? (
        <figure aria-label="Result">
          <figcaption className="muted">result</figcaption>
          <pre className="chat-tool-result">{messageText(result)}</pre>
        </figure>
      ) : null}
    </section>
  );
}
