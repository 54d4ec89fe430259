import { v7 as uuidv7 } from "uuid";
import { assistantNotFound, resolveAssistant } from "../../assistants/resolve.ts";
import { invalid, notFound, tooLarge } from "../../core/errors.ts";
import { exceedsDepth } from "../../core/json-depth.ts";
import { checkJsonSizes, rowBound } from "../../core/json-size.ts";
import { MAX_GRAPH_DATA_DEPTH, MAX_JSON_FIELD_BYTES, maxBodyBytes, runTimeoutMs } from "../../core/limits.ts";
import { urgently } from "../../core/yield.ts";
import type { AuthUser } from "../../deployment/custom-auth.ts";
import { threadStub, unwrap } from "../client.ts";
import { startFanOut } from "../fan-out.ts";
import type { RunCreate } from "./schemas.ts";
import type { CancelAction, CreateRunInput, RunJson } from "./types.ts";
import { RUN_NOT_FOUND } from "./types.ts";

/**
 * Runs as a domain: their creation, for every caller that starts runs (the run routes: stateful,
 * stateless, batch, wait, stream; crons, MCP tools and A2A tasks), and a workspace-wide cancel.
 * The caller authorizes first (custom-auth handlers are consulted at the edge); creation checks
 * what needs the Worker's view (the assistant, the limits), shapes the run for its thread and
 * hands it over.
 */

/** Who asks for a run, in which workspace. */
export interface RunCaller {
  workspaceId: string;
  /** The run's user when its config names none (`configurable.user_id`): an API key's id, or a cron's user. */
  callerId: string;
  /** The custom-auth user: runs only the assistants its filter shows, and the graph sees it in its config. */
  user?: AuthUser;
}

/** A run to create: who asks, on which thread (none: a stateless run), and the run's own fields. */
export interface RunRequest {
  caller: RunCaller;
  threadId?: string;
  run: RunCreate;
  /** The request's headers, by lowercase name: `x-*` ones and the user agent reach the graph. */
  headers?: Record<string, string>;
}

/** A checked run request, ready for its thread; or why there is no run to make. */
export type RunPlan = { ok: true; input: CreateRunInput } | { ok: false; missing: "assistant"; detail: string };

/** Request headers never copied into a run's config (credentials and tenancy). */
const PRIVATE_HEADERS = new Set(["x-api-key", "x-tenant-id", "x-service-key"]);

/** `x-*` headers and the user agent reach the graph in `config.configurable`, as on the official servers. */
export function configurableHeaders(headers: Record<string, string>): Record<string, string> {
  const copied: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if ((key.startsWith("x-") && !PRIVATE_HEADERS.has(key)) || key === "user-agent") copied[key] = value;
  }
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
 * Refuses (too large) a run over MAX_RUN_INPUT_BYTES. Only measured when the request body limit
 * (`bodyLimit`) does not already bound it.
 */
export function checkRunInputSize(bodyLimit: number, run: RunCreate): void {
  if (bodyLimit <= MAX_RUN_INPUT_BYTES) return;
  const { input, command, config, context, metadata } = run;
  const bytes = utf8Length(JSON.stringify({ input, command, config, context, metadata }));
  if (bytes > MAX_RUN_INPUT_BYTES) {
    throw tooLarge(
      `Run input is ${bytes} bytes of JSON (input, command, config, context and metadata together); the limit is ${MAX_RUN_INPUT_BYTES} bytes`,
    );
  }
}

/**
 * Checks a run request and shapes it for its thread. An assistant that does not exist, or that the
 * caller's filter hides, is a typed result; a request over a limit throws.
 */
export async function planRun(env: Env, request: RunRequest): Promise<RunPlan> {
  const { caller, run, threadId } = request;
  // A2A and MCP build their runs without RunCreateSchema: their graph input gets the same bound.
  if (exceedsDepth(run.input, MAX_GRAPH_DATA_DEPTH)) {
    throw invalid([
      { type: "custom", loc: ["body", "input"], msg: `nesting deeper than ${MAX_GRAPH_DATA_DEPTH} levels` },
    ]);
  }
  checkRunInputSize(maxBodyBytes(env), run);
  // Stored in rows: the run's, its thread's (config), every checkpoint's (metadata).
  checkJsonSizes(
    { metadata: run.metadata, config: run.config, context: run.context },
    rowBound(env, MAX_JSON_FIELD_BYTES),
  );
  // A user runs only assistants their filter lets them see (a hidden one is as missing as an unknown one).
  const use = caller.user
    ? { user: caller.user, event: "assistants:search" as const, value: { metadata: {} } }
    : undefined;
  const assistant = await resolveAssistant(env, caller.workspaceId, run.assistant_id, use);
  if (!assistant) return { ok: false, missing: "assistant", detail: assistantNotFound(run.assistant_id) };
  const runId = uuidv7();
  const stateless = threadId === undefined;
  const modes = [run.stream_mode ?? []].flat();
  const checkpoint = run.checkpoint_id
    ? { ...(run.checkpoint ?? {}), checkpoint_id: run.checkpoint_id }
    : (run.checkpoint ?? null);
  const config = run.config ?? {};
  const input: CreateRunInput = {
    runId,
    threadId: threadId ?? runId,
    workspaceId: caller.workspaceId,
    assistantId: assistant.assistantId,
    graphId: assistant.graphId,
    assistant: { config: assistant.config, context: assistant.context, metadata: assistant.metadata },
    metadata: run.metadata ?? {},
    kwargs: {
      input: run.input ?? null,
      command: run.command ?? null,
      config,
      context: run.context ?? {},
      stream_mode: modes.length ? [...new Set(modes)] : ["values"],
      subgraphs: run.stream_subgraphs ?? false,
      resumable: run.stream_resumable ?? false,
      interrupt_before: run.interrupt_before ?? null,
      interrupt_after: run.interrupt_after ?? null,
      webhook: run.webhook ?? null,
      on_completion: stateless ? (run.on_completion ?? "delete") : null,
      durability: run.durability ?? null,
      langsmith_tracer: run.langsmith_tracer ?? null,
      headers: configurableHeaders(request.headers ?? {}),
    },
    checkpoint,
    multitaskStrategy: run.multitask_strategy ?? "enqueue",
    ifNotExists: run.if_not_exists ?? "reject",
    afterSeconds: run.after_seconds ?? 0,
    userId: (config.configurable?.user_id as string | undefined) ?? caller.callerId,
    authUser: caller.user ?? null,
    stateless,
    timeoutMs: runTimeoutMs(env),
  };
  return { ok: true, input };
}

/** planRun for API callers, where a missing assistant is a not-found error. */
export async function prepareRun(env: Env, request: RunRequest): Promise<CreateRunInput> {
  const plan = await planRun(env, request);
  if (!plan.ok) throw notFound(plan.detail);
  return plan.input;
}

/** Hands a prepared run to its thread, to run in the background. */
export function startRun(env: Env, input: CreateRunInput): Promise<RunJson> {
  return urgently(async () => {
    const started = await threadStub(env, input.workspaceId, input.threadId).createRun(input);
    return unwrap(started, input.threadId).run;
  });
}

/** Creates a background run. */
export async function createRun(env: Env, request: RunRequest): Promise<RunJson> {
  return startRun(env, await prepareRun(env, request));
}

/** Creates a run with a reader attached before it starts: its SSE event stream. */
export async function createRunStream(
  env: Env,
  request: RunRequest,
  options: { cancelOnDisconnect: boolean },
): Promise<{ run: RunJson; stream: ReadableStream<Uint8Array> }> {
  return urgently(async () => {
    const input = await prepareRun(env, request);
    const started = await threadStub(env, input.workspaceId, input.threadId).createRunStream(
      input,
      options.cancelOnDisconnect,
    );
    const { run, stream } = unwrap(started, input.threadId);
    // A run created with a reader always comes back with its stream.
    if (!stream) throw new Error(`Run ${run.run_id} was created without its stream`);
    return { run, stream };
  });
}

/** Creates a run and returns its `/wait` body: keep-alive newlines, then its final values or `{__error__}`. */
export async function createRunWait(
  env: Env,
  request: RunRequest,
): Promise<{ run: RunJson; body: ReadableStream<Uint8Array> }> {
  return urgently(async () => {
    const input = await prepareRun(env, request);
    const started = await threadStub(env, input.workspaceId, input.threadId).createRunWait(input);
    return unwrap(started, input.threadId);
  });
}

/**
 * Creates a run the way `/runs/wait` does and reads its result: the final values, or `{__error__}`.
 * For protocols that sit on top of runs (MCP tools). Without `threadId` the run is stateless.
 */
export async function runToCompletion(
  env: Env,
  request: RunRequest,
): Promise<{ run: RunJson; result: Record<string, unknown> | null }> {
  const { run, body } = await createRunWait(env, request);
  const result = JSON.parse(await new Response(body).text()) as Record<string, unknown> | null;
  return { run, result };
}

/**
 * The `/join` body of a run: keep-alive newlines, then its final values or `{__error__}`, as JSON
 * bytes (a state of any size). A run unknown now is not found; one that vanishes while it is
 * awaited (rolled back) is reported in the body, as `/wait` does.
 */
export async function joinRunBody(
  env: Env,
  workspaceId: string,
  threadId: string,
  runId: string,
): Promise<ReadableStream<Uint8Array>> {
  const thread = threadStub(env, workspaceId, threadId);
  unwrap(await thread.getRun(runId), threadId);
  return thread.joinRunBody(runId);
}

/**
 * Cancels one run of a thread and answers it as it is after the cancel (`wait`: once its execution
 * stopped). An unknown run is not found.
 */
export async function cancelRun(
  env: Env,
  workspaceId: string,
  threadId: string,
  runId: string,
  options: { action: CancelAction; wait: boolean },
): Promise<RunJson> {
  const run = unwrap(
    await threadStub(env, workspaceId, threadId).cancelRuns({ runIds: [runId], ...options }),
    threadId,
  );
  // The thread answers a cancel of named runs with each of them, or not_found.
  if (!run) throw notFound(RUN_NOT_FOUND);
  return run;
}

/**
 * Cancels the runs with `status` on every busy thread of the workspace whose metadata contains
 * `authMetadata` (the caller's `threads:update` filter). Threads are found through the search index
 * (a run's thread is `busy` there while it has a pending or running run), a keyset page at a time:
 * one subrequest budget's worth now, the rest through the work queue. Answers whether it continues.
 */
export async function cancelWorkspaceRuns(
  env: Env,
  workspaceId: string,
  request: {
    status: "pending" | "running" | "all";
    action: CancelAction;
    authMetadata: Record<string, unknown> | undefined;
  },
): Promise<{ continuing: boolean }> {
  const step = await startFanOut(env, workspaceId, { op: "cancel-runs", ...request, after: null });
  return { continuing: step.next !== null };
}
