/**
 * What the guard reads from a statement's text, once per text: the functions it calls with too many
 * arguments, and which bound parameters make up each row it writes. A small tokenizer, not a parser:
 * it skips string literals, quoted identifiers and comments, and follows parentheses.
 */
import { MAX_SQL_FUNCTION_ARGS } from "./limits.ts";

export interface SqlShape {
  /** The first function called with more than `MAX_SQL_FUNCTION_ARGS` arguments, or null. */
  tooManyArguments: string | null;
  /**
   * For a statement that writes rows (INSERT, REPLACE, UPDATE): the 0-based parameter indexes of each
   * row it writes (one list per `VALUES` tuple, one for an upsert's update, one for an UPDATE).
   * Null for a statement that writes no row.
   */
  rows: number[][] | null;
}

/** Words followed by "(" that are not function calls. */
const NOT_FUNCTIONS = new Set([
  "and",
  "as",
  "between",
  "by",
  "case",
  "check",
  "conflict",
  "default",
  "distinct",
  "else",
  "exists",
  "filter",
  "from",
  "glob",
  "in",
  "is",
  "join",
  "key",
  "like",
  "not",
  "on",
  "or",
  "over",
  "primary",
  "returning",
  "select",
  "set",
  "then",
  "union",
  "unique",
  "using",
  "values",
  "when",
  "where",
  "window",
  "with",
]);
/** A name after these words and before "(" is a table, not a function (`INSERT INTO t (a, b)`). */
const TABLE_BEFORE = new Set(["into", "table", "references", "view", "exists"]);

interface Frame {
  name: string | null;
  commas: number;
  empty: boolean;
  /** Index in `rows` when this parenthesis is a VALUES tuple of an INSERT. */
  row: number;
}

const WORD_START = /[A-Za-z_]/;
const WORD = /[A-Za-z0-9_$]/;
const DIGIT = /[0-9]/;

const shapes = new Map<string, SqlShape>();

/** The shape of `sql`, cached: the same texts run again and again. */
export function sqlShape(sql: string): SqlShape {
  let shape = shapes.get(sql);
  if (!shape) {
    shape = analyze(sql);
    if (shapes.size >= 2000) shapes.clear();
    shapes.set(sql, shape);
  }
  return shape;
}

function analyze(sql: string): SqlShape {
  const frames: Frame[] = [];
  const rows: number[][] = [];
  const shared: number[] = [];
  let tooManyArguments: string | null = null;
  let writes = false;
  let insert = false;
  let afterValues = false;
  let firstWord = "";
  // The two previous tokens: a lowercased word, `"` for a quoted name or literal, or the character.
  let previous = "";
  let beforePrevious = "";
  let nextParam = 0;
  const n = sql.length;
  let i = 0;
  const push = (token: string) => {
    beforePrevious = previous;
    previous = token;
  };
  const skipQuoted = (close: string) => {
    i++;
    while (i < n) {
      if (sql[i] === close) {
        if (sql[i + 1] === close && close !== "]") i += 2;
        else break;
      } else i++;
    }
    i++;
  };
  while (i < n) {
    const c = sql[i]!;
    if (c === " " || c === "\n" || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      while (i < n && sql[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    const top = frames.at(-1);
    if (c !== ")" && top) top.empty = false;
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      skipQuoted(c === "[" ? "]" : c);
      push('"');
      continue;
    }
    if (WORD_START.test(c)) {
      const start = i;
      while (i < n && WORD.test(sql[i]!)) i++;
      const word = sql.slice(start, i).toLowerCase();
      if (word === "x" && sql[i] === "'") {
        skipQuoted("'");
        push('"');
        continue;
      }
      if (!firstWord) firstWord = word;
      if (frames.length === 0) {
        if (word === "insert" || (word === "replace" && (previous === "" || previous === ";"))) {
          writes = insert = true;
        } else if (word === "update") writes = true;
        else if (word === "values" && insert) afterValues = true;
      }
      push(word);
      continue;
    }
    if (DIGIT.test(c)) {
      while (i < n && /[0-9.xXa-fA-FeE]/.test(sql[i]!)) i++;
      push("0");
      continue;
    }
    if (c === "?") {
      i++;
      const start = i;
      while (i < n && DIGIT.test(sql[i]!)) i++;
      const index = i > start ? Number(sql.slice(start, i)) - 1 : nextParam;
      nextParam = Math.max(nextParam, index + 1);
      const tuple = frames[0]?.row ?? -1;
      if (tuple >= 0) rows[tuple]!.push(index);
      else shared.push(index);
      push("?");
      continue;
    }
    if (c === "(") {
      const isFunction =
        /^[a-z_]/.test(previous) &&
        !NOT_FUNCTIONS.has(previous) &&
        !TABLE_BEFORE.has(beforePrevious) &&
        !(beforePrevious === "on" && firstWord === "create");
      let row = -1;
      if (frames.length === 0 && insert && afterValues && (previous === "values" || previous === ",")) {
        row = rows.push([]) - 1;
      }
      frames.push({ name: isFunction ? previous : null, commas: 0, empty: true, row });
    } else if (c === ",") {
      if (top) top.commas++;
    } else if (c === ")") {
      const frame = frames.pop();
      if (frame?.name && !tooManyArguments && !frame.empty && frame.commas + 1 > MAX_SQL_FUNCTION_ARGS) {
        tooManyArguments = frame.name;
      }
    } else if (c === ";") {
      afterValues = insert = false;
    }
    push(c);
    i++;
  }
  if (!writes) return { tooManyArguments, rows: null };
  // Parameters outside the VALUES tuples of an INSERT are its upsert's `DO UPDATE SET` (the row stored
  // instead of a tuple, never beside it): they make a row of their own.
  if (!rows.length) return { tooManyArguments, rows: [shared] };
  return { tooManyArguments, rows: shared.length ? [...rows, shared] : rows };
}
