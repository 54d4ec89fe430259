import { type AuthFilter, type Authorizer, matchesFilter } from "../core/auth-filter.ts";
import { conflict } from "../core/errors.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import { threadStub, unwrap } from "./client.ts";
import { startFanOut } from "./fan-out.ts";
import type { JsonBody } from "./runs/json-stream.ts";
import {
  countThreadIndex,
  existingThreadIds,
  indexRowJson,
  searchThreadIndex,
  type ThreadFilter,
  type ThreadSearch,
} from "./search-index.ts";
import type { CreateThreadInput } from "./thread-rpc.ts";
import type { ThreadJson, TtlStrategy } from "./types.ts";

/**
 * Threads as a domain: what takes more than one call to a thread or the search index (create with
 * its visibility check, search, count, prune, copy). Authorization happens at the edge: its
 * filters arrive here as data, or as an `Authorizer` where a handler must see a value mid-way.
 */

/** What the official API answers, with 409, to a copy of a thread that is missing or hidden. */
export const THREAD_NOT_FOUND = "Thread not found";

/**
 * Creates a thread. `filter` is the caller's `threads:create` filter: with `do_nothing`, an existing
 * thread is the answer only when the filter shows it (a hidden one is a conflict, as if new).
 */
export async function createThread(
  env: Env,
  input: CreateThreadInput,
  filter: AuthFilter | undefined,
): Promise<ThreadJson> {
  const stub = threadStub(env, input.workspaceId, input.threadId);
  if (filter && input.ifExists === "do_nothing") {
    const existing = await stub.get();
    if (existing.ok && !matchesFilter(existing.value.metadata, filter))
      throw conflict(`Thread ${input.threadId} already exists`);
  }
  return unwrap(await stub.create(input), input.threadId);
}

/** One page of the workspace's threads that match `search`, and how many match in all. */
export async function searchThreads(
  env: Env,
  workspaceId: string,
  search: ThreadSearch,
): Promise<{ threads: ThreadJson[]; total: number }> {
  const { rows, total } = await withFilterLimit(() => searchThreadIndex(env, workspaceId, search));
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

/** How many of the workspace's threads match `filter`. */
export function countThreads(env: Env, workspaceId: string, filter: ThreadFilter): Promise<number> {
  return withFilterLimit(() => countThreadIndex(env, workspaceId, filter));
}

/**
 * Deletes or compacts each thread that exists in the workspace (and whose metadata contains
 * `authMetadata`, the caller's filter); unknown ids are skipped. Answers how many were pruned now,
 * and how many more the work queue prunes (those past the invocation's subrequest budget).
 */
export async function pruneThreads(
  env: Env,
  workspaceId: string,
  threadIds: string[],
  strategy: TtlStrategy,
  authMetadata?: Record<string, unknown>,
): Promise<{ pruned: number; queued: number }> {
  const existing = await existingThreadIds(env, workspaceId, [...new Set(threadIds)], authMetadata);
  const step = await startFanOut(env, workspaceId, { op: "prune", threadIds: existing, strategy });
  return { pruned: step.done, queued: step.queued };
}

/**
 * Deletes the threads whose runs used an assistant (their metadata names it), found through the
 * index a page at a time; only those whose metadata contains `authMetadata` (the caller's
 * `threads:delete` filter). Past the invocation's subrequest budget the work queue deletes the rest;
 * answers whether it does.
 */
export async function deleteAssistantThreads(
  env: Env,
  workspaceId: string,
  assistantId: string,
  authMetadata: Record<string, unknown> | undefined,
): Promise<{ continuing: boolean }> {
  const step = await startFanOut(env, workspaceId, {
    op: "delete-assistant-threads",
    assistantId,
    authMetadata,
    after: null,
  });
  return { continuing: step.next !== null };
}

/**
 * Copies a thread with its whole history into a new thread, and answers the copy as JSON bytes
 * (values of any size included, see ThreadDO.getBody). The copy is a thread the caller creates:
 * `authorize` runs its `threads:create` handler, which may stamp the copy's metadata. A source
 * that vanished meanwhile is a conflict (THREAD_NOT_FOUND), as the official API answers.
 */
export async function copyThread(
  env: Env,
  workspaceId: string,
  threadId: string,
  authorize: Authorizer,
): Promise<JsonBody> {
  const copied = await threadStub(env, workspaceId, threadId).copyTo(crypto.randomUUID());
  if (!copied.ok && copied.kind === "thread_not_found") throw conflict(THREAD_NOT_FOUND);
  const copy = unwrap(copied, threadId);
  const value = { thread_id: copy.thread_id, metadata: { ...copy.metadata } };
  await authorize("threads:create", value);
  const target = threadStub(env, workspaceId, copy.thread_id);
  const answer =
    JSON.stringify(value.metadata) === JSON.stringify(copy.metadata)
      ? await target.getBody()
      : await target.patch({ metadata: value.metadata });
  return unwrap(answer, copy.thread_id);
}
