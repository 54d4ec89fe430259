import type { BaseMessage } from "@langchain/core/messages";

/**
 * The text of a message, whether its content is a string or a list of content blocks as chat UIs
 * send it (`[{type: "text", text: "hello"}]`): LangChain's own reading (`message.text`), the text
 * blocks in order, joined; images, files and tool blocks carry no text. Every example graph reads
 * what the user wrote through this, never with `String(content)`.
 */
export function messageText(message: BaseMessage | null | undefined): string {
  return message?.text ?? "";
}
