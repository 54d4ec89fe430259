import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { AIMessageChunk, type BaseMessageChunk } from "@langchain/core/messages";
import { Command, Send } from "@langchain/langgraph";
import { yieldToUrgentWork } from "../../core/yield.ts";
import { streamedMessageJson, toJson } from "../../db/serialize.ts";
import type { LoadedGraph } from "../../deployment/graphs.ts";
import type { GraphProtocolEvent } from "../protocol/normalize.ts";
import { checkpointPayload, debugPayload, taskPayload } from "./checkpoint-events.ts";
import type { RunCommand, StreamMode } from "./types.ts";

/** Where a run's events go: the run's event stream, by SSE event name. */
export type Publish = (event: string, data: unknown) => void;

export interface ExecuteOptions {
  graph: LoadedGraph;
  input: unknown;
  command: RunCommand | null;
  /** The run's LangGraph config: configurable, metadata, tags, recursion limit, context. */
  config: Record<string, unknown> & { configurable: Record<string, unknown> };
  runId: string;
  streamModes: StreamMode[];
  subgraphs: boolean;
  interruptBefore: string[] | "*" | null;
  interruptAfter: string[] | "*" | null;
  durability: "sync" | "async" | "exit" | null;
  signal: AbortSignal;
  publish: Publish;
  /** Extra LangChain callbacks for the whole run (the server's tracer). */
  callbacks?: BaseCallbackHandler[];
  /**
   * A protocol v2 run: the graph streams its own protocol events (LangGraph's v3 event stream, every
   * mode, subgraphs included) to this instead of the stream-mode events of `publish`.
   */
  protocol?: (event: GraphProtocolEvent) => void;
}

/** `command` as a LangGraph Command; `goto` entries that are `{node, input}` objects become Sends. */
export function toCommand(command: RunCommand): Command {
  const goto =
    command.goto === undefined || command.goto === null
      ? undefined
      : [command.goto].flat().map((target) => {
          if (typeof target === "string") return target;
          const { node, input } = target as { node: string; input?: unknown };
          return new Send(node, input);
        });
  return new Command({
    resume: command.resume,
    update: command.update as Record<string, unknown> | [string, unknown][] | undefined,
    goto,
  });
}

/** The LangGraph stream modes that produce the requested API modes. `values` always: it tracks the output. */
function graphModes(requested: StreamMode[]): Set<string> {
  const modes = new Set<string>(["values"]);
  for (const mode of requested) {
    if (mode === "events") continue;
    if (mode === "messages-tuple" || mode === "messages") modes.add("messages");
    else modes.add(mode);
  }
  return modes;
}

const messageId = (message: unknown): string | undefined =>
  message && typeof message === "object" && typeof (message as { id?: unknown }).id === "string"
    ? (message as { id: string }).id
    : undefined;

/**
 * Runs the graph and publishes its output as the API's stream events (named after the stream modes). Resolves
 * when the graph is done; rejects with the graph's error (or the abort) otherwise.
 */
export async function executeRun(options: ExecuteOptions): Promise<void> {
  const requested = new Set(options.streamModes);
  const modes = graphModes(options.streamModes);
  const partials = new Map<string, BaseMessageChunk>();
  const completed = new Set<string>();

  const handle = (namespace: string[], mode: string, chunk: unknown) => {
    const suffix = namespace.length ? `|${namespace.join("|")}` : "";
    if (mode === "messages") {
      const [message, metadata] = chunk as [BaseMessageChunk, Record<string, unknown>];
      if (requested.has("messages-tuple"))
        options.publish(`messages${suffix}`, [streamedMessageJson(message), toJson(metadata)]);
      if (requested.has("messages") && namespace.length === 0) {
        const id = messageId(message);
        if (!id) return;
        const previous = partials.get(id);
        if (!previous) options.publish("messages/metadata", { [id]: { metadata: toJson(metadata) } });
        const merged =
          previous && AIMessageChunk.isInstance(previous) && AIMessageChunk.isInstance(message)
            ? previous.concat(message)
            : message;
        partials.set(id, merged);
        options.publish("messages/partial", [streamedMessageJson(merged)]);
      }
      return;
    }
    if (mode === "values" && namespace.length === 0 && requested.has("messages")) {
      const messages = (chunk as { messages?: unknown })?.messages;
      if (Array.isArray(messages)) {
        const fresh = messages.filter((m) => {
          const id = messageId(m);
          return id !== undefined && !completed.has(id) && completed.add(id);
        });
        if (fresh.length) options.publish("messages/complete", toJson(fresh));
      }
    }
    // `values` is always streamed from the graph (it tracks progress) but only serialized when asked for.
    if (!requested.has(mode as StreamMode)) return;
    if (mode === "checkpoints") options.publish(`${mode}${suffix}`, checkpointPayload(chunk, { withConfig: true }));
    else if (mode === "debug") options.publish(`${mode}${suffix}`, debugPayload(chunk));
    else if (mode === "tasks") options.publish(`${mode}${suffix}`, taskPayload(chunk));
    else options.publish(`${mode}${suffix}`, toJson(chunk));
  };

  const streamOptions = {
    ...options.config,
    ...(options.callbacks?.length ? { callbacks: options.callbacks } : {}),
    runId: options.runId,
    signal: options.signal,
    streamMode: [...modes] as (
      | "values"
      | "updates"
      | "debug"
      | "messages"
      | "checkpoints"
      | "tasks"
      | "custom"
      | "tools"
    )[],
    subgraphs: options.subgraphs,
    ...(options.interruptBefore ? { interruptBefore: options.interruptBefore } : {}),
    ...(options.interruptAfter ? { interruptAfter: options.interruptAfter } : {}),
    ...(options.durability ? { durability: options.durability } : {}),
  };
  const input = options.command ? toCommand(options.command) : options.input;

  if (options.protocol) {
    const { streamMode: _modes, subgraphs: _subgraphs, ...v3Options } = streamOptions;
    const events = await options.graph.streamEvents(input, { ...v3Options, version: "v3" });
    for await (const event of events) {
      options.protocol(event);
      await yieldToUrgentWork(options.signal);
    }
    return;
  }
  if (requested.has("events")) {
    // streamEvents carries both the LangChain events and, as the root run's on_chain_stream
    // events, the chunks of the requested stream modes.
    for await (const event of options.graph.streamEvents(input, { ...streamOptions, version: "v2" })) {
      if (event.event === "on_chain_stream" && event.run_id === options.runId) {
        dispatch(event.data?.chunk, options.subgraphs, handle);
        continue;
      }
      if (event.tags?.includes("langsmith:hidden")) continue;
      options.publish("events", toJson(event));
      await yieldToUrgentWork(options.signal);
    }
    return;
  }
  for await (const chunk of await options.graph.stream(input, streamOptions)) {
    dispatch(chunk, options.subgraphs, handle);
    // Between chunks, other requests of the isolate get their turn (see yieldToUrgentWork).
    await yieldToUrgentWork(options.signal);
  }
}

/** Graph stream chunks are `[mode, chunk]`, or `[namespace, mode, chunk]` with subgraphs. */
function dispatch(
  chunk: unknown,
  subgraphs: boolean,
  handle: (namespace: string[], mode: string, data: unknown) => void,
): void {
  if (!Array.isArray(chunk)) return;
  if (subgraphs && chunk.length === 3) handle(chunk[0] as string[], chunk[1] as string, chunk[2]);
  else if (chunk.length === 2) handle([], chunk[0] as string, chunk[1]);
}

/** The `error` event / `__error__` payload for a failure: the error's class name and message. */
export function errorPayload(error: unknown): { error: string; message: string } {
  if (error instanceof Error) {
    const name = error.constructor?.name && error.constructor.name !== "Error" ? error.constructor.name : error.name;
    // Wrapping errors (a failed query, a failed tool) keep the useful part in their cause.
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return { error: name || "Error", message: `${error.message}${cause}` };
  }
  return { error: "Error", message: typeof error === "string" ? error : JSON.stringify(error) };
}
