import { type Authorizer, matchesFilter } from "../../core/auth-filter.ts";
import { DomainError, isDomainError, notFound } from "../../core/errors.ts";
import { isObject } from "../../core/json.ts";
import { authorize } from "../../deployment/custom-auth.ts";
import { type ThreadClient, unwrap } from "../client.ts";
import { type RunCreate, RunCreateSchema } from "../runs/schemas.ts";
import { planRun, type RunCaller, type RunPlan } from "../runs/service.ts";
import type { CreateRunInput } from "../runs/types.ts";
import type { ProtocolView } from "../thread-rpc.ts";
import { resumeValue } from "./normalize.ts";
import type { ProtocolCommand, ProtocolError, ProtocolResponse } from "./schemas.ts";
import type { ProtocolErrorCode } from "./types.ts";

/**
 * Protocol v2 commands, for both transports: `POST /threads/{id}/commands` runs them in the Worker,
 * a WebSocket's messages run them in the thread's Durable Object. Either way they act as the caller
 * that authenticated the request (or the socket's upgrade), with the same authorization handlers as
 * the thread routes. Problems with a command (its arguments, the thread's state) are error envelopes;
 * a thread the caller may not see throws the not-found every thread route answers.
 */

/** The stream modes of runs started by commands. */
export const PROTOCOL_STREAM_MODES = ["values", "updates", "messages", "tools", "custom", "tasks"] as const;

/** The thread's RPC methods commands use (a ThreadDO, or its stub). */
export type ProtocolThread = Pick<ThreadClient, "protocolView" | "protocolRun" | "protocolTree" | "getState">;

export interface CommandContext {
  env: Env;
  threadId: string;
  caller: RunCaller;
  /** The request's headers (`x-*` ones reach the graph, as for every run). */
  headers: Record<string, string>;
  thread: ProtocolThread;
}

const failure = (id: number, code: ProtocolErrorCode, message: string): ProtocolError => ({
  type: "error",
  id,
  error: code,
  message,
});

const VALID_STRATEGIES = new Set(["reject", "rollback", "interrupt", "enqueue"]);

export async function handleCommand(ctx: CommandContext, command: ProtocolCommand): Promise<ProtocolResponse> {
  switch (command.method) {
    case "run.start":
      return runStart(ctx, command);
    case "input.respond":
      return inputRespond(ctx, command);
    case "state.get":
      return stateGet(ctx, command);
    case "agent.getTree": {
      await guard(ctx, "threads:read", null);
      const { tree, meta } = await ctx.thread.protocolTree(ctx.threadId);
      return { type: "success", id: command.id, result: { tree }, meta };
    }
    case "subscription.subscribe":
    case "subscription.unsubscribe":
      return failure(
        command.id,
        "not_supported",
        `${command.method} belongs to a WebSocket (GET /threads/${ctx.threadId}/stream/events); over HTTP, POST /threads/${ctx.threadId}/stream/events with the filter instead.`,
      );
    case "subscription.reconnect":
      return failure(command.id, "not_supported", "subscription.reconnect is not supported by this server.");
    default:
      return failure(command.id, "unknown_command", `Unknown protocol command: ${command.method}`);
  }
}

/** The caller's authorizer: API-key callers have no user and no handlers. */
function authorizerOf(caller: RunCaller): Authorizer | undefined {
  const user = caller.user;
  return user ? (event, value) => authorize(user, event, value) : undefined;
}

/**
 * Runs the handler for `event` and checks the thread against its filter: a thread it hides is not
 * found. `view` is the thread as already read, or null to read it here when a filter needs it.
 */
async function guard(
  ctx: CommandContext,
  event: string,
  view: ProtocolView | null,
  value: Record<string, unknown> = {},
  options: { allowMissing?: boolean } = {},
): Promise<void> {
  const filter = await authorizerOf(ctx.caller)?.(event, Object.assign(value, { thread_id: ctx.threadId }));
  if (!filter) return;
  const metadata = (view ?? (await ctx.thread.protocolView(ctx.threadId))).metadata;
  if (metadata === null && options.allowMissing) return;
  if (metadata === null || !matchesFilter(metadata, filter)) throw notFound(`Thread with ID ${ctx.threadId} not found`);
}

/** A run body checked as every run endpoint checks its body (limits, shapes); or the first problem. */
function checkedRun(body: Record<string, unknown>): { run: RunCreate } | { problem: string } {
  const parsed = RunCreateSchema.safeParse(body);
  if (parsed.success) return { run: parsed.data };
  const issue = parsed.error.issues[0];
  return { problem: `${issue.path.join(".") || "params"}: ${issue.message}` };
}

/**
 * Authorizes and plans a run of this thread, then hands it over. `respondTo` names the interrupts
 * it answers (the thread checks they are still pending when it creates the run).
 */
async function startRun(
  ctx: CommandContext,
  command: ProtocolCommand,
  body: Record<string, unknown>,
  respondTo: string[] | null,
): Promise<ProtocolResponse> {
  const checked = checkedRun({ ...body, if_not_exists: "create" });
  if ("problem" in checked) return failure(command.id, "invalid_argument", checked.problem);
  const run = checked.run;
  const value = { ...run, thread_id: ctx.threadId, metadata: run.metadata ?? {} };
  await guard(ctx, "threads:create_run", null, value, { allowMissing: true });
  let plan: RunPlan;
  try {
    plan = await planRun(ctx.env, {
      caller: ctx.caller,
      threadId: ctx.threadId,
      run: { ...run, metadata: value.metadata },
      headers: ctx.headers,
    });
  } catch (error) {
    if (isDomainError(error, "invalid") || isDomainError(error, "too_large"))
      return failure(command.id, "invalid_argument", error.message);
    throw error;
  }
  if (!plan.ok) return failure(command.id, "invalid_argument", plan.detail);
  const input: CreateRunInput = {
    ...plan.input,
    kwargs: {
      ...plan.input.kwargs,
      stream_mode: [...PROTOCOL_STREAM_MODES],
      subgraphs: true,
      // The thread's protocol log keeps the events; the run's own log would only duplicate them.
      resumable: false,
      protocol_stream: true,
    },
  };
  const outcome = await ctx.thread.protocolRun(input, respondTo);
  if (!outcome.ok) return failure(command.id, outcome.code, outcome.message);
  return {
    type: "success",
    id: command.id,
    result: respondTo ? {} : { run_id: outcome.runId },
    meta: outcome.meta,
  };
}

async function runStart(ctx: CommandContext, command: ProtocolCommand): Promise<ProtocolResponse> {
  const params = command.params ?? {};
  if (typeof params.assistant_id !== "string" || !params.assistant_id)
    return failure(command.id, "invalid_argument", "run.start requires an assistant_id.");
  // Like both official servers, an unknown multitaskStrategy falls back to the default (enqueue).
  const strategy =
    typeof params.multitaskStrategy === "string" && VALID_STRATEGIES.has(params.multitaskStrategy)
      ? params.multitaskStrategy
      : "enqueue";
  return startRun(
    ctx,
    command,
    {
      assistant_id: params.assistant_id,
      ...(params.input !== undefined ? { input: params.input } : {}),
      ...(isObject(params.config) ? { config: params.config } : {}),
      ...(isObject(params.metadata) ? { metadata: params.metadata } : {}),
      multitask_strategy: strategy,
    },
    null,
  );
}

async function inputRespond(ctx: CommandContext, command: ProtocolCommand): Promise<ProtocolResponse> {
  const params = command.params ?? {};
  let responses: { interrupt_id: string; response: unknown }[];
  if (Array.isArray(params.responses)) {
    if (!params.responses.every((entry) => isObject(entry) && typeof entry.interrupt_id === "string"))
      return failure(command.id, "invalid_argument", "input.respond responses entries require an interrupt_id.");
    responses = (params.responses as Record<string, unknown>[]).map((entry) => ({
      interrupt_id: entry.interrupt_id as string,
      response: entry.response,
    }));
    if (responses.length === 0)
      return failure(command.id, "invalid_argument", "input.respond requires at least one response.");
  } else if (typeof params.interrupt_id === "string") {
    responses = [{ interrupt_id: params.interrupt_id, response: params.response }];
  } else {
    return failure(command.id, "invalid_argument", "input.respond requires an interrupt_id (or responses).");
  }

  const view = await ctx.thread.protocolView(ctx.threadId);
  await guard(ctx, "threads:read", view);
  if (view.metadata === null || view.boundAssistant === null)
    return failure(command.id, "no_such_run", "No run was started on this thread; call run.start first.");
  const unknown = responses.find((r) => !view.pendingInterrupts.includes(r.interrupt_id));
  if (unknown)
    return failure(
      command.id,
      "no_such_interrupt",
      view.pendingInterrupts.length
        ? `Interrupt ${unknown.interrupt_id} is not pending on this thread.`
        : "No interrupt is pending on this thread.",
    );
  return startRun(
    ctx,
    command,
    {
      assistant_id: view.boundAssistant,
      command: {
        resume: resumeValue(responses, view.pendingInterrupts.length),
        ...(params.update !== undefined ? { update: params.update } : {}),
        ...(params.goto !== undefined ? { goto: params.goto } : {}),
      },
      ...(isObject(params.config) ? { config: params.config } : {}),
      ...(isObject(params.metadata) ? { metadata: params.metadata } : {}),
      multitask_strategy: "enqueue",
    },
    responses.map((r) => r.interrupt_id),
  );
}

async function stateGet(ctx: CommandContext, command: ProtocolCommand): Promise<ProtocolResponse> {
  const keys = command.params?.keys;
  if (keys !== undefined && !(Array.isArray(keys) && keys.every((key) => typeof key === "string")))
    return failure(command.id, "invalid_argument", "state.get keys must be a list of strings.");
  const view = await ctx.thread.protocolView(ctx.threadId);
  await guard(ctx, "threads:read", view);
  const body = unwrap(await ctx.thread.getState({}), ctx.threadId);
  const state = JSON.parse(typeof body === "string" ? body : await new Response(body).text()) as {
    values?: unknown;
    checkpoint?: { checkpoint_id?: string; checkpoint_ns?: string } | null;
  };
  const values = isObject(state.values) ? state.values : {};
  const checkpoint = state.checkpoint?.checkpoint_id
    ? {
        id: state.checkpoint.checkpoint_id,
        ...(state.checkpoint.checkpoint_ns ? { ns: state.checkpoint.checkpoint_ns } : {}),
      }
    : null;
  return {
    type: "success",
    id: command.id,
    result: {
      values: keys ? Object.fromEntries(Object.entries(values).filter(([key]) => keys.includes(key))) : values,
      checkpoint,
    },
    meta: view.meta,
  };
}

/**
 * A command's failure as an envelope, for the WebSocket (HTTP lets its error handler answer):
 * refusals are permission_denied, bad input invalid_argument, the rest unknown_error.
 */
export function errorEnvelope(id: number, error: unknown): ProtocolError {
  if (error instanceof DomainError) {
    if (error.kind === "forbidden" || error.kind === "unauthorized")
      return failure(id, "permission_denied", error.message);
    if (error.kind === "not_found" || error.kind === "invalid" || error.kind === "too_large")
      return failure(id, "invalid_argument", error.message);
    if (error.kind === "conflict") return failure(id, "invalid_argument", error.message);
  }
  return failure(id, "unknown_error", error instanceof Error ? error.message : "Unknown protocol error");
}
