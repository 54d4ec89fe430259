import { chunked } from "../core/batches.ts";
import { type PlanVars, subrequestBudget, WORKER_CONNECTIONS } from "../core/limits.ts";
import { log } from "../observability/log.ts";
import { threadStub } from "./client.ts";
import type { CancelAction } from "./runs/schemas.ts";
import { type ThreadKey, threadKeysAfter } from "./search-index.ts";
import type { TtlStrategy } from "./types.ts";

/**
 * Operations that call many threads' Durable Objects: cancelling the runs of every busy thread,
 * pruning a list of threads, deleting an assistant's threads. One invocation may make at most
 * `subrequestBudget(env)` of these calls; each step does one budget's worth and names the next
 * step, which the work queue runs as its own invocation, and so on until nothing is left. Every
 * step can run twice (a retried message) with the same result: cancelling, deleting and compacting
 * are idempotent, and the keyset cursor only moves forward.
 */

export const THREAD_FAN_OUT_MESSAGE = "threads.fan-out";

export type FanOutOperation =
  /** Cancels the runs with `status` of every busy thread whose metadata contains `authMetadata`. */
  | {
      op: "cancel-runs";
      status: "pending" | "running" | "all";
      action: CancelAction;
      authMetadata?: Record<string, unknown>;
      after: ThreadKey | null;
    }
  /** Deletes every thread whose metadata names the assistant (and contains `authMetadata`). */
  | {
      op: "delete-assistant-threads";
      assistantId: string;
      authMetadata?: Record<string, unknown>;
      after: ThreadKey | null;
    }
  /** Prunes the listed threads (already checked to exist and to pass the caller's filter). */
  | { op: "prune"; threadIds: string[]; strategy: TtlStrategy };

export interface ThreadFanOutMessage {
  kind: typeof THREAD_FAN_OUT_MESSAGE;
  workspaceId: string;
  operation: FanOutOperation;
}

type FanOutEnv = Pick<Env, "DB" | "LIMITS_GUARD" | "WORKSPACE" | "THREAD" | "QUEUE"> &
  PlanVars & { SUBREQUEST_BUDGET?: string };

/** What one step did, and what is left for the queue (null: nothing). */
export interface FanOutStep {
  /** Threads the step's calls succeeded on. */
  done: number;
  /** Threads left to a later step, when known (a list); 0 when the rest is found by cursor. */
  queued: number;
  next: FanOutOperation | null;
}

/**
 * `call` on each id, WORKER_CONNECTIONS at a time; how many answered ok.
 * A thread whose call fails (its object reset, say) counts as not done: the rest of the step still
 * runs and is still queued.
 */
async function sixAtATime(ids: string[], call: (id: string) => Promise<{ ok: boolean }>): Promise<number> {
  let ok = 0;
  for (const group of chunked(ids, WORKER_CONNECTIONS)) {
    const outcomes = await Promise.allSettled(group.map(call));
    ok += outcomes.filter((outcome) => outcome.status === "fulfilled" && outcome.value.ok).length;
  }
  return ok;
}

/** One bounded step of `operation`: at most `subrequestBudget(env)` Durable Object calls. */
export async function fanOutStep(env: FanOutEnv, workspaceId: string, operation: FanOutOperation): Promise<FanOutStep> {
  const budget = subrequestBudget(env);
  if (operation.op === "prune") {
    const now = operation.threadIds.slice(0, budget);
    const rest = operation.threadIds.slice(budget);
    const done = await sixAtATime(now, (id) => threadStub(env, workspaceId, id).prune(operation.strategy));
    return { done, queued: rest.length, next: rest.length ? { ...operation, threadIds: rest } : null };
  }
  const filter =
    operation.op === "cancel-runs"
      ? { status: "busy" as const, authMetadata: operation.authMetadata }
      : { metadata: { assistant_id: operation.assistantId }, authMetadata: operation.authMetadata };
  const keys = await threadKeysAfter(env, workspaceId, filter, operation.after, budget);
  const ids = keys.map((key) => key.threadId);
  // A thread deleted meanwhile has nothing left to cancel or delete.
  const done =
    operation.op === "cancel-runs"
      ? await sixAtATime(ids, (id) =>
          threadStub(env, workspaceId, id).cancelRuns({ status: operation.status, action: operation.action }),
        )
      : await sixAtATime(ids, (id) => threadStub(env, workspaceId, id).prune("delete"));
  // A full page may have more after it; a short one was the last.
  const next = keys.length === budget ? { ...operation, after: keys[keys.length - 1] } : null;
  return { done, queued: 0, next };
}

/** Runs the first step now and hands the rest, if any, to the work queue. */
export async function startFanOut(
  env: FanOutEnv,
  workspaceId: string,
  operation: FanOutOperation,
): Promise<FanOutStep> {
  const step = await fanOutStep(env, workspaceId, operation);
  if (step.next) await continueFanOut(env, workspaceId, step.next);
  return step;
}

async function continueFanOut(env: FanOutEnv, workspaceId: string, operation: FanOutOperation): Promise<void> {
  await env.QUEUE.send({ kind: THREAD_FAN_OUT_MESSAGE, workspaceId, operation } satisfies ThreadFanOutMessage);
}

/** The queue handler: one more step, then the next message if anything is left. */
export async function handleThreadFanOut(message: ThreadFanOutMessage, env: FanOutEnv): Promise<void> {
  const step = await fanOutStep(env, message.workspaceId, message.operation);
  log.info("thread fan-out step", {
    workspace_id: message.workspaceId,
    op: message.operation.op,
    done: step.done,
    more: step.next !== null,
  });
  if (step.next) await continueFanOut(env, message.workspaceId, step.next);
}
