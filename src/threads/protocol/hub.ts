import { type AuthFilter, matchesFilter as passesAuthFilter } from "../../core/auth-filter.ts";
import { sseFrame } from "../../core/sse.ts";
import type { SqlStore } from "../../db/sql.ts";
import type { AuthUser } from "../../deployment/custom-auth.ts";
import { log } from "../../observability/log.ts";
import type { ProtocolRunEnd, ProtocolRunSink } from "../runs/ports.ts";
import { Subscriber } from "../runs/streams.ts";
import { ProtocolEventLog } from "./event-log.ts";
import {
  eventDrafts,
  type GraphProtocolEvent,
  isPrefixOf,
  lifecycleOf,
  matchesFilter,
  subscriptionProblem,
} from "./normalize.ts";
import type { EventFilter, ProtocolCommand, ProtocolError, ProtocolResponse, ResponseMeta } from "./schemas.ts";
import type { EventDraft, LifecycleStatus, Namespace, ProtocolEvent } from "./types.ts";

/**
 * The thread's side of protocol v2, inside its Durable Object: the numbered event log, the SSE
 * streams following it, and the WebSockets (accepted with the Hibernation API, so an idle socket
 * costs nothing) with their subscriptions. Runs report to it through `ProtocolRunSink`.
 */

/** A WebSocket subscription: a filter with an id, kept in the socket's attachment. */
export interface SocketSubscription {
  id: string;
  channels: string[];
  namespaces?: Namespace[];
  depth?: number;
}

/** What a socket keeps across hibernation (`serializeAttachment`, at most 2 KiB). */
interface SocketAttachment {
  socketId: string;
  subscriptions: SocketSubscription[];
  /** The caller's `threads:read` filter (custom auth), checked against the thread for every event. */
  readFilter?: AuthFilter;
}

/** Who opened a socket and on which thread: its commands act as that caller. Kept in SQLite. */
export interface SocketCaller {
  threadId: string;
  workspaceId: string;
  callerId: string;
  user?: AuthUser;
  headers: Record<string, string>;
  /** The caller's `threads:read` filter, when the deployment's auth handler returned one. */
  readFilter?: AuthFilter;
}

/** The attachment limit of the Hibernation API; a socket whose subscriptions outgrow it is refused more. */
const MAX_ATTACHMENT_BYTES = 2048;

/** One agent in `agent.getTree`. */
export interface AgentTreeNode {
  namespace: Namespace;
  status: string;
  graph_name: string;
  children?: AgentTreeNode[];
}

const META_SCHEMA = "CREATE TABLE IF NOT EXISTS protocol_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
const SOCKETS_SCHEMA = "CREATE TABLE IF NOT EXISTS protocol_sockets (id TEXT PRIMARY KEY, caller TEXT NOT NULL)";

export class ProtocolHub implements ProtocolRunSink {
  readonly log: ProtocolEventLog;
  readonly #streams = new Set<{ filter: EventFilter; readFilter?: AuthFilter; subscriber: Subscriber }>();
  /** Interrupt ids each running run already announced. */
  readonly #asked = new Map<string, Set<string>>();
  #tablesReady = false;

  constructor(
    private readonly sql: SqlStore,
    private readonly state: Pick<DurableObjectState, "acceptWebSocket" | "getWebSockets">,
    /** The thread's metadata (null while it does not exist), which readers' filters are checked against. */
    private readonly threadMetadata: () => Record<string, unknown> | null,
  ) {
    this.log = new ProtocolEventLog(sql);
  }

  #tables(): void {
    if (this.#tablesReady) return;
    this.sql.run(META_SCHEMA);
    this.sql.run(SOCKETS_SCHEMA);
    this.#tablesReady = true;
  }

  meta(threadId: string): ResponseMeta {
    return { thread_id: threadId, applied_through_seq: this.log.lastSeq() };
  }

  // ---- the assistant a thread is bound to ----

  boundAssistant(): string | null {
    this.#tables();
    return (
      this.sql.all<{ value: string }>("SELECT value FROM protocol_meta WHERE key = 'assistant_id'")[0]?.value ?? null
    );
  }

  bindAssistant(assistantId: string): void {
    this.#tables();
    this.sql.run("INSERT OR REPLACE INTO protocol_meta (key, value) VALUES ('assistant_id', ?)", assistantId);
  }

  // ---- events ----

  publish(draft: EventDraft): ProtocolEvent {
    const event = this.log.append(draft);
    const json = JSON.stringify(event);
    const mayRead = this.#readerCheck();
    if (this.#streams.size) {
      const frame = sseFrame(event.method, json, event.seq);
      for (const stream of this.#streams) {
        if (stream.subscriber.closed) this.#streams.delete(stream);
        else if (mayRead(stream.readFilter) && matchesFilter(stream.filter, event)) stream.subscriber.write(frame);
      }
    }
    for (const ws of this.state.getWebSockets()) {
      const attachment = ws.deserializeAttachment() as SocketAttachment | null;
      // One copy per socket, however many of its subscriptions match: clients fan out by event_id.
      if (attachment?.subscriptions.some((sub) => matchesFilter(sub, event)) && mayRead(attachment.readFilter))
        send(ws, json);
    }
    return event;
  }

  /**
   * Whether a reader with this `threads:read` filter may get the thread's events now. A reader may
   * have come before the thread existed, or the thread's metadata may have changed since: the filter is
   * checked against the thread as it is, so another user's run on that thread id stays invisible.
   */
  #readerCheck(): (readFilter: AuthFilter | undefined) => boolean {
    let metadata: Record<string, unknown> | null | undefined;
    return (readFilter) => {
      if (!readFilter) return true;
      if (metadata === undefined) metadata = this.threadMetadata();
      return metadata !== null && passesAuthFilter(metadata, readFilter);
    };
  }

  runStarted(run: { run_id: string; graphId: string }): void {
    this.#asked.set(run.run_id, new Set());
    this.publish({ method: "lifecycle", namespace: [], data: { event: "running", graph_name: run.graphId } });
  }

  event(runId: string, event: GraphProtocolEvent): void {
    let asked = this.#asked.get(runId);
    if (!asked) this.#asked.set(runId, (asked = new Set()));
    for (const draft of eventDrafts(event, asked)) this.publish(draft);
  }

  runEnded(run: { run_id: string; graphId: string }, end: ProtocolRunEnd): void {
    this.#asked.delete(run.run_id);
    const status: LifecycleStatus =
      end.status === "success" && end.pendingInterrupts ? "interrupted" : lifecycleOf(end.status);
    this.publish({
      method: "lifecycle",
      namespace: [],
      data: { event: status, graph_name: run.graphId, ...(end.error !== undefined ? { error: end.error } : {}) },
    });
  }

  // ---- SSE ----

  /** An SSE stream of the events the filter lets through: the stored ones after `since`, then live ones. */
  openStream(filter: EventFilter, readFilter?: AuthFilter): ReadableStream<Uint8Array> {
    const entry = { filter, readFilter, subscriber: new Subscriber(() => this.#streams.delete(entry)) };
    const replay = this.#readerCheck()(readFilter) ? this.log.after(filter.since ?? 0) : [];
    for (const event of replay) {
      if (matchesFilter(filter, event))
        entry.subscriber.write(sseFrame(event.method, JSON.stringify(event), event.seq));
    }
    this.#streams.add(entry);
    return entry.subscriber.readable;
  }

  // ---- WebSockets ----

  /** Accepts a socket for hibernation; its caller is stored, its subscriptions travel in its attachment. */
  accept(ws: WebSocket, caller: SocketCaller): void {
    this.#tables();
    const socketId = crypto.randomUUID();
    this.sql.run("INSERT INTO protocol_sockets (id, caller) VALUES (?, ?)", socketId, JSON.stringify(caller));
    this.state.acceptWebSocket(ws, [socketId]);
    const attachment: SocketAttachment = {
      socketId,
      subscriptions: [],
      ...(caller.readFilter ? { readFilter: caller.readFilter } : {}),
    };
    ws.serializeAttachment(attachment);
  }

  callerOf(ws: WebSocket): SocketCaller | null {
    const attachment = ws.deserializeAttachment() as SocketAttachment | null;
    if (!attachment) return null;
    this.#tables();
    const row = this.sql.all<{ caller: string }>(
      "SELECT caller FROM protocol_sockets WHERE id = ?",
      attachment.socketId,
    )[0];
    return row ? (JSON.parse(row.caller) as SocketCaller) : null;
  }

  forget(ws: WebSocket): void {
    const attachment = ws.deserializeAttachment() as SocketAttachment | null;
    if (!attachment) return;
    // Never creates the table: after the thread's deletion closed its sockets, storage stays empty.
    const exists = this.sql.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'protocol_sockets'");
    if (exists.length > 0) this.sql.run("DELETE FROM protocol_sockets WHERE id = ?", attachment.socketId);
  }

  /**
   * `subscription.subscribe` on a socket: the answer, then the stored events it matches (after
   * `since` when given), then live events, in that order on the socket.
   */
  subscribe(ws: WebSocket, command: ProtocolCommand, threadId: string): void {
    const params = command.params ?? {};
    const problem = subscriptionProblem(params);
    if (problem) {
      send(ws, error(command.id, "invalid_argument", problem));
      return;
    }
    const { channels, namespaces, depth, since } = params;
    const attachment = ws.deserializeAttachment() as SocketAttachment;
    const subscription: SocketSubscription = {
      id: crypto.randomUUID(),
      channels: channels as string[],
      ...(namespaces !== undefined ? { namespaces: namespaces as Namespace[] } : {}),
      ...(depth !== undefined ? { depth: depth as number } : {}),
    };
    const next = { ...attachment, subscriptions: [...attachment.subscriptions, subscription] };
    if (JSON.stringify(next).length > MAX_ATTACHMENT_BYTES) {
      send(
        ws,
        error(command.id, "invalid_argument", "Too many subscriptions on this socket: unsubscribe some or merge them."),
      );
      return;
    }
    const stored = this.#readerCheck()(attachment.readFilter) ? this.log.after((since as number | undefined) ?? 0) : [];
    const replay = [...stored].filter((event) => matchesFilter(subscription, event));
    send(ws, {
      type: "success",
      id: command.id,
      result: { subscription_id: subscription.id, replayed_events: replay.length },
      meta: this.meta(threadId),
    });
    for (const event of replay) send(ws, event);
    // Everything here is synchronous: no live event can slip between the replay and the attachment.
    ws.serializeAttachment(next);
  }

  unsubscribe(ws: WebSocket, command: ProtocolCommand, threadId: string): void {
    const id = command.params?.subscription_id;
    if (typeof id !== "string") {
      send(ws, error(command.id, "invalid_argument", "subscription.unsubscribe requires a subscription_id."));
      return;
    }
    const attachment = ws.deserializeAttachment() as SocketAttachment;
    const kept = attachment.subscriptions.filter((sub) => sub.id !== id);
    if (kept.length === attachment.subscriptions.length) {
      send(ws, error(command.id, "no_such_subscription", `Unknown subscription: ${id}`));
      return;
    }
    ws.serializeAttachment({ ...attachment, subscriptions: kept });
    send(ws, { type: "success", id: command.id, result: {}, meta: this.meta(threadId) });
  }

  // ---- the agent tree ----

  /**
   * The root agent and the subgraphs of its latest run, with their lifecycle states, as the stored
   * lifecycle events tell them (so the tree reaches back at most as far as the event log).
   */
  tree(graphName: string | null): AgentTreeNode {
    const states = new Map<string, { namespace: Namespace; status: string; graph_name: string }>();
    for (const event of this.log.after(0)) {
      if (event.method !== "lifecycle") continue;
      const data = event.params.data as { event?: string; graph_name?: string };
      const { namespace } = event.params;
      // A new root run starts a new tree.
      if (namespace.length === 0 && data.event === "running") states.clear();
      states.set(JSON.stringify(namespace), {
        namespace,
        status: data.event ?? "started",
        graph_name: data.graph_name ?? namespace.at(-1)?.split(":")[0] ?? graphName ?? "root",
      });
    }
    const root = states.get("[]") ?? { namespace: [], status: "started", graph_name: graphName ?? "root" };
    const build = (node: { namespace: Namespace; status: string; graph_name: string }): AgentTreeNode => {
      const children = [...states.values()]
        .filter(
          (other) =>
            other.namespace.length === node.namespace.length + 1 && isPrefixOf(node.namespace, other.namespace),
        )
        .sort((a, b) => JSON.stringify(a.namespace).localeCompare(JSON.stringify(b.namespace)))
        .map(build);
      return { ...node, ...(children.length ? { children } : {}) };
    };
    return build(root);
  }

  // ---- the thread's end ----

  /** The thread was deleted: its readers and sockets are closed, and storage is read afresh. */
  closeAll(): void {
    for (const stream of this.#streams) stream.subscriber.close();
    this.#streams.clear();
    for (const ws of this.state.getWebSockets()) {
      try {
        ws.close(1000, "Thread deleted");
      } catch (cause) {
        log.warn("closing a protocol socket failed", { error: String(cause) });
      }
    }
    this.#asked.clear();
    this.log.reset();
    this.#tablesReady = false;
  }
}

export function error(id: number | null, code: ProtocolError["error"], message: string): ProtocolError {
  return { type: "error", id, error: code, message };
}

/** Sends one JSON message; a socket that went away meanwhile is left to its close handler. */
export function send(ws: WebSocket, message: ProtocolResponse | ProtocolEvent | string): void {
  try {
    ws.send(typeof message === "string" ? message : JSON.stringify(message));
  } catch {
    // Closed between the event and the send.
  }
}
