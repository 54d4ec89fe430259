import { MAX_METADATA_DEPTH } from "../../core/limits.ts";

/**
 * The trace filter language (`and(eq(run_type, "llm"), gt(latency, "5s"))`): a lexer and a
 * recursive-descent parser into a syntax tree. Every error carries the 0-based position in the
 * text and what was expected there.
 */

export type Syntax =
  | { kind: "call"; name: string; args: Syntax[]; position: number }
  | { kind: "attribute"; name: string; position: number }
  | { kind: "literal"; value: string | number | boolean | null; position: number }
  | { kind: "list"; items: Syntax[]; position: number };

export class FilterError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
    found: string,
  ) {
    super(`Invalid filter at position ${position}: expected ${expected}, found ${found}`);
    this.name = "FilterError";
  }
}

type Token =
  | { type: "name"; text: string; position: number }
  | { type: "string"; value: string; position: number }
  | { type: "number"; value: number; position: number }
  | { type: "punct"; text: "(" | ")" | "," | "[" | "]"; position: number }
  | { type: "end"; position: number };

const describe = (token: Token) =>
  token.type === "end"
    ? "the end of the filter"
    : token.type === "string"
      ? `the string ${JSON.stringify(token.value)}`
      : token.type === "number"
        ? `the number ${token.value}`
        : `"${token.text}"`;

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (/\s/.test(char)) {
      i++;
    } else if ("(),[]".includes(char)) {
      tokens.push({ type: "punct", text: char as "(" | ")" | "," | "[" | "]", position: i });
      i++;
    } else if (char === '"' || char === "'") {
      const start = i;
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterError(start, `a closing ${char} for the string`, "the end of the filter");
        const c = text[i];
        if (c === char) break;
        if (c === "\\") {
          const escaped = text[i + 1];
          const simple: Record<string, string> = {
            n: "\n",
            t: "\t",
            r: "\r",
            b: "\b",
            f: "\f",
            "/": "/",
            "\\": "\\",
            '"': '"',
            "'": "'",
          };
          if (escaped === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            value += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
            continue;
          }
          if (escaped === undefined || !(escaped in simple))
            throw new FilterError(i, "a valid escape (\\n, \\t, \\\\, \\\", \\', \\uXXXX)", `"\\${escaped ?? ""}"`);
          value += simple[escaped];
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      tokens.push({ type: "string", value, position: start });
      i++;
    } else if (/[-0-9]/.test(char)) {
      const match = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i));
      if (!match) throw new FilterError(i, "a number", `"${char}"`);
      tokens.push({ type: "number", value: Number(match[0]), position: i });
      i += match[0].length;
    } else if (/[A-Za-z_]/.test(char)) {
      const match = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i))!;
      tokens.push({ type: "name", text: match[0], position: i });
      i += match[0].length;
    } else {
      throw new FilterError(i, "a function, attribute or value", `"${char}"`);
    }
  }
  tokens.push({ type: "end", position: text.length });
  return tokens;
}

/**
 * Calls and lists nest at most this deep: the parser, the checker and the SQL compiler all recurse
 * once per level, and SQLite limits expression depth too.
 */
export const MAX_FILTER_NESTING = MAX_METADATA_DEPTH;

/** Parses a filter into its syntax tree (no meaning checked yet: see `check`). */
export function parse(text: string): Syntax {
  const tokens = lex(text);
  let at = 0;
  let depth = 0;
  const peek = () => tokens[at];
  const next = () => tokens[at++];

  const value = (): Syntax => {
    const token = next();
    if (token.type === "punct" && token.text === "[") return nested(token, list);
    if (
      token.type === "name" &&
      !["true", "false", "null"].includes(token.text) &&
      peek().type === "punct" &&
      (peek() as { text: string }).text === "("
    ) {
      return nested(token, call);
    }
    return scalar(token);
  };

  /** Parses one nested call or list, refusing to go deeper than MAX_FILTER_NESTING. */
  const nested = <T extends Token>(token: T, parseInner: (token: T) => Syntax): Syntax => {
    if (++depth > MAX_FILTER_NESTING)
      throw new FilterError(
        token.position,
        `calls and lists nested at most ${MAX_FILTER_NESTING} levels deep`,
        "deeper nesting",
      );
    const tree = parseInner(token);
    depth--;
    return tree;
  };

  const list = (token: Token): Syntax => {
    const items: Syntax[] = [];
    if (!(peek().type === "punct" && (peek() as { text: string }).text === "]")) {
      for (;;) {
        items.push(value());
        const separator = next();
        if (separator.type === "punct" && separator.text === "]") break;
        if (!(separator.type === "punct" && separator.text === ","))
          throw new FilterError(separator.position, '"," or "]"', describe(separator));
      }
    } else next();
    return { kind: "list", items, position: token.position };
  };

  const call = (token: Token & { type: "name" }): Syntax => {
    next();
    const args: Syntax[] = [];
    if (peek().type === "punct" && (peek() as { text: string }).text === ")") {
      next();
    } else {
      for (;;) {
        args.push(value());
        const separator = next();
        if (separator.type === "punct" && separator.text === ")") break;
        if (!(separator.type === "punct" && separator.text === ","))
          throw new FilterError(separator.position, '"," or ")"', describe(separator));
      }
    }
    return { kind: "call", name: token.text, args, position: token.position };
  };

  const scalar = (token: Token): Syntax => {
    if (token.type === "string" || token.type === "number")
      return { kind: "literal", value: token.value, position: token.position };
    if (token.type === "name") {
      if (token.text === "true" || token.text === "false")
        return { kind: "literal", value: token.text === "true", position: token.position };
      if (token.text === "null") return { kind: "literal", value: null, position: token.position };
      return { kind: "attribute", name: token.text, position: token.position };
    }
    throw new FilterError(token.position, "a function, attribute or value", describe(token));
  };

  const first = peek();
  if (first.type !== "name")
    throw new FilterError(first.position, "a function such as eq(...) or and(...)", describe(first));
  const tree = value();
  if (tree.kind !== "call")
    throw new FilterError(
      tree.position,
      'a function call such as eq(name, "x")',
      `the attribute ${first.type === "name" ? first.text : ""}`,
    );
  const rest = peek();
  if (rest.type !== "end") throw new FilterError(rest.position, "the end of the filter", describe(rest));
  return tree;
}
