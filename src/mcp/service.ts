import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { assistantInputSchema, finalText } from "../assistants/agents.ts";
import { notFound } from "../core/errors.ts";
import type { AssistantRow } from "../db/schema.ts";
import { deployment } from "../deployment/index.ts";
import { type RunCaller, runToCompletion } from "../threads/runs/service.ts";

/**
 * MCP tools over assistants: every assistant the caller may see is a tool; calling it runs the
 * assistant statelessly and answers with its final output.
 */

export interface AssistantTool {
  tool: Tool;
  assistantId: string;
}

export function requireMcpEnabled(): void {
  if (deployment.http.disable_mcp) throw notFound("MCP is disabled for this deployment (http.disable_mcp)");
}

/** Tool names are limited to letters, digits, `_` and `-` (64 at most). */
function toolName(name: string, taken: Set<string>, assistantId: string): string {
  let candidate = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "assistant";
  if (taken.has(candidate)) candidate = `${candidate.slice(0, 55)}_${assistantId.slice(0, 8)}`;
  taken.add(candidate);
  return candidate;
}

/** The tools these assistants make, in their order (names made unique). */
export async function assistantTools(assistants: AssistantRow[]): Promise<AssistantTool[]> {
  const taken = new Set<string>();
  const tools = [];
  for (const assistant of assistants) {
    const graph = deployment.graphs.find((g) => g.id === assistant.graphId);
    tools.push({
      assistantId: assistant.assistantId,
      tool: {
        name: toolName(assistant.name, taken, assistant.assistantId),
        description: assistant.description ?? graph?.description ?? `Runs the "${assistant.graphId}" graph`,
        inputSchema: (await assistantInputSchema(assistant)) as Tool["inputSchema"],
      },
    });
  }
  return tools;
}

const failed = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] });

/** Calls the tool named `name`: a stateless run of its assistant with `args` as input, to its end. */
export async function callTool(
  env: Env,
  caller: RunCaller,
  tools: AssistantTool[],
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const entry = tools.find((candidate) => candidate.tool.name === name);
  if (!entry) return failed(`Unknown tool "${name}"`);
  try {
    const { result } = await runToCompletion(env, {
      caller,
      run: { assistant_id: entry.assistantId, input: args ?? {} },
    });
    const failure =
      result && "__error__" in result ? (result.__error__ as { error: string; message: string }) : undefined;
    if (failure) return failed(`${failure.error}: ${failure.message}`);
    return { content: [{ type: "text", text: finalText(result) }], structuredContent: result ?? {} };
  } catch (error) {
    return failed((error as Error).message);
  }
}
