import { type AuthFilter, filterAsContainment } from "../core/auth-filter.ts";
import { database } from "../db/client.ts";
import type { AssistantRow } from "../db/schema.ts";
import { graphs } from "../deployment/index.ts";
import { graphSchemas } from "./graph-info.ts";
import { ensureWorkspaceAssistants } from "./resolve.ts";
import { clientConfig } from "./server-config.ts";
import { searchAssistants } from "./store.ts";

/** Assistants as agents to other protocols (MCP tools, A2A agents): what a caller may see and use. */

const MAX_AGENTS = 100;

/** The workspace's assistants that `filter` (the caller's `assistants:search` filter) lets through, oldest first. */
export async function visibleAssistants(
  env: Env,
  workspaceId: string,
  filter: AuthFilter | undefined,
): Promise<AssistantRow[]> {
  await ensureWorkspaceAssistants(env, workspaceId);
  const { rows } = await searchAssistants(database(env), workspaceId, {
    authMetadata: filterAsContainment(filter),
    limit: MAX_AGENTS,
    offset: 0,
    sortBy: "created_at",
    sortOrder: "asc",
  });
  return rows;
}

/** The JSON Schema of what the assistant's graph takes as input (an object schema). */
export async function assistantInputSchema(assistant: AssistantRow): Promise<Record<string, unknown>> {
  const graph = await graphs.load(assistant.graphId, clientConfig(assistant.config));
  if (!graph) return { type: "object" };
  const { $schema: _draft, ...schema } = graphSchemas(graph, assistant.graphId).input_schema ?? { type: "object" };
  return schema.type === "object" ? schema : { type: "object", properties: {} };
}

/** A message's text: string content, or the text parts of structured content. */
export function messageText(message: unknown): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "string" ? part : ((part as { text?: string }).text ?? ""))).join("");
  }
  return "";
}

/** The last AI message of a messages state, if there is one. */
export function lastAiMessage(values: Record<string, unknown> | null): unknown {
  const messages = values?.messages;
  if (!Array.isArray(messages)) return undefined;
  return [...messages].reverse().find((m) => ["ai", "AIMessageChunk"].includes((m as { type?: string }).type ?? ""));
}

/** The final output as text: the last AI message's text, else the values as JSON. */
export function finalText(values: Record<string, unknown> | null): string {
  const ai = lastAiMessage(values);
  return ai ? messageText(ai) : JSON.stringify(values ?? null);
}
