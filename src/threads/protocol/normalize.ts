import { isObject } from "../../core/json.ts";
import { toJson } from "../../db/serialize.ts";
import { taskPayload } from "../runs/checkpoint-events.ts";
import type { EventFilter } from "./schemas.ts";
import type { Channel, EventDraft, EventMethod, LifecycleStatus, Namespace } from "./types.ts";
import { isBaseChannel, isChannel } from "./types.ts";

/**
 * Pure rules of protocol v2: how the graph's own protocol events (`streamEvents(..., {version: "v3"})`)
 * become the thread's events, and which events a filter lets through.
 */

/** What LangGraph's v3 stream yields: `seq` is the graph's own, the thread renumbers. */
export interface GraphProtocolEvent {
  method: string;
  params: { namespace: Namespace; node?: string; data: unknown; timestamp?: number };
}

/** A run's status as a root lifecycle state. */
export function lifecycleOf(status: string): LifecycleStatus {
  if (status === "success") return "completed";
  if (status === "error") return "failed";
  if (status === "interrupted") return "interrupted";
  return "running";
}

/** `interrupt()` payloads (`[{id, value}]`, or `{__interrupt__: [...]}`) as `input.requested` data. */
export function inputRequests(value: unknown): { interrupt_id: string; payload: unknown }[] {
  const list = Array.isArray(value)
    ? value
    : isObject(value) && Array.isArray(value.__interrupt__)
      ? value.__interrupt__
      : [];
  return list.flatMap((entry: unknown) =>
    isObject(entry) && typeof entry.id === "string" ? [{ interrupt_id: entry.id, payload: toJson(entry.value) }] : [],
  );
}

/**
 * One graph event as thread events. `asked` holds the interrupt ids this run already announced: an
 * interrupt shows up in both `updates` and `values`, and is announced once. The root lifecycle is
 * the thread's to report (it knows how the run ended), so the graph's root lifecycle events drop.
 */
export function eventDrafts(event: GraphProtocolEvent, asked: Set<string>): EventDraft[] {
  const { method } = event;
  const { namespace, node, data } = event.params;
  const draft = (m: EventMethod, payload: unknown, at?: string): EventDraft => ({
    method: m,
    namespace,
    ...(at !== undefined ? { node: at } : {}),
    data: payload,
    ...(event.params.timestamp !== undefined ? { timestamp: event.params.timestamp } : {}),
  });
  const announce = (value: unknown): EventDraft[] =>
    inputRequests(value)
      .filter((request) => !asked.has(request.interrupt_id) && asked.add(request.interrupt_id))
      .map((request) => draft("input.requested", request));

  switch (method) {
    case "lifecycle":
      return namespace.length === 0 ? [] : [draft("lifecycle", toJson(data))];
    case "values": {
      if (!isObject(data)) return [draft("values", toJson(data))];
      const { __interrupt__, ...values } = data;
      const drafts = __interrupt__ === undefined ? [] : announce(__interrupt__);
      // A values event that only carried interrupts has no state to show.
      if (__interrupt__ === undefined || Object.keys(values).length > 0) drafts.push(draft("values", toJson(values)));
      return drafts;
    }
    case "updates": {
      const update = isObject(data) ? data : {};
      const at = typeof update.node === "string" ? update.node : node;
      if (at === "__interrupt__") return announce(update.values);
      return [draft("updates", toJson(update.values ?? {}), at)];
    }
    case "tasks":
      return [draft("tasks", taskPayload(data))];
    case "messages":
    case "tools":
    case "checkpoints":
      return [draft(method, toJson(data), node)];
    case "custom":
      return [draft("custom", toJson(isObject(data) && "name" in data ? data : { payload: data }))];
    default:
      // A graph's own named stream (a stream transformer's channel) is custom data under its name.
      if (method.startsWith("custom:") && method.length > "custom:".length)
        return [draft("custom", { name: method.slice("custom:".length), payload: toJson(data) })];
      return [];
  }
}

/** The channel an event travels on; named custom data travels on `custom:<name>`. */
export function channelOf(event: { method: string; params: { data?: unknown } }): Channel | `custom:${string}` | null {
  if (event.method === "input.requested") return "input";
  if (event.method === "custom") {
    const data = event.params.data;
    return isObject(data) && typeof data.name === "string" && data.name ? `custom:${data.name}` : "custom";
  }
  return isBaseChannel(event.method) ? event.method : null;
}

/**
 * Does `namespace` start with `prefix`? A prefix segment without `:` also matches a segment that
 * adds a task id (`agent` matches `agent:1f0…`), since clients name subgraphs by node.
 */
export function isPrefixOf(prefix: Namespace, namespace: Namespace): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((segment, i) => {
    const actual = namespace[i];
    return actual === segment || (!segment.includes(":") && actual.split(":")[0] === segment);
  });
}

/** Does the filter let `event` through: its channel, namespace prefix and depth, and `since`? */
export function matchesFilter(
  filter: EventFilter,
  event: { seq: number; method: string; params: { namespace: Namespace; data?: unknown } },
): boolean {
  if (filter.since !== undefined && event.seq <= filter.since) return false;
  const channel = channelOf(event);
  if (!channel) return false;
  if (!filter.channels.includes(channel) && !(channel.startsWith("custom:") && filter.channels.includes("custom")))
    return false;
  if (!filter.namespaces?.length) return true;
  return filter.namespaces.some(
    (prefix) =>
      isPrefixOf(prefix, event.params.namespace) &&
      (filter.depth === undefined || event.params.namespace.length - prefix.length <= filter.depth),
  );
}

/**
 * The `Command(resume)` value answering interrupts: the answer itself when it is the only interrupt
 * pending, otherwise a map interrupt id → answer (LangGraph routes each to its interrupt).
 */
export function resumeValue(responses: { interrupt_id: string; response: unknown }[], pending: number): unknown {
  if (responses.length === 1 && pending === 1) return responses[0].response;
  return Object.fromEntries(responses.map((r) => [r.interrupt_id, r.response]));
}

/** What is wrong with `subscription.subscribe` params, or null. */
export function subscriptionProblem(params: Record<string, unknown>): string | null {
  const { channels, namespaces, depth, since } = params;
  if (!Array.isArray(channels) || channels.length === 0 || !channels.every((c) => typeof c === "string"))
    return "subscription.subscribe requires a non-empty channels array.";
  const unknown = channels.find((c) => !isChannel(c));
  if (unknown !== undefined) return `subscription.subscribe: unknown channel "${unknown}".`;
  if (
    namespaces !== undefined &&
    !(
      Array.isArray(namespaces) && namespaces.every((ns) => Array.isArray(ns) && ns.every((s) => typeof s === "string"))
    )
  )
    return "namespaces must be a list of string lists.";
  for (const [name, value] of [
    ["depth", depth],
    ["since", since],
  ] as const) {
    if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= 0))
      return `${name} must be a non-negative integer.`;
  }
  return null;
}
