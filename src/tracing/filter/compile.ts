import { pathStep } from "../../db/json-path.ts";
import type { Attribute, Comparison, Filter, Scalar } from "./check.ts";
import { isLongLike, likeCondition } from "./like.ts";

/**
 * Compiles a checked filter into a SQLite WHERE clause over the trace shard's `runs` table
 * (see ../shard-schema.ts). Values are always bound, never spliced into the text.
 *
 * Times compare as text: the shard stores every time in one microsecond form (../times.ts), the
 * same form the checker normalises filter times to, so text order is time order.
 *
 * and()/or() compile into balanced trees (SQLite refuses expression trees deeper than 100), an in()
 * list is one JSON parameter, and a like() pattern over SQLite's 50 bytes is matched piecewise
 * (./like.ts). Bounds on a whole query's filters are checked in ./query-filters.ts.
 */

export type CompiledFilter = { sql: string; params: (string | number | null)[] };

const COLUMN_ATTRIBUTES = new Set<Attribute>([
  "id",
  "trace_id",
  "parent_run_id",
  "reference_example_id",
  "name",
  "run_type",
  "status",
  "error",
  "thread_id",
  "start_time",
  "end_time",
  "latency",
  "total_tokens",
  "prompt_tokens",
  "completion_tokens",
  "total_cost",
  "execution_order",
  "is_root",
]);

const FEEDBACK = "feedback";

/** Key/value attributes and the JSON map column each one searches. */
const KEY_VALUE: Partial<Record<Attribute, { column: string; part: "key" | "value" }>> = {
  metadata_key: { column: "metadata", part: "key" },
  metadata_value: { column: "metadata", part: "value" },
  input_key: { column: "input_kv", part: "key" },
  input_value: { column: "input_kv", part: "value" },
  output_key: { column: "output_kv", part: "key" },
  output_value: { column: "output_kv", part: "value" },
  // Not a column: the shard's feedback table (see ../shard-feedback.ts), one row per feedback.
  feedback_key: { column: FEEDBACK, part: "key" },
  feedback_score: { column: FEEDBACK, part: "value" },
};

/** What `search(text)` without an attribute looks through. */
const SEARCHED_COLUMNS = ["name", "run_type", "error", "inputs", "outputs", "metadata", "tags"];

const SQL_OPERATOR: Record<Comparison, string> = {
  eq: "=",
  neq: "IS NOT",
  gt: ">",
  gte: ">=",
  lt: "<",
  lte: "<=",
  like: "LIKE",
};

type Leaf = Extract<Filter, { attribute: Attribute }> & { op: Comparison | "in" };

class Compiler {
  readonly params: (string | number | null)[] = [];

  bind(value: Scalar): string {
    this.params.push(bindable(value));
    return "?";
  }

  /** `<target> <op> <value>` for one comparison, with SQL NULL handled as the filter means it. */
  compare(target: string, leaf: Leaf): string {
    // One JSON parameter for the whole list (SQLite binds at most 100 per statement).
    if (leaf.op === "in")
      return `${target} IN (SELECT value FROM json_each(${this.bind(JSON.stringify(leaf.values.map(bindable)))}))`;
    if (leaf.value === null) return leaf.op === "eq" ? `${target} IS NULL` : `${target} IS NOT NULL`;
    if (leaf.op === "like") return likeCondition(target, String(leaf.value), (value) => this.bind(value));
    // neq keeps runs where the attribute is absent: "not equal to x" is true of a missing value.
    return `${target} ${SQL_OPERATOR[leaf.op]} ${this.bind(leaf.value)}`;
  }

  /**
   * A key condition and a value condition on the same map (`and(eq(metadata_key, "a"),
   * eq(metadata_value, "b"))`) must match the same entry, so they compile into one EXISTS.
   */
  keyValue(column: string, key: Leaf | null, value: Leaf | null): string {
    if (column === FEEDBACK) {
      // A key and a score condition in one and() must hold of the same feedback.
      const conditions = ["kv.run_id = runs.id"];
      if (key) conditions.push(this.compare("kv.key", key));
      if (value) conditions.push(this.compare("kv.score", value));
      return `EXISTS (SELECT 1 FROM feedback AS kv WHERE ${conditions.join(" AND ")})`;
    }
    const conditions: string[] = [];
    if (key) conditions.push(this.compare("kv.key", key));
    // metadata maps keys to JSON values; input/output maps map each path to a list of scalars, joined
    // in the same FROM (a nested EXISTS would count against SQLite's expression depth twice).
    const perValue = column !== "metadata" && value;
    if (value) conditions.push(this.compare(perValue ? "CAST(v.value AS TEXT)" : "CAST(kv.value AS TEXT)", value));
    const from = `json_each(runs.${column}) AS kv${perValue ? ", json_each(kv.value) AS v" : ""}`;
    return `EXISTS (SELECT 1 FROM ${from} WHERE ${conditions.join(" AND ")})`;
  }

  node(filter: Filter): string {
    switch (filter.op) {
      case "and":
        return this.and(filter.args);
      case "or":
        return balanced(
          filter.args.map((arg) => this.node(arg)),
          "OR",
        );
      case "not":
        // A NULL comparison is "unknown"; NOT of unknown must be true, or not(eq(error, "x")) would
        // drop runs without an error. Conditions are 1, 0 or NULL, so "not 1" says it in one level.
        return `((${this.node(filter.arg)}) IS NOT 1)`;
      case "has":
        if (filter.attribute === "tags")
          return `EXISTS (SELECT 1 FROM json_each(runs.tags) WHERE value = ${this.bind(filter.value)})`;
        return this.metadataContains(filter.value);
      case "exists":
        return `json_type(runs.metadata, ${this.bind(jsonPath(filter.key))}) IS NOT NULL`;
      case "search": {
        const needle = `lower(${this.bind(filter.text)})`;
        if (filter.attribute) return `instr(lower(${this.target(filter.attribute)}), ${needle}) > 0`;
        const haystack = SEARCHED_COLUMNS.map((c) => `coalesce(runs.${c}, '')`).join(" || ' ' || ");
        return `instr(lower(${haystack}), ${needle}) > 0`;
      }
      default:
        return this.leaf(filter);
    }
  }

  leaf(leaf: Leaf): string {
    const keyValue = KEY_VALUE[leaf.attribute];
    if (keyValue)
      return this.keyValue(
        keyValue.column,
        keyValue.part === "key" ? leaf : null,
        keyValue.part === "value" ? leaf : null,
      );
    return this.compare(this.target(leaf.attribute), leaf);
  }

  target(attribute: Attribute): string {
    if (COLUMN_ATTRIBUTES.has(attribute)) return `runs.${attribute}`;
    const keyValue = KEY_VALUE[attribute];
    if (keyValue?.column === FEEDBACK)
      return `(SELECT group_concat(kv.${keyValue.part === "key" ? "key" : "score"}, ' ') FROM feedback AS kv WHERE kv.run_id = runs.id)`;
    // search(metadata_key, "x") and friends look at the whole map's text.
    if (keyValue) return `runs.${keyValue.column}`;
    throw new Error(`no column for ${attribute}`);
  }

  and(args: Filter[]): string {
    const parts: string[] = [];
    const rest = [...args];
    // Pair each key condition with the first value condition on the same map.
    for (const [index, arg] of rest.entries()) {
      if (!isLeaf(arg) || KEY_VALUE[arg.attribute]?.part !== "key") continue;
      const column = KEY_VALUE[arg.attribute]!.column;
      const partner = rest.findIndex(
        (other, i) =>
          i !== index &&
          isLeaf(other) &&
          KEY_VALUE[other.attribute]?.column === column &&
          KEY_VALUE[other.attribute]?.part === "value",
      );
      if (partner < 0) continue;
      parts.push(this.keyValue(column, arg, rest[partner] as Leaf));
      rest[index] = rest[partner] = PAIRED;
    }
    for (const arg of rest) if (arg !== PAIRED) parts.push(this.node(arg));
    return balanced(parts, "AND");
  }

  metadataContains(expected: Record<string, unknown>): string {
    const conditions = Object.entries(expected).map(([key, value]) => {
      const path = this.bind(jsonPath(key));
      if (value === null) return `json_type(runs.metadata, ${path}) = 'null'`;
      if (typeof value === "object")
        return `json(json_extract(runs.metadata, ${path})) = json(${this.bind(JSON.stringify(value))})`;
      if (typeof value === "boolean")
        return `json_type(runs.metadata, ${path}) = ${this.bind(value ? "true" : "false")}`;
      return `json_extract(runs.metadata, ${path}) = ${this.bind(value as string | number)}`;
    });
    return conditions.length ? balanced(conditions, "AND") : "1";
  }
}

const bindable = (value: Scalar): string | number | null => (typeof value === "boolean" ? (value ? 1 : 0) : value);

/**
 * `a OP b OP c …` as a balanced tree of parenthesised pairs: a flat chain of n terms is an
 * expression n deep, SQLite refuses more than 100, and a balanced tree is log2(n) deep.
 */
function balanced(parts: string[], operator: "AND" | "OR"): string {
  if (parts.length === 1) return `(${parts[0]})`;
  const middle = Math.ceil(parts.length / 2);
  return `(${balanced(parts.slice(0, middle), operator)} ${operator} ${balanced(parts.slice(middle), operator)})`;
}

/**
 * Depth one condition takes (see `compiledDepth`), by how it compiles: a column comparison; a
 * subquery (a JSON map, tags, metadata, the feedback table, an in() list) or a like() over SQLite's
 * 50 bytes (a recursive CTE); both; the free-text search over seven columns. Measured in workerd:
 * test/worker/tracing-query-limits.test.ts runs the deepest filter of each kind the check accepts
 * in filter, trace_filter and tree_filter at once.
 */
function conditionDepth(filter: Exclude<Filter, { op: "and" | "or" | "not" }>): number {
  if (filter.op === "search") return filter.attribute ? 16 : 25;
  if (filter.op === "has" || filter.op === "exists") return 16;
  const long = filter.op === "like" && typeof filter.value === "string" && isLongLike(filter.value);
  if (KEY_VALUE[filter.attribute]) return long ? 21 : 16;
  return long || filter.op === "in" ? 16 : 10;
}

/**
 * An estimate, from above, of the SQLite expression depth `filter` compiles to, in units where
 * not() is one: balanced and()/or() add log2 of their width (a single condition's parentheses add
 * nothing), a condition its `conditionDepth`. SQLite counts the depth of nested subqueries
 * together (a trace_filter is one), up to 100.
 */
export function compiledDepth(filter: Filter): number {
  switch (filter.op) {
    case "and":
    case "or":
      return Math.ceil(Math.log2(Math.max(1, filter.args.length))) + Math.max(...filter.args.map(compiledDepth));
    case "not":
      return 1 + compiledDepth(filter.arg);
    default:
      return conditionDepth(filter);
  }
}

/** Conditions (leaves) of a filter. */
export function conditionCount(filter: Filter): number {
  if (filter.op === "and" || filter.op === "or") return filter.args.reduce((sum, arg) => sum + conditionCount(arg), 0);
  if (filter.op === "not") return conditionCount(filter.arg);
  return 1;
}

const PAIRED: Filter = { op: "and", args: [] };

function isLeaf(filter: Filter): filter is Leaf {
  return (
    "attribute" in filter &&
    filter.attribute !== null &&
    filter.op !== "has" &&
    filter.op !== "exists" &&
    filter.op !== "search"
  );
}

/** A JSON path naming one top-level key, quoted so dots and brackets in keys stay part of the key. */
function jsonPath(key: string): string {
  return `$${pathStep(key)}`;
}

/** Compiles one checked filter; the caller ANDs the result into its own WHERE clause. */
export function compileFilter(filter: Filter): CompiledFilter {
  const compiler = new Compiler();
  const sql = compiler.node(filter);
  return { sql, params: compiler.params };
}
