import { invalid } from "./errors.ts";

/**
 * Field paths into a JSON value, as LangGraph's stores read them (`@langchain/langgraph-checkpoint`,
 * store/utils.js `tokenizePath`): `$`, `a.b`, `arr[*].f`, `arr[0]`, `arr[-1]`, `*`, `{a,b.c}`. One home
 * for the build (langgraph.json `store.index.fields`) and the store (a put's `index`).
 */

/**
 * A path split into tokens: `a.b` → `a`, `b`; `arr[*].f` → `arr`, `[*]`, `f`; `{a,b.c}` stays one token.
 * The reference's tokenizer; `fieldPathProblem` refuses what it would read silently wrong.
 */
export function tokenizeFieldPath(path: string): string[] {
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

/** What is wrong with a field path (to follow the path in a message), or null when it is one. */
export function fieldPathProblem(path: string): string | null {
  if (typeof path !== "string" || path.trim() === "") return "is empty";
  if (path === "$") return null;
  // The reference's tokenizer skips empty segments (`a..b` reads `a.b`): refused, as surely a typo.
  if (/^\.|\.\.|\.$/.test(path.replace(/\[[^\]]*\]|\{[^}]*\}/g, "_"))) return "has an empty segment";
  for (const token of tokenizeFieldPath(path)) {
    if (token.startsWith("[")) {
      if (!INDEX_TOKEN.test(token)) return `has ${token}: an index is [*], [n] or [-n]`;
    } else if (token.startsWith("{")) {
      const names = token.endsWith("}") ? token.slice(1, -1).split(",") : [];
      if (!names.length || !names.every((name) => FIELD_NAME.test(name.trim())))
        return `has ${token}: a field set is {name,other.name}`;
    } else if (/[\]}]/.test(token)) return `has an unmatched ${token.match(/[\]}]/)![0]}`;
  }
  return null;
}

/** The tokens of a field path, or an `invalid` error naming `where`, the path and what is wrong with it. */
export function checkFieldPath(path: string, where = "fields"): string[] {
  const problem = fieldPathProblem(path);
  if (problem) throw invalid(`${where}: the path ${JSON.stringify(path)} ${problem}`);
  return path === "$" ? ["$"] : tokenizeFieldPath(path);
}
