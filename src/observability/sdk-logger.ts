/**
 * The logger `getLogger()` from `@langchain/langgraph-sdk/logging` returns inside a deployment. The SDK
 * looks it up on a global symbol, which the official servers set before loading graphs; without it a
 * graph that logs at module load fails to load. Lines go to the structured log, with the graph node and
 * run the call came from when there is one.
 */
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { log } from "./log.ts";

const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** The SDK's `Logger` interface: these level names, each taking a message plus metadata or one object. */
const LEVELS = [
  "error",
  "warn",
  "help",
  "data",
  "info",
  "debug",
  "prompt",
  "http",
  "verbose",
  "input",
  "silly",
] as const;
type Level = (typeof LEVELS)[number];
type LogMethod = (message: unknown, ...meta: unknown[]) => SdkLogger;
export type SdkLogger = Record<Level, LogMethod>;

const SEVERITY: Record<Level, keyof typeof log> = {
  error: "error",
  warn: "warn",
  help: "info",
  data: "info",
  info: "info",
  prompt: "info",
  http: "info",
  input: "info",
  debug: "debug",
  verbose: "debug",
  silly: "debug",
};

/** The graph node, run and thread of the current graph step, when the call comes from one. */
function runContext(): Record<string, unknown> {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { metadata?: Record<string, unknown>; configurable?: Record<string, unknown> }
    | undefined;
  if (!config) return {};
  const metadata = config.metadata ?? {};
  const fields: Record<string, unknown> = {};
  for (const key of ["langgraph_node", "run_id", "thread_id", "graph_id"]) {
    const value = metadata[key] ?? config.configurable?.[key];
    if (value !== undefined) fields[key] = value;
  }
  return fields;
}

/** Error objects keep their message and stack; other metadata objects merge into the line's fields. */
function metaFields(meta: unknown[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const item of meta) {
    if (item instanceof Error) Object.assign(fields, { error: item.message, stack: item.stack });
    else if (item && typeof item === "object") Object.assign(fields, item);
    else if (item !== undefined) ((fields.meta as unknown[]) ??= []).push(item);
  }
  return fields;
}

export function createSdkLogger(): SdkLogger {
  const logger = {} as SdkLogger;
  for (const level of LEVELS) {
    logger[level] = (message: unknown, ...meta: unknown[]) => {
      try {
        emit(level, message, meta);
      } catch {
        // Metadata JSON cannot carry (a cycle, a BigInt): the line goes out with its text only.
        log[SEVERITY[level]](String(message instanceof Error ? message.message : message), {
          source: "graph",
          sdk_level: level,
          unserializable_meta: true,
        });
      }
      return logger;
    };
  }
  return logger;
}

/** One SDK call as a structured log line (throws when the metadata is not JSON). */
function emit(level: Level, message: unknown, meta: unknown[]): void {
  const fields = { source: "graph", sdk_level: level, ...runContext() };
  if (message instanceof Error) log[SEVERITY[level]](message.message, { ...fields, stack: message.stack });
  else if (message && typeof message === "object") {
    const { message: text, ...rest } = message as Record<string, unknown>;
    log[SEVERITY[level]](typeof text === "string" ? text : "", { ...fields, ...rest, ...metaFields(meta) });
  } else log[SEVERITY[level]](String(message), { ...fields, ...metaFields(meta) });
}

/** Installs the logger for `getLogger()`; idempotent. */
export function registerSdkLogger(): void {
  const global = globalThis as { [SDK_LOGGER]?: SdkLogger };
  global[SDK_LOGGER] ??= createSdkLogger();
}
