/**
 * `like(attribute, pattern)` in SQL. `%` matches any run of characters, `_` one character, and a
 * backslash makes the next character literal (`\%`, `\_`, `\\`), as in PostgreSQL; letters compare
 * case-insensitively in ASCII, as SQLite's LIKE does.
 *
 * SQLite (D1 and Durable Objects) refuses LIKE patterns over 50 bytes, and an ordinary pattern is
 * longer (`%Rate limit reached for gpt-4o in organization%`). A longer pattern is matched exactly
 * without one long LIKE: it is split at its `%` into fixed-length segments; the first and last are
 * anchored at the ends of the text, the middle ones are found leftmost-first in order (which is
 * exactly when a LIKE matches), each segment located with instr() on its longest literal part and
 * confirmed with LIKEs of at most LIKE_PIECE_BYTES on substr(). The plan is one bound JSON value.
 */

/** SQLite's limit on a LIKE pattern, in bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH on Cloudflare). */
export const MAX_LIKE_PATTERN_BYTES = 50;
/** Bytes of each LIKE a long pattern is confirmed with (an escape pair is never split). */
const LIKE_PIECE_BYTES = 48;

type Token = { kind: "char"; char: string } | { kind: "one" } | { kind: "any" };

/** The pattern's characters, wildcards and escaped literals, by code point (SQLite counts characters so). */
function tokens(pattern: string): Token[] {
  const chars = Array.from(pattern);
  const out: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i];
    if (char === "\\" && i + 1 < chars.length) out.push({ kind: "char", char: chars[++i] });
    else if (char === "%") out.push({ kind: "any" });
    else if (char === "_") out.push({ kind: "one" });
    else out.push({ kind: "char", char });
  }
  return out;
}

/** A token as SQLite LIKE text with ESCAPE '\'. */
const likeText = (token: Token) =>
  token.kind === "any" ? "%" : token.kind === "one" ? "_" : /[%_\\]/.test(token.char) ? `\\${token.char}` : token.char;

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/** ASCII-only lower case, as SQLite's lower() and LIKE fold letters. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** A piece of a segment: `n` characters at offset `o`, which must match LIKE pattern `p`. */
type Piece = { o: number; n: number; p: string };
/** A middle segment: its length, its longest literal part (lower case) and where that starts in it. */
type Segment = { n: number; a: string; ao: number; q: Piece[] };

function pieces(segment: Token[]): Piece[] {
  const out: Piece[] = [];
  let current: Piece | null = null;
  segment.forEach((token, offset) => {
    const text = likeText(token);
    if (!current || bytes(current.p + text) > LIKE_PIECE_BYTES) {
      current = { o: offset, n: 0, p: "" };
      out.push(current);
    }
    current.n++;
    current.p += text;
  });
  return out;
}

function middle(segment: Token[]): Segment {
  let best = { start: 0, text: "" };
  let start = 0;
  let text = "";
  segment.forEach((token, offset) => {
    if (token.kind === "char") {
      if (!text) start = offset;
      text += token.char;
      if (Array.from(text).length > Array.from(best.text).length) best = { start, text };
    } else text = "";
  });
  return { n: segment.length, a: asciiLower(best.text), ao: best.start, q: pieces(segment) };
}

/**
 * The condition `target LIKE pattern`; `bind` binds one value and answers its placeholder.
 * `target` must be an expression without parameters (a column or a cast of one).
 */
export function likeCondition(target: string, pattern: string, bind: (value: string) => string): string {
  const parsed = tokens(pattern);
  const text = parsed.map(likeText).join("");
  if (bytes(text) <= MAX_LIKE_PATTERN_BYTES) return `${target} LIKE ${bind(text)} ESCAPE '\\'`;

  const segments: Token[][] = [[]];
  for (const token of parsed) {
    if (token.kind === "any") segments.push([]);
    else segments[segments.length - 1].push(token);
  }
  const exact = segments.length === 1;
  const head = segments[0];
  const tail = exact ? [] : segments[segments.length - 1];
  const middles = exact ? [] : segments.slice(1, -1).filter((segment) => segment.length > 0);
  const plan = { h: pieces(head), t: pieces(tail), m: middles.map(middle) };

  // t(x, j): the text and the plan. m(k, p, c): middle segment k is to be found at or after
  // character p, and c is its next candidate position (0: none left).
  const verify = (path: string, position: string) =>
    `NOT EXISTS (SELECT 1 FROM json_each(t.j, ${path}) AS q WHERE NOT (substr(t.x, ${position} + json_extract(q.value, '$.o'), json_extract(q.value, '$.n')) LIKE json_extract(q.value, '$.p') ESCAPE '\\'))`;
  const segment = (k: string, field: string) => `json_extract(t.j, '$.m[' || (${k}) || '].${field}')`;
  // The leftmost position at or after `from` where segment k's longest literal part sits.
  const candidate = (k: string, from: string) =>
    `(CASE WHEN ${segment(k, "a")} = '' THEN (CASE WHEN ${from} + ${segment(k, "n")} - 1 <= length(t.x) THEN ${from} ELSE 0 END)` +
    ` ELSE (SELECT CASE WHEN i = 0 THEN 0 ELSE ${from} + i - 1 END FROM (SELECT instr(lower(substr(t.x, ${from} + ${segment(k, "ao")})), ${segment(k, "a")}) AS i)) END)`;
  const found = verify(`'$.m[' || m.k || '].q'`, "m.c");
  const headLength = head.length;
  const tailLength = tail.length;
  const anchored = exact
    ? `length(t.x) = ${headLength} AND ${verify("'$.h'", "1")}`
    : `length(t.x) >= ${headLength + tailLength} AND ${verify("'$.h'", "1")} AND ${verify("'$.t'", `length(t.x) - ${tailLength} + 1`)}`;
  return (
    `EXISTS (WITH RECURSIVE t(x, j) AS (SELECT ${target}, ${bind(JSON.stringify(plan))}),` +
    ` m(k, p, c) AS (SELECT 0, ${headLength + 1}, ${candidate("0", `${headLength + 1}`)} FROM t WHERE ${anchored}` +
    ` UNION ALL SELECT CASE WHEN ${found} THEN m.k + 1 ELSE m.k END,` +
    ` CASE WHEN ${found} THEN m.c + ${segment("m.k", "n")} ELSE m.p END,` +
    ` CASE WHEN ${found} THEN ${candidate("m.k + 1", `m.c + ${segment("m.k", "n")}`)} ELSE ${candidate("m.k", "m.c + 1")} END` +
    ` FROM m, t WHERE m.k < ${middles.length} AND m.c > 0)` +
    ` SELECT 1 FROM m, t WHERE m.k = ${middles.length} AND m.p <= length(t.x) - ${tailLength} + 1)`
  );
}
