import type { Message } from "@langchain/langgraph-sdk";

/** The text of a message's content (a string, or text parts among images). */
export function messageText(message: Message): string {
  const { content } = message;
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("");
}

/** Whether a graph's state keeps a chat history (`messages`), from its JSON schemas. */
export function hasMessages(schemas: { input_schema?: unknown; state_schema?: unknown } | undefined): boolean {
  for (const schema of [schemas?.input_schema, schemas?.state_schema]) {
    const properties = (schema as { properties?: Record<string, unknown> } | null | undefined)?.properties;
    if (properties && "messages" in properties) return true;
  }
  return false;
}
