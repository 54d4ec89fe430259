import { invalid } from "../../core/errors.ts";

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

/**
 * A path split into tokens: `a.b` → `a`, `b`; `arr[*].f` → `arr`, `[*]`, `f`; `{a,b.c}` stays one token.
 * The reference's tokenizer; `checkFieldPath` refuses what it would read silently wrong.
 */
function tokenize(path: string): string[] {
  const tokens: string[] = [];
  let current = "";
  let i = 0;
  while (i < path.length) {
    const open = path[i];
    if (open === "[" || open === "{") {
      if (current) tokens.push(current);
      current = "";
      const close = open === "[" ? "]" : "}";
      let depth = 1;
      let token = open;
      for (i += 1; i < path.length && depth > 0; i += 1) {
        if (path[i] === open) depth += 1;
        else if (path[i] === close) depth -= 1;
        token += path[i];
      }
      tokens.push(token);
      continue;
    }
    if (open === ".") {
      if (current) tokens.push(current);
      current = "";
    } else current += open;
    i += 1;
  }
  if (current) tokens.push(current);
  return tokens;
}

const INDEX_TOKEN = /^\[(\*|-?\d+)\]$/;
const FIELD_NAME = /^[^.[\]{}]+(\.[^.[\]{}]+)*$/;

/**
 * The tokens of a field path (`$`, `a.b`, `arr[*].f`, `arr[0]`, `arr[-1]`, `*`, `{a,b.c}`), or an
 * `invalid` error naming the path and what is wrong with it.
 */
export function checkFieldPath(path: string, where = "fields"): string[] {
  const fail = (why: string) => invalid(`${where}: the path ${JSON.stringify(path)} ${why}`);
  if (typeof path !== "string" || path.trim() === "") throw fail("is empty");
  if (path === "$") return ["$"];
  // The reference's tokenizer skips empty segments (`a..b` reads `a.b`): refused, as surely a typo.
  if (/^\.|\.\.|\.$/.test(path.replace(/\[[^\]]*\]|\{[^}]*\}/g, "_"))) throw fail("has an empty segment");
  const tokens = tokenize(path);
  for (const token of tokens) {
    if (token.startsWith("[")) {
      if (!INDEX_TOKEN.test(token)) throw fail(`has ${token}: an index is [*], [n] or [-n]`);
    } else if (token.startsWith("{")) {
      const names = token.endsWith("}") ? token.slice(1, -1).split(",") : [];
      if (!names.length || !names.every((name) => FIELD_NAME.test(name.trim())))
        throw fail(`has ${token}: a field set is {name,other.name}`);
    } else if (/[\]}]/.test(token)) throw fail(`has an unmatched ${token.match(/[\]}]/)![0]}`);
  }
  return tokens;
}

/** A leaf as the reference's text: strings, numbers and booleans as themselves, objects as indented JSON, null none. */
function leafText(value: unknown): string[] {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return [String(value)];
  if (value !== null && typeof value === "object") return [JSON.stringify(value, null, 2)];
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
    if (pos === 0 && token === "$") results.push(JSON.stringify(at, null, 2));
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
        for (const key of tokenize(name.trim())) inner = hasKey(inner, key) ? inner[key] : undefined;
        if (inner !== undefined) results.push(...leafText(inner));
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
    const texts = textsAtPath(value, tokens);
    if (texts.length === 1) byField.set(path, texts[0]);
    else texts.forEach((text, i) => byField.set(`${path}.${i}`, text));
  }
  return [...byField].map(([field, text]) => ({ field, text }));
}
