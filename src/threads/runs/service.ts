import { v7 as uuidv7 } from "uuid";
import type { AuthUser } from "../../auth/custom-auth.ts";
import type { Principal } from "../../auth/principal.ts";
import { maxBodyBytes } from "../../http/body-limit.ts";
import { invalid, isDomainError, notFound, tooLarge } from "../../core/errors.ts";
import { singleEventStream } from "./streams.ts";
import { exceedsDepth } from "../../core/json-depth.ts";
import { MAX_GRAPH_DATA_DEPTH } from "../../core/limits.ts";
import type { CreateRunInput, RunJson, StreamMode } from "./types.ts";
import type { Outcome } from "../types.ts";
import { threadStub, unwrap } from "../client.ts";
import { assistantNotFound, resolveAssistant } from "../../assistants/resolve.ts";
import type { RunCreateBody } from "./schemas.ts";

/** Request headers never copied into a run's config (credentials and tenancy). */
const PRIVATE_HEADERS = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

/** `x-*` headers and the user agent reach the graph in `config.configurable`, as in the LangGraph JS server. */
export function configurableHeaders(headers: Headers): Record<string, string> {
  const copied: Record<string, string> = {};
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    if ((key.startsWith("x-") && !PRIVATE_HEADERS.has(key)) || key === "user-agent") copied[key] = value;
  });
  return copied;
}

/**
 * The largest run a thread accepts: its input, command, config, context and metadata as JSON. The
 * Worker hands a run to its thread in one call (at most 32 MiB), and a running graph holds its
 * values several times over in the isolate's 128 MB. The request body limit (`MAX_BODY_BYTES`, 10 MiB
 * by default) is lower unless a deployment raises it.
 */
export const MAX_RUN_INPUT_BYTES = 16 * 1024 * 1024;

/** UTF-8 length of `text`, without encoding it. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
      bytes += 4; // a surrogate pair
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * 413 for a run over MAX_RUN_INPUT_BYTES. Only measured when the request body limit (`bodyLimit`)
 * does not already bound it.
 */
export function checkRunInputSize(bodyLimit: number, body: RunCreateBody): void {
  if (bodyLimit <= MAX_RUN_INPUT_BYTES) return;
  const { input, command, config, context, metadata } = body;
  const bytes = utf8Length(JSON.stringify({ input, command, config, context, metadata }));
  if (bytes > MAX_RUN_INPUT_BYTES) {
    throw tooLarge(
      `Run input is ${bytes} bytes of JSON (input, command, config, context and metadata together); the limit is ${MAX_RUN_INPUT_BYTES} bytes`,
    );
  }
}

/** Validates what needs the Worker's view (the assistant) and shapes the body for the thread. */
export async function runInput(
  env: Env,
  principal: Principal,
  body: RunCreateBody,
  target: { threadId?: string; headers: Headers; user?: AuthUser },
): Promise<CreateRunInput> {
  // A2A and MCP build their run bodies without RunCreateSchema: their graph input gets the same bound.
  if (exceedsDepth(body.input, MAX_GRAPH_DATA_DEPTH)) {
    throw invalid([{ type: "custom", loc: ["body", "input"], msg: `nesting deeper than ${MAX_GRAPH_DATA_DEPTH} levels` }]);
  }
  checkRunInputSize(maxBodyBytes(env), body);
  // A user runs only assistants their filter lets them see (a hidden one is a 404, as a missing one).
  const use = target.user ? { user: target.user, event: "assistants:search" as const, value: { metadata: {} } } : undefined;
  const assistant = await resolveAssistant(env, principal.workspaceId, body.assistant_id, use);
  if (!assistant) throw notFound(assistantNotFound(body.assistant_id));
  const runId = uuidv7();
  const stateless = target.threadId === undefined;
  const modes = [body.stream_mode ?? []].flat() as StreamMode[];
  const checkpoint = body.checkpoint_id ? { ...(body.checkpoint ?? {}), checkpoint_id: body.checkpoint_id } : (body.checkpoint ?? null);
  const requestConfig = (body.config ?? {}) as Record<string, unknown>;
  return {
    runId,
    threadId: target.threadId ?? runId,
    workspaceId: principal.workspaceId,
    assistantId: assistant.assistantId,
    graphId: assistant.graphId,
    assistant: { config: assistant.config, context: assistant.context, metadata: assistant.metadata },
    metadata: body.metadata ?? {},
    kwargs: {
      input: body.input ?? null,
      command: body.command ?? null,
      config: requestConfig,
      context: (body.context ?? {}) as Record<string, unknown>,
      stream_mode: modes.length ? [...new Set(modes)] : ["values"],
      subgraphs: body.stream_subgraphs ?? false,
      resumable: body.stream_resumable ?? false,
      interrupt_before: body.interrupt_before ?? null,
      interrupt_after: body.interrupt_after ?? null,
      webhook: body.webhook ?? null,
      on_completion: stateless ? (body.on_completion ?? "delete") : null,
      durability: body.durability ?? null,
      langsmith_tracer: body.langsmith_tracer ?? null,
      headers: configurableHeaders(target.headers),
    },
    checkpoint,
    multitaskStrategy: body.multitask_strategy ?? "enqueue",
    ifNotExists: body.if_not_exists ?? "reject",
    afterSeconds: body.after_seconds ?? 0,
    userId: ((requestConfig.configurable as Record<string, unknown> | undefined)?.user_id as string | undefined) ?? principal.keyId,
    authUser: target.user ?? null,
    stateless,
  };
}

/** SSE response headers; `Location` lets the SDK reconnect with Last-Event-ID. */
export function sseHeaders(location?: string, contentLocation?: string): Record<string, string> {
  return {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    ...(location ? { Location: location } : {}),
    ...(contentLocation ? { "Content-Location": contentLocation } : {}),
  };
}

/**
 * A join that cannot follow its run still opens its stream, as the official server's joins do: a
 * hidden or unknown run or thread becomes one `error` event whose message names the 404 (the SDK's
 * `joinStream` yields it). `detail` replaces the error's own text (stateless runs have no thread to
 * name).
 */
export async function joinedOrNotFoundEvent(
  open: () => Promise<ReadableStream<Uint8Array>>,
  detail?: string,
): Promise<ReadableStream<Uint8Array>> {
  try {
    return await open();
  } catch (error) {
    if (!isDomainError(error, "not_found")) throw error;
    return singleEventStream("error", { error: "HTTPException", message: `404: ${detail ?? error.message}` });
  }
}

/** `Last-Event-ID`: a run event sequence number; `-1` (or `-`) means from the start. */
export function lastEventId(header: string | undefined): number | undefined {
  if (header === undefined || header === "") return undefined;
  if (header === "-") return -1;
  const id = Number.parseInt(header, 10);
  return Number.isFinite(id) ? id : undefined;
}

/**
 * Creates a run the way `/runs/wait` does and reads its result: the final values, or `{__error__}`.
 * For protocols that sit on top of runs (MCP tools, A2A tasks). Without `threadId` the run is
 * stateless.
 */
export async function runToCompletion(
  env: Env,
  principal: Principal,
  user: AuthUser | undefined,
  body: RunCreateBody,
  threadId?: string,
): Promise<{ run: RunJson; result: Record<string, unknown> | null }> {
  const input = await runInput(env, principal, body, { threadId, headers: new Headers(), user });
  const created = (await threadStub(env, principal.workspaceId, input.threadId).createRunWait(input)) as Outcome<{ run: RunJson; body: ReadableStream<Uint8Array> }>;
  const { run, body: stream } = unwrap(created, input.threadId);
  const result = JSON.parse(await new Response(stream).text()) as Record<string, unknown> | null;
  return { run, result };
}
