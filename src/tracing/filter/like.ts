import { utf8Length } from "../../core/bytes.ts";

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

/** ASCII-only lower case, as SQLite's lower() and LIKE fold letters. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** A piece of a segment: `n` characters at offset `o`, which must match LIKE pattern `p`. */
type Piece = { o: number; n: number; p: string };
/**
 * A segment between `%`s: its length, how it is placed (`f`: 0 searched, 1 at the start, 2 at the
 * end), its longest literal part in lower case (`a`) and that part's offset (`ao`), and its pieces.
 */
type Segment = { n: number; f: 0 | 1 | 2; a: string; ao: number; q: Piece[] };

function pieces(segment: Token[]): Piece[] {
  const out: Piece[] = [];
  let current: Piece | null = null;
  segment.forEach((token, offset) => {
    const text = likeText(token);
    if (!current || utf8Length(current.p + text) > LIKE_PIECE_BYTES) {
      current = { o: offset, n: 0, p: "" };
      out.push(current);
    }
    current.n++;
    current.p += text;
  });
  return out;
}

function describeSegment(segment: Token[], placed: Segment["f"]): Segment {
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
  return { n: segment.length, f: placed, a: asciiLower(best.text), ao: best.start, q: pieces(segment) };
}

/** Whether `pattern` is over SQLite's LIKE limit, so it compiles into the piecewise match. */
export function isLongLike(pattern: string): boolean {
  return utf8Length(tokens(pattern).map(likeText).join("")) > MAX_LIKE_PATTERN_BYTES;
}

/**
 * The condition `target LIKE pattern`; `bind` binds one value and answers its placeholder.
 * `target` must be an expression without parameters (a column or a cast of one).
 */
export function likeCondition(target: string, pattern: string, bind: (value: string) => string): string {
  const parsed = tokens(pattern);
  const text = parsed.map(likeText).join("");
  if (utf8Length(text) <= MAX_LIKE_PATTERN_BYTES) return `${target} LIKE ${bind(text)} ESCAPE '\\'`;

  const parts: Token[][] = [[]];
  for (const token of parsed) {
    if (token.kind === "any") parts.push([]);
    else parts[parts.length - 1].push(token);
  }
  const exact = parts.length === 1;
  const segments: Segment[] = parts.flatMap((part, index) =>
    part.length === 0 ? [] : [describeSegment(part, index === 0 ? 1 : index === parts.length - 1 ? 2 : 0)],
  );
  const total = segments.reduce((sum, segment) => sum + segment.n, 0);

  // A state machine in one recursive CTE, whose steps hold no subquery and little nesting: SQLite
  // counts the expression depth of nested subqueries together, at most 100. t(x, lx, j): the text,
  // in lower case, and the plan. m(k, c, i): segment k, at character c; i = -1: find where it can
  // start at or after c (c = 0: nowhere, no match); i >= 0: confirm its piece i there. Segments are
  // found leftmost first, in order: k = segments.length is a match.
  const get = (json: string, name: string) => `json_extract(${json}, '$.${name}')`;
  const [f, n, a, ao] = ["f", "n", "a", "ao"].map((name) => get("s.value", name));
  const start =
    `(CASE WHEN ${f} = 1 THEN (m.c = 1)` +
    ` WHEN ${f} = 2 THEN (CASE WHEN length(t.x) - ${n} + 1 >= m.c THEN length(t.x) - ${n} + 1 ELSE 0 END)` +
    ` WHEN ${a} = '' THEN (CASE WHEN m.c + ${n} - 1 <= length(t.x) THEN m.c ELSE 0 END)` +
    ` WHEN instr(substr(t.lx, m.c + ${ao}), ${a}) = 0 THEN 0 ELSE m.c + instr(substr(t.lx, m.c + ${ao}), ${a}) - 1 END)`;
  const ok = `(substr(t.x, m.c + ${get("q.value", "o")}, ${get("q.value", "n")}) LIKE ${get("q.value", "p")} ESCAPE '\\')`;
  const last = `(m.i + 1 = json_array_length(s.value, '$.q'))`;
  return (
    `EXISTS (WITH RECURSIVE t(x, lx, j) AS (SELECT ${target}, lower(${target}), ${bind(JSON.stringify(segments))}),` +
    ` m(k, c, i) AS (SELECT 0, 1, -1 FROM t WHERE ${exact ? `length(t.x) = ${total}` : `length(t.x) >= ${total}`}` +
    ` UNION ALL SELECT` +
    ` CASE WHEN m.i >= 0 AND ${ok} AND ${last} THEN m.k + 1 ELSE m.k END,` +
    ` CASE WHEN m.i < 0 THEN ${start} WHEN ${ok} AND ${last} THEN m.c + ${n} WHEN ${ok} THEN m.c ELSE m.c + 1 END,` +
    ` CASE WHEN m.i < 0 THEN 0 WHEN ${ok} AND NOT ${last} THEN m.i + 1 ELSE -1 END` +
    ` FROM m, t, json_each(t.j) AS s, json_each(s.value, '$.q') AS q` +
    ` WHERE s.key = m.k AND q.key = max(m.i, 0) AND m.c > 0)` +
    ` SELECT 1 FROM m WHERE m.k = ${segments.length})`
  );
}
