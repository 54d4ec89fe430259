import { createRoute, z } from "@hono/zod-openapi";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { Context } from "hono";
import { visibleAssistants } from "../assistants/agents.ts";
import { authFilter, runCaller } from "../auth/guards.ts";
import { deployment } from "../deployment/index.ts";
import type { AppEnv } from "../http/app-env.ts";
import { createRouter } from "../http/router.ts";
import { ErrorSchema, notFoundError } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import { assistantTools, callTool, requireMcpEnabled } from "./service.ts";

/**
 * MCP over the streamable-HTTP transport, stateless (the tools: service.ts). Built on the official
 * SDK's web-standard transport, with its Workers-safe JSON Schema validator.
 */

const tags = ["MCP"];
const mcpResponse = {
  description: "JSON-RPC response (202 for notifications)",
  content: { "application/json": { schema: z.unknown() } },
};

/** The transport answers protocol errors as JSON-RPC errors, not `{"detail": ...}`. */
const JsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal("2.0"),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .openapi("JsonRpcError");
const rpcError = (description: string) => ({
  description,
  content: { "application/json": { schema: JsonRpcErrorSchema } },
});

/** Statuses of the MCP endpoint besides the shared ones; 404 when the deployment disables MCP. */
const mcpErrors = {
  ...notFoundError,
  405: rpcError("Method not allowed: the endpoint is stateless; use POST (Allow: POST)"),
};

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
  get: secured(
    createRoute({
      method: "get",
      path: "/mcp",
      tags,
      summary: "Not supported: no server-initiated stream (405)",
      responses: mcpErrors,
    }),
  ),
  delete: secured(
    createRoute({
      method: "delete",
      path: "/mcp",
      tags,
      summary: "Not supported: the transport is stateless (405)",
      responses: mcpErrors,
    }),
  ),
};

function mcpServer(c: Context<AppEnv>): Server {
  const server = new Server(
    { name: "agent-platform", version: deployment.versions.platform },
    { capabilities: { tools: {} }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const tools = async () =>
    assistantTools(
      await visibleAssistants(c.env, c.get("principal").workspaceId, await authFilter(c, "assistants:search", {})),
    );
  const caller = runCaller(c);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await tools()).map((entry) => entry.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callTool(c.env, caller, await tools(), request.params.name, request.params.arguments),
  );
  return server;
}

const notAllowed = (c: Context<AppEnv>) =>
  c.json(
    {
      jsonrpc: "2.0" as const,
      error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless; use POST" },
      id: null,
    },
    405,
    { Allow: "POST" },
  );

export const mcpRoutes = createRouter()
  .openapi(routes.post, async (c) => {
    requireMcpEnabled();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcpServer(c).connect(transport);
    return transport.handleRequest(c.req.raw);
  })
  .openapi(routes.get, (c) => {
    requireMcpEnabled();
    return notAllowed(c);
  })
  .openapi(routes.delete, (c) => {
    requireMcpEnabled();
    return notAllowed(c);
  });
