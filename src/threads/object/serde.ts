// Inside the thread's Durable Object (threads/object/): the checkpoint serializer.
import { load } from "@langchain/core/load";
import { DeltaSnapshot, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { isObject } from "../../core/json.ts";
import { LC_ESCAPED_KEY as ESCAPED, isLangChainEscape } from "../../db/serialize.ts";

/**
 * The checkpoint serializer: LangGraph's JsonPlusSerializer format, made safe for client data.
 *
 * JsonPlusSerializer hands every stored `{lc: 1, type: "constructor", id, kwargs}` object to
 * LangChain's `load()`, which instantiates the class it names. A client's JSON may hold such an
 * object (in an input, a resume value, state values...): once in a checkpoint, `load()` threw on it
 * ("Invalid namespace") and every later run and state read of the thread failed, or it built
 * whatever LangChain class it named. Here, as LangChain itself does for untrusted dicts since
 * CVE-2025-68665, a plain object that has an `lc` key (or that is only an `__lc_escaped__` key) is
 * stored wrapped, `{"__lc_escaped__": {...}}`, and read back as the same plain object. Only what a
 * LangChain object's own `toJSON()` wrote is revived, as before, and only data classes (messages,
 * prompt values, documents: see REVIVABLE_MODULES). Any other stored record, or one that `load()`
 * refuses (rows written by an older version, before the escaping), reads back as the plain object
 * it is instead of failing the read. Secrets are never resolved: `load()` gets no secrets, no env.
 */

/** What fast-safe-stringify (JsonPlusSerializer) writes for a reference back to an ancestor. */
const CIRCULAR = "[Circular]";

type JsonRecord = Record<string, unknown>;

/** As LangChain's `needsEscaping`: could be taken for a LangChain record or for an escape wrapper. */
function needsEscaping(record: object): boolean {
  return Object.hasOwn(record, "lc") || isLangChainEscape(record);
}

/** A `Serializable` (message, document...): its `toJSON()` is LangChain's own record, escaped by LangChain. */
const isSerializable = (value: object): boolean =>
  "lc_serializable" in value && typeof (value as { toJSON?: unknown }).toJSON === "function";

const hasToJson = (value: object): value is { toJSON(key: string): unknown } =>
  typeof (value as { toJSON?: unknown }).toJSON === "function";

function constructorRecord(name: string, method: string | null, args: unknown[]): JsonRecord {
  return { lc: 2, type: "constructor", id: [name], method, args, kwargs: {} };
}

// ---- writing ----

/**
 * The value as JSON-ready data, as JSON.stringify with JsonPlusSerializer's replacer would see it
 * (toJSON first, then its conversions of undefined, Set, Map, RegExp, Error, Send, Uint8Array and
 * DeltaSnapshot), with every plain object of the caller's data that needs it escaped. Inside a
 * LangChain object's toJSON() output (`trusted`) nothing is escaped again: LangChain did it.
 */
function encode(value: unknown, key: string, trusted: boolean, ancestors: object[]): unknown {
  if (value === undefined) return { lc: 2, type: "undefined" };
  if (value === null || typeof value !== "object") return value;
  if (ancestors.includes(value)) return CIRCULAR;
  ancestors.push(value);
  try {
    if (hasToJson(value)) {
      const json = value.toJSON(key);
      return json === value
        ? encodeObject(value, trusted, ancestors)
        : encode(json, key, trusted || isSerializable(value), ancestors);
    }
    if (value instanceof DeltaSnapshot)
      return { lc: 2, type: "delta_snapshot", value: encode(value.value, "value", trusted, ancestors) };
    if (value instanceof Set || value instanceof Map) {
      const entries = encode(Array.from(value), "0", trusted, ancestors);
      return constructorRecord(value.constructor.name, null, [entries]);
    }
    if (value instanceof RegExp) return constructorRecord("RegExp", null, [value.source, value.flags]);
    if (value instanceof Error) return constructorRecord("Error", null, [value.message]);
    if ((value as { lg_name?: unknown }).lg_name === "Send") {
      const send = value as { node: unknown; args: unknown; timeout?: unknown };
      return {
        node: send.node,
        args: encode(send.args, "args", trusted, ancestors),
        ...(send.timeout !== undefined ? { timeout: encode(send.timeout, "timeout", trusted, ancestors) } : {}),
      };
    }
    if (value instanceof Uint8Array) return constructorRecord("Uint8Array", "from", [Array.from(value)]);
    // Array.from: a hole is undefined, as JSON.stringify hands it to a replacer.
    if (Array.isArray(value))
      return Array.from(value, (item: unknown, i) =>
        typeof item === "function" || typeof item === "symbol" ? null : encode(item, String(i), trusted, ancestors),
      );
    return encodeObject(value, trusted, ancestors);
  } finally {
    ancestors.pop();
  }
}

function encodeObject(value: object, trusted: boolean, ancestors: object[]): JsonRecord {
  const out: JsonRecord = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "function" || typeof item === "symbol") continue;
    out[key] = encode(item, key, trusted, ancestors);
  }
  return !trusted && needsEscaping(out) ? { [ESCAPED]: out } : out;
}

// ---- reading ----

/** LangChain's `load()` with nothing to resolve secrets from and no import map beyond langchain_core's. */
const LOAD_OPTIONS = { secretsMap: {}, secretsFromEnv: false, importMap: {}, optionalImportsMap: {} };

const isLangChainRecord = (value: JsonRecord): boolean =>
  value.lc === 1 && value.type === "constructor" && Array.isArray(value.id);

/**
 * The LangChain classes a stored record may revive as: the data that graph state holds (messages,
 * prompt values, documents). Rows written before the escaping may hold a client's record naming any
 * class `load()` knows (runnables, tracers, caches...): those stay the plain objects they were.
 */
const REVIVABLE_MODULES = new Set(["messages", "prompt_values", "documents"]);

export const isRevivable = (value: JsonRecord): boolean => {
  const id = value.id as unknown[];
  return id.length >= 3 && id[0] === "langchain_core" && REVIVABLE_MODULES.has(id[1] as string);
};

/**
 * The `{lc: 2, type: "undefined"}` markers inside a LangChain record dropped, as JsonPlusSerializer
 * does before `load()` (a message's unset fields). What LangChain escaped is data, kept as it is.
 */
function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (!isObject(value) || isLangChainEscape(value)) return value;
  const out: JsonRecord = {};
  for (const [key, item] of Object.entries(value)) {
    if (isObject(item) && item.lc === 2 && item.type === "undefined") continue;
    out[key] = withoutUndefined(item);
  }
  return out;
}

/**
 * Every LangChain record to revive in the parsed value, in the order `revive` meets them. An escape
 * wrapper's object is data, but its members are walked like any other.
 */
function langChainRecords(value: unknown, found: JsonRecord[]): void {
  if (Array.isArray(value)) {
    for (const item of value) langChainRecords(item, found);
  } else if (isObject(value)) {
    if (isLangChainEscape(value) && isObject(value[ESCAPED])) {
      for (const item of Object.values(value[ESCAPED] as JsonRecord)) langChainRecords(item, found);
    } else if (isLangChainRecord(value)) {
      if (isRevivable(value)) found.push(value);
    } else {
      for (const item of Object.values(value)) langChainRecords(item, found);
    }
  }
}

/** The record revived by `load()`, or (an unloadable record stored before escaping) as stored. */
async function loadRecord(record: JsonRecord): Promise<unknown> {
  const plain = withoutUndefined(record);
  try {
    return await load(JSON.stringify(plain), LOAD_OPTIONS);
  } catch {
    return plain;
  }
}

function reviveConstructor(record: JsonRecord): unknown {
  const { id, args } = record;
  const method = record.method ?? null;
  if (!Array.isArray(id) || id.length !== 1 || !Array.isArray(args)) return undefined;
  const [name] = id;
  if (method !== null && !(name === "Uint8Array" && method === "from")) return undefined;
  if (name === "Set" && args.length === 1 && Array.isArray(args[0])) return new Set(args[0]);
  if (name === "Map" && args.length === 1 && Array.isArray(args[0])) {
    const entries = args[0];
    return entries.every((entry) => Array.isArray(entry) && entry.length === 2)
      ? new Map(entries as [unknown, unknown][])
      : undefined;
  }
  if (name === "RegExp" && args.length === 2 && typeof args[0] === "string" && typeof args[1] === "string") {
    try {
      return new RegExp(args[0], args[1]);
    } catch {
      return undefined;
    }
  }
  if (name === "Error" && args.length === 1 && typeof args[0] === "string") return new Error(args[0]);
  if (name === "Uint8Array" && args.length === 1 && Array.isArray(args[0])) {
    const bytes = args[0];
    return bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
      ? new Uint8Array(bytes as number[])
      : undefined;
  }
  return undefined;
}

/**
 * The parsed value with escape wrappers unwrapped and JsonPlusSerializer's own records revived
 * (inner values first, as its reviver does); LangChain records come from `loaded`, in order.
 */
function revive(value: unknown, loaded: Iterator<unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => revive(item, loaded));
  if (!isObject(value)) return value;
  if (isLangChainEscape(value) && isObject(value[ESCAPED])) return reviveMembers(value[ESCAPED] as JsonRecord, loaded);
  if (isLangChainRecord(value)) return isRevivable(value) ? loaded.next().value : withoutUndefined(value);
  const revived = reviveMembers(value, loaded);
  if (revived.lc === 2) {
    if (revived.type === "undefined") return undefined;
    if (revived.type === "delta_snapshot" && Object.hasOwn(revived, "value")) return new DeltaSnapshot(revived.value);
    if (revived.type === "constructor") return reviveConstructor(revived) ?? revived;
  }
  return revived;
}

function reviveMembers(record: JsonRecord, loaded: Iterator<unknown>): JsonRecord {
  const out: JsonRecord = {};
  for (const [key, item] of Object.entries(record)) out[key] = revive(item, loaded);
  return out;
}

export class SafeJsonPlusSerializer implements SerializerProtocol {
  async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (value instanceof Uint8Array) return ["bytes", value];
    return ["json", new TextEncoder().encode(JSON.stringify(encode(value, "", false, [])))];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type === "bytes") return typeof data === "string" ? new TextEncoder().encode(data) : data;
    if (type !== "json") throw new Error(`Unknown serialization type: ${type}`);
    const parsed: unknown = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data));
    const records: JsonRecord[] = [];
    langChainRecords(parsed, records);
    const loaded = await Promise.all(records.map(loadRecord));
    return revive(parsed, loaded[Symbol.iterator]());
  }
}
