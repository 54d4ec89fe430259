import { database } from "../db/client.ts";
import { DomainError } from "../core/errors.ts";
import { THREAD_NOT_FOUND } from "./thread-do.ts";
import {
  existingThreadIds,
  indexRowJson,
  searchThreadIndex,
  type ThreadSearch,
} from "./thread-index.ts";
import type { Outcome, ThreadJson, TtlStrategy } from "./types.ts";

/** The Durable Object of a thread. Its name includes the workspace: other workspaces never reach it. */
export function threadStub(env: Env, workspaceId: string, threadId: string) {
  return env.THREAD.get(env.THREAD.idFromName(`${workspaceId}:${threadId}`));
}

/** Turns a DO outcome into its value, or the HTTP error it stands for. */
export function unwrap<T>(outcome: Outcome<T>, threadId: string): T {
  if (outcome.ok) return outcome.value;
  const detail = outcome.detail === THREAD_NOT_FOUND ? `Thread with ID ${threadId} not found` : outcome.detail;
  throw new DomainError(KIND_OF_OUTCOME[outcome.status], detail);
}

const KIND_OF_OUTCOME = { 404: "not_found", 409: "conflict", 422: "invalid" } as const;

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
      const fresh = (await threadStub(env, workspaceId, row.threadId).get({ oversizeValues: true })) as Outcome<ThreadJson>;
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
