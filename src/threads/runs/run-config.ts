import { clientConfigurable, isServerConfigurableKey } from "../../assistants/server-config.ts";
import { isObject } from "../../core/json.ts";
import type { CheckpointSelector } from "../types.ts";
import type { AgentRun } from "./run-table.ts";

/**
 * A run's config and context, layer by layer: the assistant's, the thread's (what earlier requests
 * set), the request's, then the server's. Pure; RunManager composes with it when it creates a run
 * (what the run and its thread store) and when it executes one (what the graph gets). A client never
 * sets a server key of `configurable` (see assistants/server-config.ts): every layer loses them, and
 * only the server's values reach the graph.
 */

/** Keys that pick the checkpoint a run forks from: the run's own, never the thread's. */
const CHECKPOINT_KEYS = new Set(["checkpoint_id", "checkpoint_ns", "checkpoint_map"]);

/** Later configs win key by key; `configurable` is merged the same way rather than replaced. */
export function mergeConfigs(...configs: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  const configurable: Record<string, unknown> = {};
  for (const config of configs) {
    const { configurable: inner, ...rest } = config;
    Object.assign(merged, rest);
    // Every layer (assistant, thread, request or cron payload) loses the keys only the server sets.
    Object.assign(configurable, clientConfigurable(inner));
  }
  return { ...merged, configurable };
}

/** A run's config as its thread keeps it: what the assistant and the request set, no server keys. */
export function threadConfig(config: Record<string, unknown>): Record<string, unknown> {
  const configurable = isObject(config.configurable) ? config.configurable : {};
  return {
    ...config,
    configurable: Object.fromEntries(
      Object.entries(configurable).filter(([key]) => !isServerConfigurableKey(key) && !CHECKPOINT_KEYS.has(key)),
    ),
  };
}

/** The run's context: the request's keys over the assistant's when both are objects, else the request's if any. */
export function runContext(assistantContext: unknown, requestContext: unknown): unknown {
  return isObject(assistantContext) && isObject(requestContext)
    ? { ...assistantContext, ...requestContext }
    : (requestContext ?? assistantContext);
}

/** The config a run stores: the user it acts for and the checkpoint it forks from ride in `configurable`. */
export function storedRunConfig(
  config: Record<string, unknown>,
  checkpoint: CheckpointSelector | null,
  userId: string | null,
): Record<string, unknown> {
  return {
    ...config,
    configurable: {
      ...(config.configurable as Record<string, unknown> | undefined),
      ...(checkpoint ?? {}),
      ...(userId ? { user_id: userId } : {}),
    },
  };
}

/** What of a stored run its graph's config is made from. */
export type GraphConfigSource = Pick<
  AgentRun,
  "run_id" | "thread_id" | "assistant_id" | "graphId" | "authUser" | "metadata" | "attempt"
> & { kwargs: Pick<AgentRun["kwargs"], "config" | "headers" | "context"> };

/**
 * The LangGraph config a run executes with. Of the run's config only the fields the API defines
 * (checked by RunnableConfigFields) go in: any other key would reach LangGraph unchecked, and its
 * own keys (`maxConcurrency`, `signal`, `store`, `callbacks`...) take objects JSON cannot carry.
 */
export function graphConfig(
  run: GraphConfigSource,
): Record<string, unknown> & { configurable: Record<string, unknown> } {
  const {
    configurable = {},
    recursion_limit,
    max_concurrency,
    tags,
  } = run.kwargs.config as Record<string, unknown> & {
    configurable?: Record<string, unknown>;
    recursion_limit?: number;
    max_concurrency?: number;
    tags?: string[];
  };
  // Whatever the client, the assistant or the thread put under a server key is dropped (runs
  // stored before they were dropped at creation still carry it); the server's values go in below.
  const client = clientConfigurable(configurable);
  const server = {
    thread_id: run.thread_id,
    run_id: run.run_id,
    assistant_id: run.assistant_id,
    graph_id: run.graphId,
  };
  // The custom-auth user, under LangGraph's keys and this platform's own (`platform_auth_user`); never stored in graph state.
  const auth = run.authUser
    ? {
        langgraph_auth_user: run.authUser,
        platform_auth_user: run.authUser,
        langgraph_auth_user_id: run.authUser.identity,
        langgraph_auth_permissions: run.authUser.permissions ?? [],
      }
    : {};
  return {
    ...(recursion_limit !== undefined ? { recursionLimit: recursion_limit } : {}),
    ...(max_concurrency !== undefined ? { maxConcurrency: max_concurrency } : {}),
    ...(tags ? { tags } : {}),
    configurable: {
      ...client,
      ...run.kwargs.headers,
      ...auth,
      ...server,
      checkpoint_ns: (client.checkpoint_ns as string | undefined) ?? "",
    },
    metadata: { ...run.metadata, ...server, user_id: client.user_id ?? null, run_attempt: run.attempt },
    context: run.kwargs.context,
  };
}
