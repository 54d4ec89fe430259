import { invalid } from "../../core/errors.ts";
import { checkFieldPath, tokenizeFieldPath } from "../../core/field-paths.ts";
import { MAX_EMBED_TEXT_CHARS } from "../../core/limits.ts";

/**
 * The texts of an item to embed, from its value and the index's field paths, as LangGraph's
 * `InMemoryStore` (`@langchain/langgraph-checkpoint`, store/utils.js `tokenizePath`, `getTextAtPath`;
 * store/memory.js `extractTexts`) computes them, so the same item gets the same vectors here.
 */

/** One text to embed and the field it is stored under: the path, or `path.i` when the path matched several. */
export interface FieldText {
  field: string;
  text: string;
}

/** A text longer than MAX_EMBED_TEXT_CHARS, refused before it is built (see `indentedJson`). */
class TextTooLong extends Error {}

/**
 * The length `JSON.stringify(value, null, 2)` would have, counted without building it, or past `budget`
 * as soon as it passes it: indentation grows with depth, so a value of under a megabyte can make a
 * text of tens of megabytes (a 100-deep array of 400k zeros: 83 MB).
 */
function indentedLength(value: unknown, budget: number, depth = 0): number {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function")
    value = (value as { toJSON(): unknown }).toJSON();
  if (value === null || typeof value !== "object") return (JSON.stringify(value) ?? "null").length;
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.map((element) => [null, element])
    : Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol");
  if (!entries.length) return 2;
  // The brackets, then per entry "\n", its indent, key and value and ",", then "\n" and the closing indent.
  let length = 2 + 2 * depth + 1;
  for (const [key, element] of entries) {
    length += 1 + 2 * (depth + 1) + (key === null ? 0 : JSON.stringify(key).length + 2);
    length += indentedLength(element, budget - length, depth + 1) + 1;
    if (length - 1 > budget) return length - 1;
  }
  return length - 1; // no "," after the last entry
}

/** `JSON.stringify(value, null, 2)`, the reference's text of an object, refused past MAX_EMBED_TEXT_CHARS. */
function indentedJson(value: unknown): string {
  if (indentedLength(value, MAX_EMBED_TEXT_CHARS) > MAX_EMBED_TEXT_CHARS) throw new TextTooLong();
  return JSON.stringify(value, null, 2);
}

/** A leaf as the reference's text: strings, numbers and booleans as themselves, objects as indented JSON, null none. */
function leafText(value: unknown): string[] {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    const text = String(value);
    if (text.length > MAX_EMBED_TEXT_CHARS) throw new TextTooLong();
    return [text];
  }
  if (value !== null && typeof value === "object") return [indentedJson(value)];
  return [];
}

const hasKey = (value: unknown, key: string): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && Object.hasOwn(value, key);

/** Every text at a path, in the reference's order (`getTextAtPath`); a missing path gives none. */
export function textsAtPath(value: unknown, tokens: readonly string[]): string[] {
  const walk = (at: unknown, pos: number): string[] => {
    if (pos >= tokens.length) return leafText(at);
    const token = tokens[pos];
    const results: string[] = [];
    // As the reference: a leading `$` adds the whole value, then is read as a key like any other (so `$`
    // of a value that has a `$` key gives that key's text too, and `$.a` gives the whole value).
    if (pos === 0 && token === "$") results.push(indentedJson(at));
    if (token.startsWith("[")) {
      if (!Array.isArray(at)) return [];
      const index = token.slice(1, -1);
      if (index === "*") for (const element of at) results.push(...walk(element, pos + 1));
      else {
        const n = Number.parseInt(index, 10);
        const i = n < 0 ? at.length + n : n;
        if (i >= 0 && i < at.length) results.push(...walk(at[i], pos + 1));
      }
    } else if (token.startsWith("{")) {
      if (at === null || typeof at !== "object") return [];
      for (const name of token.slice(1, -1).split(",")) {
        let inner: unknown = at;
        for (const key of tokenizeFieldPath(name.trim())) inner = hasKey(inner, key) ? inner[key] : undefined;
        // As the reference: a null here is the text "null" (JSON of an object), not nothing.
        if (inner === null) results.push("null");
        else if (inner !== undefined) results.push(...leafText(inner));
      }
    } else if (token === "*") {
      if (at !== null && typeof at === "object")
        for (const inner of Array.isArray(at) ? at : Object.values(at)) results.push(...walk(inner, pos + 1));
    } else if (hasKey(at, token)) results.push(...walk(at[token], pos + 1));
    return results;
  };
  return walk(value, 0);
}

/** An index's field paths, checked once: the configured `fields` (default `["$"]`) or an item's `index`. */
export interface FieldPaths {
  paths: { path: string; tokens: string[] }[];
}

export function fieldPaths(fields: readonly string[] = ["$"], where = "fields"): FieldPaths {
  return { paths: fields.map((path) => ({ path, tokens: checkFieldPath(path, where) })) };
}

/**
 * The texts of one item to embed. `index` is the put's own: `false` embeds nothing, a list of paths
 * replaces the configured fields, absent (or null) uses them. A path that matched several texts stores
 * each as `path.i`, one that matched one as `path`; a field named twice keeps its last text.
 */
export function itemTexts(
  value: unknown,
  configured: FieldPaths,
  index?: false | readonly string[] | null,
): FieldText[] {
  if (index === false) return [];
  const { paths } = index ? fieldPaths(index, "index") : configured;
  const byField = new Map<string, string>();
  for (const { path, tokens } of paths) {
    let texts: string[];
    try {
      texts = textsAtPath(value, tokens);
    } catch (error) {
      if (!(error instanceof TextTooLong)) throw error;
      throw invalid(
        `index: the text at ${JSON.stringify(path)} is over ${MAX_EMBED_TEXT_CHARS} characters (an object's text is its indented JSON); index a narrower path`,
      );
    }
    if (texts.length === 1) byField.set(path, texts[0]);
    else texts.forEach((text, i) => byField.set(`${path}.${i}`, text));
  }
  return [...byField].map(([field, text]) => ({ field, text }));
}
