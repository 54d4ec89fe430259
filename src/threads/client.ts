import { DomainError, notFound } from "../core/errors.ts";
import type { ThreadRpc } from "./thread-rpc.ts";
import type { Outcome } from "./types.ts";

/**
 * A thread's RPC methods as its callers see them: what the contract's methods (thread-rpc.ts) return,
 * awaited. RPC's own stub types rewrite results they cannot prove serializable (`unknown` fields,
 * streams inside objects), which is why this one mapping is declared here instead of at every call site.
 */
export type ThreadClient = {
  [K in keyof ThreadRpc]: ThreadRpc[K] extends (...args: infer A) => infer R
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

/**
 * Forwards a request to the thread's object itself (not an RPC call): the one use is handing it a
 * WebSocket upgrade, which only `fetch` can accept.
 */
export function threadFetch(env: Pick<Env, "THREAD">, workspaceId: string, threadId: string, request: Request) {
  return env.THREAD.get(env.THREAD.idFromName(`${workspaceId}:${threadId}`)).fetch(request);
}
