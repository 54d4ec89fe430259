import type { Message } from "@langchain/langgraph-sdk";
import { ApiError, describeErrorBody } from "../../api.ts";

/** A value typed in a form: JSON when it parses, else the text as a plain string. */
export function parseJsonOrString(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The SDK's client throws `HTTP 404: {"detail": …}`; turn that into an ApiError with the server's
 * `detail`, so ErrorBox shows what the API said rather than raw JSON.
 */
export function readableError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof ApiError) return error;
  const { status, text } = error as Error & { status?: unknown; text?: unknown };
  if (typeof status !== "number" || typeof text !== "string") return error;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the message
  }
  return new ApiError(status, describeErrorBody(status, body), body);
}

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

/** Run ids are time-ordered (their heads repeat within a thread): a run is told apart by its tail. */
export function runLabel(runId: string): string {
  return `…${runId.slice(-8)}`;
}
