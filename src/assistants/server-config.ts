import { isObject } from "../core/json.ts";

/**
 * Keys of a run's `config.configurable` that only the server sets: the ids
 * of the run and the custom-auth user. A value a request, an assistant, a thread or a cron payload
 * carries under one of them never reaches a graph, so a client cannot pose as a user (graphs trust
 * `langgraph_auth_user`) or as another thread. `user_id` is not among them: the official API lets
 * a run choose it. LangGraph's own keys (`__pregel_*`, ...) start with `__`.
 */
const SERVER_KEYS = new Set([
  "thread_id",
  "run_id",
  "assistant_id",
  "graph_id",
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
  "platform_auth_user",
]);

export function isServerConfigurableKey(key: string): boolean {
  return SERVER_KEYS.has(key) || key.startsWith("__");
}

/** `configurable` without the keys only the server sets. */
export function clientConfigurable(configurable: unknown): Record<string, unknown> {
  if (!isObject(configurable)) return {};
  return Object.fromEntries(Object.entries(configurable).filter(([key]) => !isServerConfigurableKey(key)));
}

/** `config` with its `configurable` reduced to what a client may set (see clientConfigurable). */
export function clientConfig(config: Record<string, unknown>): Record<string, unknown> {
  if (!("configurable" in config)) return config;
  return { ...config, configurable: clientConfigurable(config.configurable) };
}
