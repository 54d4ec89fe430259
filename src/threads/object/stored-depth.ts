// Inside the thread's Durable Object (threads/object/): how deeply a stored value nests, held to what LangChain's load() reads back.
import { isLangChainEscape, LC_ESCAPED_KEY } from "../../db/serialize.ts";
import { isRevivable } from "./serde.ts";

/**
 * LangChain's `load()` (which revives every stored message) refuses an object nested deeper than
 * this, counting from the serialized object itself (`@langchain/core/load`, DEFAULT_MAX_DEPTH).
 */
export const MAX_LOADABLE_DEPTH = 50;

/** A value the checkpointer refuses to store, because LangChain could never read it back. */
export class StateTooDeepError extends Error {
  constructor(where: string, depth: number) {
    super(
      `${where} holds a LangChain object (such as a message) nested ${depth} levels deep; LangChain reads back at ` +
        `most ${MAX_LOADABLE_DEPTH}, so it was not saved and the thread keeps its last readable state`,
    );
    this.name = "StateTooDeepError";
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** How deeply the JSON text nests (`{}` is 1), scanned without parsing: the cheap first check. */
function maxBracketDepth(json: Uint8Array): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) max = Math.max(max, ++depth);
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return max;
}

/** What the checkpoint serde hands to `load()`: `{lc: 1, type: "constructor", id: [...]}`. */
function isSerializedLangChainObject(value: Record<string, unknown>): boolean {
  return value.lc === 1 && value.type === "constructor" && Array.isArray(value.id);
}

/**
 * The nesting of the deepest LangChain-serialized object in `json` that `load()` would refuse
 * (deepest value counted from the object, as `load()` counts), or undefined when all load. Only
 * the records the serde hands to `load()` count: a client's object escaped as data, or a record of
 * a class the serde does not revive, reads back as plain JSON at any depth. Only text nested
 * deeper than the limit is parsed; the walk is iterative, so any depth is safe.
 */
export function unloadableDepth(json: Uint8Array): number | undefined {
  if (maxBracketDepth(json) <= MAX_LOADABLE_DEPTH) return undefined;
  const root: unknown = JSON.parse(new TextDecoder().decode(json));
  // Post-order: a container's height is 1 + its highest child's (a scalar's is 0, an empty one's 0).
  const heights = new Map<object, number>();
  const stack: [object, boolean][] = [];
  /** The objects inside escape wrappers: data, never given to `load()`. */
  const escaped = new Set<object>();
  if (root !== null && typeof root === "object") stack.push([root, false]);
  let worst: number | undefined;
  while (stack.length > 0) {
    const [node, expanded] = stack.pop()!;
    const children = (Array.isArray(node) ? node : Object.values(node)).filter(
      (c): c is object => c !== null && typeof c === "object",
    );
    if (!expanded) {
      if (!Array.isArray(node) && isLangChainEscape(node)) {
        const inner = (node as Record<string, unknown>)[LC_ESCAPED_KEY];
        if (inner !== null && typeof inner === "object") escaped.add(inner);
      }
      stack.push([node, true]);
      for (const child of children) stack.push([child, false]);
      continue;
    }
    const size = Array.isArray(node) ? node.length : Object.keys(node).length;
    let highest = 0;
    for (const child of children) highest = Math.max(highest, heights.get(child) ?? 0);
    const height = size === 0 ? 0 : 1 + highest;
    heights.set(node, height);
    if (
      !Array.isArray(node) &&
      height > MAX_LOADABLE_DEPTH &&
      !escaped.has(node) &&
      isSerializedLangChainObject(node as Record<string, unknown>) &&
      isRevivable(node as Record<string, unknown>)
    ) {
      worst = Math.max(worst ?? 0, height);
    }
  }
  return worst;
}
