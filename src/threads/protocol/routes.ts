import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { runCaller, threadEventsFilter } from "../../auth/guards.ts";
import { DomainError } from "../../core/errors.ts";
import type { AppEnv } from "../../http/app-env.ts";
import { errorResponse, sse } from "../../http/responses.ts";
import { createRouter } from "../../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../../http/schemas.ts";
import { securedRoutes } from "../../http/secured.ts";
import { threadFetch, threadStub } from "../client.ts";
import { configurableHeaders } from "../runs/service.ts";
import { ThreadIdParam } from "../schemas.ts";
import { handleCommand } from "./commands.ts";
import { CommandSchema, EventsFilterSchema, ProtocolResponseSchema } from "./schemas.ts";
import { CALLER_HEADER, type SocketUpgrade } from "./socket.ts";

/** Protocol v2, thread-centric streaming: commands, an SSE event stream, and the same over a WebSocket. */

const route = securedRoutes(["Thread Streaming (protocol v2)"]);

const routes = {
  commands: route({
    method: "post",
    path: "/threads/{thread_id}/commands",
    summary: "Run a protocol command on the thread",
    description:
      "Commands answer 200 with a success or an error envelope (`invalid_argument`, `unknown_command`, `no_such_run`, " +
      "`no_such_interrupt`, `not_supported`, …). A body that is not a command envelope is a 422.",
    request: { params: ThreadIdParam, body: jsonBody(CommandSchema) },
    responses: { 200: jsonContent(ProtocolResponseSchema, "The command's response envelope"), ...notFoundError },
  }),
  events: route({
    method: "post",
    path: "/threads/{thread_id}/stream/events",
    summary: "Stream the thread's protocol events",
    description:
      "Server-sent events, one per protocol event (`event:` its method, `id:` its seq): the stored events after " +
      "`since` (all stored ones without it), then live ones from every run of the thread, until the client leaves.",
    request: { params: ThreadIdParam, body: jsonBody(EventsFilterSchema) },
    responses: {
      200: { description: "Protocol events", content: { "text/event-stream": { schema: z.string() } } },
      ...notFoundError,
    },
  }),
  socket: route({
    method: "get",
    path: "/threads/{thread_id}/stream/events",
    summary: "Open the thread's protocol WebSocket",
    description:
      "A WebSocket upgrade (authenticated like every route: X-Api-Key, or the deployment's custom auth). Command " +
      "envelopes in; responses and the events of the socket's subscriptions out. Subscriptions last across runs.",
    request: { params: ThreadIdParam },
    responses: {
      101: { description: "Switching Protocols: the WebSocket is open" },
      426: errorResponse("Not a WebSocket upgrade request"),
      ...notFoundError,
    },
  }),
};

type Ctx = Context<AppEnv>;

/** The largest `threads:read` filter a WebSocket session carries; its subscriptions need the rest. */
const MAX_SOCKET_FILTER_BYTES = 1024;

/** Request headers by lowercase name (the `x-*` ones reach graphs of runs the commands start). */
const headersOf = (c: Ctx) => Object.fromEntries(c.req.raw.headers);

export const protocolRoutes = createRouter()
  .openapi(routes.commands, async (c) => {
    const { thread_id } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    const response = await handleCommand(
      {
        env: c.env,
        threadId: thread_id,
        caller: runCaller(c),
        headers: headersOf(c),
        thread: threadStub(c.env, workspaceId, thread_id),
      },
      c.req.valid("json"),
    );
    return c.json(response, 200);
  })
  .openapi(routes.events, async (c) => {
    const { thread_id } = c.req.valid("param");
    // A client opens its stream before the run.start that creates the thread; the thread's metadata
    // must pass the reader's filter for every event it gets.
    const readFilter = await threadEventsFilter(c, thread_id);
    const stream = await threadStub(c.env, c.get("principal").workspaceId, thread_id).protocolEvents(
      c.req.valid("json"),
      readFilter,
    );
    return sse(c, stream, { Connection: "keep-alive", "X-Accel-Buffering": "no" });
  })
  .openapi(routes.socket, async (c) => {
    const { thread_id } = c.req.valid("param");
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
      throw new DomainError("upgrade_required", "Expected a WebSocket upgrade (Upgrade: websocket)");
    const readFilter = await threadEventsFilter(c, thread_id);
    // The socket keeps the filter in its hibernation attachment (2 KiB in all).
    if (readFilter && JSON.stringify(readFilter).length > MAX_SOCKET_FILTER_BYTES)
      throw new DomainError(
        "invalid",
        "Your authorization filter for threads:read is too large to keep with a WebSocket; use the SSE transport (POST /threads/{thread_id}/stream/events)",
      );
    const principal = c.get("principal");
    const user = c.get("user");
    const caller: SocketUpgrade = {
      threadId: thread_id,
      workspaceId: principal.workspaceId,
      callerId: principal.keyId,
      ...(user ? { user } : {}),
      ...(readFilter ? { readFilter } : {}),
      // Only what reaches graphs is kept with the socket: never the credentials.
      headers: configurableHeaders(headersOf(c)),
    };
    const upgraded = await threadFetch(
      c.env,
      principal.workspaceId,
      thread_id,
      new Request(c.req.url, { headers: { Upgrade: "websocket", [CALLER_HEADER]: JSON.stringify(caller) } }),
    );
    // A fresh response: the middleware adds headers (X-Request-Id, CORS), and the object's are immutable.
    return new Response(null, { status: 101, webSocket: upgraded.webSocket });
  });
