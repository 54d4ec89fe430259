import type { Context } from "hono";
import { type AuthFilter, type Authorizer, matchesFilter } from "../core/auth-filter.ts";
import { notFound } from "../core/errors.ts";
import { authorize } from "../deployment/custom-auth.ts";
import type { AppEnv } from "../http/app-env.ts";
import { threadStub } from "../threads/client.ts";
import type { RunCreate } from "../threads/runs/schemas.ts";
import type { RunCaller, RunRequest } from "../threads/runs/service.ts";

/**
 * Authorization as routes use it. API-key requests have no user and pass; custom-auth users go
 * through the deployment's handlers. A resource a filter hides is reported as not found, never 403.
 */

/** The handler's filter for `event` (undefined: no restriction). `value` may be changed by the handler. */
export function authFilter(
  c: Context<AppEnv>,
  event: string,
  value: Record<string, unknown>,
): Promise<AuthFilter | undefined> {
  const user = c.get("user");
  return user ? authorize(user, event, value) : Promise.resolve(undefined);
}

/** The request's authorization, for domain services that run handlers themselves. */
export const authorizerOf =
  (c: Context<AppEnv>): Authorizer =>
  (event, value) =>
    authFilter(c, event, value);

/**
 * Authorizes `event` on a thread and checks its metadata against the filter: a thread the filter
 * hides is a 404. Returns the (possibly handler-changed) value.
 */
export async function guardThread<V extends Record<string, unknown>>(
  c: Context<AppEnv>,
  threadId: string,
  event: string,
  value: V = {} as V,
  options: { allowMissing?: boolean } = {},
): Promise<V> {
  const filter = await authFilter(c, event, Object.assign(value, { thread_id: threadId }));
  if (!filter) return value;
  const thread = await threadStub(c.env, c.get("principal").workspaceId, threadId).get();
  // A run may create its thread (`if_not_exists: create`); the thread then gets the run's metadata.
  if (!thread.ok && options.allowMissing) return value;
  if (!thread.ok || !matchesFilter(thread.value.metadata, filter))
    throw notFound(`Thread with ID ${threadId} not found`);
  return value;
}

/**
 * Authorizes reading a thread's events, on a thread that may not exist yet (a client opens its stream
 * before the run that creates the thread). Returns the handler's filter, which the thread's metadata
 * must keep passing for each event the reader gets.
 */
export async function threadEventsFilter(c: Context<AppEnv>, threadId: string): Promise<AuthFilter | undefined> {
  const filter = await authFilter(c, "threads:read", { thread_id: threadId });
  if (!filter) return undefined;
  const thread = await threadStub(c.env, c.get("principal").workspaceId, threadId).get();
  if (thread.ok && !matchesFilter(thread.value.metadata, filter))
    throw notFound(`Thread with ID ${threadId} not found`);
  return filter;
}

/** Checks a loaded resource's metadata against the handler's filter for `event`; hidden → 404. */
export async function guardMetadata(
  c: Context<AppEnv>,
  event: string,
  value: Record<string, unknown>,
  metadata: Record<string, unknown>,
  hiddenDetail: string,
): Promise<void> {
  if (!matchesFilter(metadata, await authFilter(c, event, value))) throw notFound(hiddenDetail);
}

/** Who asks for runs in this request. */
export const runCaller = (c: Context<AppEnv>): RunCaller => ({
  workspaceId: c.get("principal").workspaceId,
  callerId: c.get("principal").keyId,
  user: c.get("user"),
});

/**
 * Authorizes creating `run` (on `threadId`, or a stateless run) and makes it a run request. The
 * handler sees the run about to be created and may stamp its metadata; on an existing thread its
 * filter must match the thread (a hidden thread is a 404).
 */
export async function authorizedRunRequest(c: Context<AppEnv>, run: RunCreate, threadId?: string): Promise<RunRequest> {
  const value = { ...run, thread_id: threadId ?? null, metadata: run.metadata ?? {} };
  if (threadId)
    await guardThread(c, threadId, "threads:create_run", value, { allowMissing: run.if_not_exists === "create" });
  else await authFilter(c, "threads:create_run", value);
  return {
    caller: runCaller(c),
    threadId,
    run: { ...run, metadata: value.metadata },
    headers: Object.fromEntries(c.req.raw.headers),
  };
}
