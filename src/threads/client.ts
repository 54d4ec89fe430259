import type { DurableObject } from "cloudflare:workers";
import { database } from "../db/client.ts";
import { DomainError, notFound } from "../core/errors.ts";
import type { ThreadDO } from "./thread-do.ts";
import {
  existingThreadIds,
  indexRowJson,
  searchThreadIndex,
  type ThreadSearch,
} from "./thread-index.ts";
import type { Outcome, ThreadJson, TtlStrategy } from "./types.ts";

/**
 * A thread's RPC methods as its callers see them: what ThreadDO's methods return, awaited. RPC's own
 * stub types rewrite results they cannot prove serializable (`unknown` fields, streams inside
 * objects), which is why this one mapping is declared here instead of at every call site.
 */
export type ThreadClient = {
  [K in Exclude<keyof ThreadDO, keyof DurableObject>]: ThreadDO[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * The one doorway to a thread: its Durable Object, named `<workspace id>:<thread id>` so other
 * workspaces never reach it.
 */
export function threadStub(env: Pick<Env, "THREAD">, workspaceId: string, threadId: string): ThreadClient {
  // The only cast of a thread's RPC stub (see ThreadClient).
  return env.THREAD.get(env.THREAD.idFromName(`${workspaceId}:${threadId}`)) as unknown as ThreadClient;
}

/** Turns a thread's outcome into its value, or the DomainError it stands for. */
export function unwrap<T>(outcome: Outcome<T>, threadId: string): T {
  if (outcome.ok) return outcome.value;
  if (outcome.kind === "thread_not_found") throw notFound(`Thread with ID ${threadId} not found`);
  throw new DomainError(outcome.kind, outcome.detail);
}

export async function searchThreads(
  env: Env,
  workspaceId: string,
  search: ThreadSearch,
): Promise<{ threads: ThreadJson[]; total: number }> {
  const { rows, total } = await searchThreadIndex(database(env), workspaceId, search);
  const threads = await Promise.all(
    rows.map(async (row) => {
      const thread = indexRowJson(row);
      if (row.valuesIndexed) return thread;
      // State too large for the index: read it from the thread itself.
      const fresh = await threadStub(env, workspaceId, row.threadId).get({ oversizeValues: true });
      return fresh.ok ? fresh.value : thread;
    }),
  );
  return { threads, total };
}

/** Deletes or compacts each thread that exists in the workspace; unknown ids are skipped. */
export async function pruneThreads(
  env: Env,
  workspaceId: string,
  threadIds: string[],
  strategy: TtlStrategy,
  metadata?: Record<string, unknown>,
): Promise<number> {
  const existing = await existingThreadIds(database(env), workspaceId, [...new Set(threadIds)], metadata);
  let pruned = 0;
  // A few at a time: each is a DO call, and a Worker has 6 simultaneous connections.
  for (let i = 0; i < existing.length; i += 6) {
    const outcomes = await Promise.all(existing.slice(i, i + 6).map((id) => threadStub(env, workspaceId, id).prune(strategy)));
    pruned += outcomes.filter((o) => o.ok).length;
  }
  return pruned;
}
