import { createRoute, z } from "@hono/zod-openapi";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { Context } from "hono";
import { deployment } from "../deployment/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { notFound } from "../core/errors.ts";
import { createRouter } from "../http/router.ts";
import { ErrorSchema, notFoundError } from "../http/schemas.ts";
import { secured } from "../auth/secured.ts";
import { visibleAssistants, assistantInputSchema, finalText } from "../assistants/agents.ts";
import { runToCompletion } from "../threads/runs/service.ts";

/**
 * MCP over the streamable-HTTP transport, stateless: every assistant the caller may see is a tool;
 * calling it runs the assistant statelessly and answers with its final output. Built on the official
 * SDK's web-standard transport, with its Workers-safe JSON Schema validator.
 */

const tags = ["MCP"];
const mcpResponse = { description: "JSON-RPC response (202 for notifications)", content: { "application/json": { schema: z.unknown() } } };

/** The transport answers protocol errors as JSON-RPC errors, not `{"detail": ...}`. */
const JsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal("2.0"),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .openapi("JsonRpcError");
const rpcError = (description: string) => ({ description, content: { "application/json": { schema: JsonRpcErrorSchema } } });

/** Statuses of the MCP endpoint besides the shared ones; 404 when the deployment disables MCP. */
const mcpErrors = { ...notFoundError, 405: rpcError("Method not allowed: the endpoint is stateless; use POST (Allow: POST)") };

const routes = {
  post: secured(
    createRoute({
      method: "post",
      path: "/mcp",
      tags,
      summary: "MCP streamable-HTTP endpoint (JSON-RPC)",
      responses: {
        200: mcpResponse,
        202: { description: "Notification accepted" },
        400: rpcError("Parse error: the body is not JSON, or not a JSON-RPC message"),
        ...notFoundError,
        406: rpcError("Not acceptable: the Accept header must list both application/json and text/event-stream"),
        413: {
          description: "Body larger than MAX_BODY_BYTES (`{detail}`), or than the transport's 4 MiB (a JSON-RPC error)",
          content: { "application/json": { schema: z.union([ErrorSchema, JsonRpcErrorSchema]) } },
        },
        415: rpcError("Unsupported media type: the Content-Type must be application/json"),
      },
    }),
  ),
  get: secured(createRoute({ method: "get", path: "/mcp", tags, summary: "Not supported: no server-initiated stream (405)", responses: mcpErrors })),
  delete: secured(createRoute({ method: "delete", path: "/mcp", tags, summary: "Not supported: the transport is stateless (405)", responses: mcpErrors })),
};

/** Tool names are limited to letters, digits, `_` and `-` (64 at most). */
function toolName(name: string, taken: Set<string>, assistantId: string): string {
  let candidate = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "assistant";
  if (taken.has(candidate)) candidate = `${candidate.slice(0, 55)}_${assistantId.slice(0, 8)}`;
  taken.add(candidate);
  return candidate;
}

async function toolsFor(c: Context<AppEnv>): Promise<{ tool: Tool; assistantId: string }[]> {
  const taken = new Set<string>();
  const tools = [];
  for (const assistant of await visibleAssistants(c)) {
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

function mcpServer(c: Context<AppEnv>): Server {
  const server = new Server(
    { name: "agent-platform", version: deployment.versions.platform },
    { capabilities: { tools: {} }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await toolsFor(c)).map((entry) => entry.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const entry = (await toolsFor(c)).find((candidate) => candidate.tool.name === request.params.name);
    if (!entry) return { isError: true, content: [{ type: "text" as const, text: `Unknown tool "${request.params.name}"` }] };
    try {
      const { result } = await runToCompletion(c.env, c.get("principal"), c.get("user"), {
        assistant_id: entry.assistantId,
        input: request.params.arguments ?? {},
      });
      const failure = result && "__error__" in result ? (result.__error__ as { error: string; message: string }) : undefined;
      if (failure) return { isError: true, content: [{ type: "text" as const, text: `${failure.error}: ${failure.message}` }] };
      return { content: [{ type: "text" as const, text: finalText(result) }], structuredContent: result ?? {} };
    } catch (error) {
      return { isError: true, content: [{ type: "text" as const, text: (error as Error).message }] };
    }
  });
  return server;
}

function requireEnabled(): void {
  if (deployment.http.disable_mcp) throw notFound("MCP is disabled for this deployment (http.disable_mcp)");
}

const notAllowed = (c: Context<AppEnv>) =>
  c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless; use POST" }, id: null }, 405, { Allow: "POST" });

export const mcpRoutes = createRouter()
  .openapi(routes.post, async (c) => {
    requireEnabled();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await mcpServer(c).connect(transport);
    return transport.handleRequest(c.req.raw) as never;
  })
  .openapi(routes.get, (c) => {
    requireEnabled();
    return notAllowed(c) as never;
  })
  .openapi(routes.delete, (c) => {
    requireEnabled();
    return notAllowed(c) as never;
  });
