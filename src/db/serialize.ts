import { isObject } from "../core/json.ts";

/**
 * Graph state → JSON for the wire, in the Python Agent Server's shapes: LangChain messages become
 * `{type, content, id, name, additional_kwargs, response_metadata, ...}` objects, everything else
 * plain JSON. Keys whose value is undefined are dropped.
 */

interface Dictable {
  toDict(): { type: string; data: Record<string, unknown> };
}

const isDictable = (value: object): value is Dictable =>
  typeof (value as Partial<Dictable>).toDict === "function" && "lc_kwargs" in value;

/** Fields the Python server always sends for these message types, with their empty values. */
const MESSAGE_DEFAULTS: Record<string, Record<string, unknown>> = {
  human: { name: null, id: null, example: false },
  ai: { name: null, id: null, example: false, tool_calls: [], invalid_tool_calls: [], usage_metadata: null },
  system: { name: null, id: null },
  tool: { name: null, id: null, artifact: null, status: "success" },
};

/** Streamed chunks carry Python's class-style type names (`AIMessageChunk`), as the platform sends. */
const CHUNK_TYPES: Record<string, string> = {
  ai: "AIMessageChunk",
  human: "HumanMessageChunk",
  tool: "ToolMessageChunk",
  system: "SystemMessageChunk",
  function: "FunctionMessageChunk",
  generic: "ChatMessageChunk",
};

const isChunk = (message: Dictable) => typeof (message as { concat?: unknown }).concat === "function";

/**
 * The key LangChain wraps a plain object in when it could be taken for one of its serialized objects
 * (it has an `lc` key): `{"__lc_escaped__": {...}}` (@langchain/core/load, since CVE-2025-68665).
 */
export const LC_ESCAPED_KEY = "__lc_escaped__";

/** A LangChain escape wrapper: an object with that one key. */
export function isLangChainEscape(value: object): boolean {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === LC_ESCAPED_KEY;
}

/**
 * A message's fields without LangChain's escape wrappers, as LangChain's `load()` unwraps them: the
 * wrapped object as it is. `toDict()` gives the fields as `toJSON()` escapes them.
 */
function unescapeLangChain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeLangChain);
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  if (isLangChainEscape(value)) return (value as Record<string, unknown>)[LC_ESCAPED_KEY];
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, unescapeLangChain(item)]));
}

function messageToJson(message: Dictable, asChunk = false): Record<string, unknown> {
  const { type: baseType, data } = message.toDict();
  const type = asChunk && isChunk(message) ? (CHUNK_TYPES[baseType] ?? baseType) : baseType;
  const json: Record<string, unknown> = { ...(MESSAGE_DEFAULTS[baseType] ?? {}) };
  for (const [key, value] of Object.entries(data)) {
    if (value !== undefined) json[key] = toJson(unescapeLangChain(value));
  }
  json.type = type;
  return json;
}

export function toJson(value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value !== "object") return typeof value === "bigint" ? Number(value) : value;
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : toJson(item)));
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return null;
  if (isDictable(value)) return messageToJson(value);
  if (value instanceof Map) return toJson(Object.fromEntries(value));
  if (value instanceof Set) return toJson([...value]);
  const json: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined && typeof item !== "function") json[key] = toJson(item);
  }
  return json;
}

/**
 * A message as the token streams send it: a chunk keeps its chunk type name. (In state, a model's
 * reply may also be a chunk instance; there it is shown by its plain type.)
 */
export function streamedMessageJson(message: unknown): unknown {
  return message !== null && typeof message === "object" && isDictable(message)
    ? messageToJson(message, true)
    : toJson(message);
}

/** `toJson` for values known to be objects (state values, metadata). */
export function toJsonObject(value: unknown): Record<string, unknown> {
  const json = toJson(value);
  return isObject(json) ? json : {};
}
