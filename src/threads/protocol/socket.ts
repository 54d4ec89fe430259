import { isObject } from "../../core/json.ts";
import { database } from "../../db/client.ts";
import { apiKeyLapse } from "../../tenancy/store.ts";
import type { ThreadRecord } from "../object/record.ts";
import { type CommandContext, errorEnvelope, handleCommand } from "./commands.ts";
import { error, type ProtocolHub, type SocketCaller, send } from "./hub.ts";
import { CommandSchema, type ProtocolCommand } from "./schemas.ts";

/**
 * The WebSocket transport of protocol v2, on the thread's Durable Object. The Worker authenticates
 * and authorizes the upgrade request, then forwards it here with the caller in CALLER_HEADER; the
 * object accepts the socket with the Hibernation API, so an idle socket keeps nothing in memory.
 */

export type SocketUpgrade = SocketCaller;

/** The internal header carrying the authenticated caller from the Worker to the thread. */
export const CALLER_HEADER = "X-Protocol-Caller";

/** Accepts the forwarded upgrade (anything else here is a bug of the Worker). */
export function upgradeSocket(request: Request, hub: ProtocolHub): Response {
  const caller = request.headers.get(CALLER_HEADER);
  if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket" || !caller)
    return new Response("Expected a forwarded WebSocket upgrade", { status: 400 });
  const pair = new WebSocketPair();
  hub.accept(pair[1], JSON.parse(caller) as SocketCaller);
  return new Response(null, { status: 101, webSocket: pair[0] });
}

/**
 * A socket outlives the request that opened it: every command checks that the API key it was opened
 * with still authenticates (not revoked, not expired). Custom-auth sessions are checked once, at the
 * upgrade, as the official servers do; the bootstrap key is the deployment's own secret.
 */
async function credentialLapse(env: Env, caller: SocketCaller): Promise<string | null> {
  if (caller.user || caller.callerId === "bootstrap") return null;
  return apiKeyLapse(database(env), caller.callerId);
}

/** Interrupt ids the thread waits on (from its record's `interrupts`: task id → interrupts). */
export function pendingInterruptIds(record: ThreadRecord | null): string[] {
  if (!record) return [];
  return Object.values(record.interrupts).flatMap((list) =>
    list.flatMap((entry) =>
      entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string"
        ? [(entry as { id: string }).id]
        : [],
    ),
  );
}

/**
 * Parses one socket message as a command envelope, with the schema (and so the limits) of the HTTP
 * route; null (after answering) when it is not one.
 */
function envelope(ws: WebSocket, message: string | ArrayBuffer): ProtocolCommand | null {
  let payload: unknown;
  try {
    payload = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
  } catch {
    send(ws, error(null, "invalid_argument", "Protocol commands must be valid JSON."));
    return null;
  }
  const command = CommandSchema.safeParse(payload);
  if (!command.success) {
    const given = isObject(payload) ? payload.id : undefined;
    const id = typeof given === "number" && Number.isInteger(given) && given >= 0 ? given : null;
    const issues = command.error.issues.map((issue) => `${issue.path.join(".") || "command"}: ${issue.message}`);
    send(
      ws,
      error(
        id,
        "invalid_argument",
        `Protocol commands must include a non-negative integer id, a string method and optional object params (${issues.join("; ")}).`,
      ),
    );
    return null;
  }
  return command.data;
}

/** Runs one socket message: subscriptions here, every other command as over HTTP, as the socket's caller. */
export async function socketCommand(
  ws: WebSocket,
  message: string | ArrayBuffer,
  hub: ProtocolHub,
  contextOf: (caller: SocketCaller) => CommandContext,
): Promise<void> {
  const command = envelope(ws, message);
  if (!command) return;
  const caller = hub.callerOf(ws);
  if (!caller) {
    send(ws, error(command.id, "permission_denied", "This socket's session is gone; reconnect."));
    ws.close(1008, "Unknown socket");
    return;
  }
  const context = contextOf(caller);
  const lapse = await credentialLapse(context.env, caller);
  if (lapse) {
    send(ws, error(command.id, "permission_denied", `${lapse}; this socket is closed.`));
    ws.close(1008, "Credentials no longer valid");
    return;
  }
  if (command.method === "subscription.subscribe") return hub.subscribe(ws, command, caller.threadId);
  if (command.method === "subscription.unsubscribe") return hub.unsubscribe(ws, command, caller.threadId);
  try {
    send(ws, await handleCommand(context, command));
  } catch (cause) {
    send(ws, errorEnvelope(command.id, cause));
  }
}
