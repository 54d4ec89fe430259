import { v5 as uuidv5 } from "uuid";
import { matchesFilter } from "../core/auth-filter.ts";
import { ASSISTANT_CACHE_ENTRIES, ASSISTANT_CACHE_TTL_MS } from "../core/limits.ts";
import { TtlCache } from "../core/ttl-cache.ts";
import { database, readReplicated, requestNamesBookmark } from "../db/client.ts";
import type { AssistantRow } from "../db/schema.ts";
import { type AuthUser, authorize } from "../deployment/custom-auth.ts";
import { deployment } from "../deployment/index.ts";
import { log } from "../observability/log.ts";
import { type AssistantFields, ensureSystemAssistants, getAssistant } from "./store.ts";

/** The namespace the official server derives system assistant ids from (RFC 4122's URL namespace). */
const SYSTEM_ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

export function systemAssistantId(graphId: string): string {
  return uuidv5(graphId, SYSTEM_ASSISTANT_NAMESPACE);
}

/**
 * The system assistants of this deployment: one per graph, named after it. Their config and context
 * come from `LANGGRAPH_CONFIG` (a JSON object keyed by graph id, as the official server reads it).
 */
function systemAssistants(): ({ assistantId: string } & AssistantFields)[] {
  let overrides: Record<string, Record<string, unknown>> = {};
  try {
    overrides = process.env.LANGGRAPH_CONFIG ? JSON.parse(process.env.LANGGRAPH_CONFIG) : {};
  } catch (error) {
    log.error("LANGGRAPH_CONFIG is not valid JSON; system assistants use empty configs", { error: String(error) });
  }
  return deployment.graphs.map((graph) => {
    const { context = {}, ...config } = overrides[graph.id] ?? {};
    return {
      assistantId: systemAssistantId(graph.id),
      graphId: graph.id,
      config,
      context,
      metadata: { created_by: "system" },
      name: graph.id,
      description: graph.description,
    };
  });
}

/**
 * Workspaces whose system assistants this isolate has already ensured: only spares the inserts, since
 * a system assistant can never be deleted (409), so once ensured it stays in every isolate's view.
 */
const ensured = new Set<string>();

/** Makes sure the workspace has this deployment's system assistants: the first request does it. */
export async function ensureWorkspaceAssistants(env: Env, workspaceId: string): Promise<void> {
  if (ensured.has(workspaceId)) return;
  await ensureSystemAssistants(database(env), workspaceId, systemAssistants(), new Date().toISOString());
  ensured.add(workspaceId);
}

/** The deployed graph whose system assistant this is, or undefined for any other assistant. */
export function systemAssistantGraph(assistantId: string): string | undefined {
  return deployment.graphs.find((graph) => systemAssistantId(graph.id) === assistantId)?.id;
}

/** A graph id names its system assistant; anything else is taken as an assistant id. */
export function assistantIdOf(idOrGraphId: string): string {
  return deployment.graphs.some((graph) => graph.id === idOrGraphId)
    ? systemAssistantId(idOrGraphId)
    : idOrGraphId.toLowerCase();
}

/** The workspace's assistant named by an assistant id or a graph id, or undefined (the latest write). */
export async function findAssistant(
  env: Env,
  workspaceId: string,
  idOrGraphId: string,
): Promise<AssistantRow | undefined> {
  await ensureWorkspaceAssistants(env, workspaceId);
  return getAssistant(database(env), workspaceId, assistantIdOf(idOrGraphId));
}

/** What a run needs from its assistant. */
export interface ResolvedAssistant {
  assistantId: string;
  graphId: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/**
 * Who asks to use an assistant (custom auth only), and which handler's filter decides: the official
 * server takes the `assistants:search` filter for runs and `assistants:read` for crons.
 */
export interface AssistantUse {
  user: AuthUser;
  event: "assistants:search" | "assistants:read";
  value: Record<string, unknown>;
}

/**
 * The workspace's assistant named by an assistant id or a graph id, or undefined. With `use`, an
 * assistant the handler's filter hides is undefined too, as if it did not exist. A graph's system
 * assistant is exempt, as on the official server: every user may run the deployment's graphs.
 */
export async function resolveAssistant(
  env: Env,
  workspaceId: string,
  idOrGraphId: string,
  use?: AssistantUse,
): Promise<ResolvedAssistant | undefined> {
  const row = await assistantForRun(env, workspaceId, assistantIdOf(idOrGraphId));
  if (!row) return undefined;
  if (
    use &&
    !systemAssistantGraph(row.assistantId) &&
    !matchesFilter(row.metadata, await authorize(use.user, use.event, use.value))
  )
    return undefined;
  return {
    assistantId: row.assistantId,
    graphId: row.graphId,
    config: row.config,
    context: (row.context ?? {}) as Record<string, unknown>,
    metadata: row.metadata,
  };
}

/**
 * Assistants this isolate read for runs, for ASSISTANT_CACHE_TTL_MS: the lookup before every run then
 * reaches D1 once per isolate and assistant in that time, not once per run (no database shared by
 * every tenant on the run's path). A change made in this isolate forgets its entry at once; another
 * isolate runs the old version for at most the TTL, as a read replica's lag would. A request that
 * sends a bookmark is not answered from the cache.
 */
const forRuns = new TtlCache<AssistantRow>(ASSISTANT_CACHE_ENTRIES);

async function assistantForRun(env: Env, workspaceId: string, assistantId: string): Promise<AssistantRow | undefined> {
  const key = `${workspaceId}\n${assistantId}`;
  const useCache = !requestNamesBookmark(env);
  const cached = useCache ? forRuns.get(key) : undefined;
  if (cached) return cached;
  // A read replica may answer (through the request's D1 session, so a client that sends the bookmark
  // of its last change runs the assistant as changed).
  await ensureWorkspaceAssistants(env, workspaceId);
  const row = await readReplicated(env, (db) => getAssistant(db, workspaceId, assistantId));
  if (row && useCache) forRuns.set(key, row, Date.now() + ASSISTANT_CACHE_TTL_MS);
  return row;
}

/** Forgets this isolate's cached copy of an assistant (it was changed or deleted here). */
export function forgetAssistant(workspaceId: string, assistantId: string): void {
  forRuns.deleteWhere((key) => key === `${workspaceId}\n${assistantId}`);
}

export const assistantNotFound = (id: string) =>
  `No assistant found for "${id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`;
