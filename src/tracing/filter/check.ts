import { exceedsDepth } from "../../core/json-depth.ts";
import { MAX_METADATA_DEPTH } from "../../core/limits.ts";
import { isPathKey } from "../../db/json-path.ts";
import { toStoredTime } from "../times.ts";
import { FilterError, parse, type Syntax } from "./parse.ts";

/**
 * The meaning of a filter: each call checked against the functions and attributes of the trace
 * filter language (LangSmith's comparators and run attributes) and turned into a typed tree that storage can compile.
 */

type ValueKind = "id" | "string" | "time" | "number" | "boolean";

/** Run attributes a filter may test, and the kind of value each holds. */
export const ATTRIBUTES = {
  id: "id",
  trace_id: "id",
  parent_run_id: "id",
  reference_example_id: "id",
  name: "string",
  run_type: "string",
  status: "string",
  error: "string",
  thread_id: "string",
  metadata_key: "string",
  metadata_value: "string",
  input_key: "string",
  input_value: "string",
  output_key: "string",
  output_value: "string",
  feedback_key: "string",
  feedback_score: "number",
  start_time: "time",
  end_time: "time",
  latency: "number",
  total_tokens: "number",
  prompt_tokens: "number",
  completion_tokens: "number",
  total_cost: "number",
  execution_order: "number",
  is_root: "boolean",
} as const satisfies Record<string, ValueKind>;

export type Attribute = keyof typeof ATTRIBUTES;
export type Scalar = string | number | boolean | null;
export type Comparison = "eq" | "neq" | "gt" | "gte" | "lt" | "lte" | "like";

export type Filter =
  | { op: "and" | "or"; args: Filter[] }
  | { op: "not"; arg: Filter }
  | { op: Comparison; attribute: Attribute; value: Scalar }
  | { op: "in"; attribute: Attribute; values: Scalar[] }
  | { op: "has"; attribute: "tags"; value: string }
  | { op: "has"; attribute: "metadata"; value: Record<string, unknown> }
  | { op: "exists"; attribute: "metadata"; key: string }
  | { op: "search"; attribute: Attribute | null; text: string };

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
const SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

function describe(node: Syntax): string {
  if (node.kind === "call") return `the call ${node.name}(...)`;
  if (node.kind === "attribute") return `the attribute ${node.name}`;
  if (node.kind === "list") return "a list";
  return `the value ${JSON.stringify(node.value)}`;
}

function attribute(node: Syntax, allowed?: readonly string[]): Attribute {
  if (node.kind !== "attribute")
    throw new FilterError(node.position, "an attribute such as name or run_type", describe(node));
  if (!(node.name in ATTRIBUTES) || (allowed && !allowed.includes(node.name))) {
    const choices = allowed ?? Object.keys(ATTRIBUTES);
    throw new FilterError(node.position, `one of the attributes ${choices.join(", ")}`, `"${node.name}"`);
  }
  return node.name as Attribute;
}

/** A literal of the attribute's kind; durations such as "5s" become seconds, times are checked. */
function value(node: Syntax, attr: Attribute, comparison: string): Scalar {
  if (node.kind !== "literal") throw new FilterError(node.position, `a value for ${attr}`, describe(node));
  const kind = ATTRIBUTES[attr];
  const raw = node.value;
  if (raw === null) {
    if (comparison === "eq" || comparison === "neq") return null;
    throw new FilterError(node.position, `a non-null value for ${comparison}`, "null");
  }
  switch (kind) {
    case "number": {
      if (typeof raw === "number") return raw;
      const duration = typeof raw === "string" && attr === "latency" ? DURATION.exec(raw.trim()) : null;
      if (duration) return Number(duration[1]) * SECONDS[duration[2]];
      throw new FilterError(
        node.position,
        attr === "latency" ? 'a number of seconds or a duration such as "5s"' : `a number for ${attr}`,
        describe(node),
      );
    }
    case "time":
      if (typeof raw === "string") {
        // The stored form (microseconds, times.ts), so a time compares with stored times as text.
        const stored = toStoredTime(raw);
        if (stored !== undefined) return stored;
      }
      throw new FilterError(node.position, `an ISO-8601 time for ${attr}`, describe(node));
    case "boolean":
      if (typeof raw === "boolean") return raw;
      throw new FilterError(node.position, `true or false for ${attr}`, describe(node));
    default:
      if (typeof raw === "string") return raw;
      throw new FilterError(node.position, `a string for ${attr}`, describe(node));
  }
}

function arity(node: Extract<Syntax, { kind: "call" }>, count: number, shape: string): void {
  if (node.args.length !== count) {
    const found = node.args[count] ?? node;
    throw new FilterError(
      found.position,
      `${node.name}(${shape})`,
      `${node.args.length} argument${node.args.length === 1 ? "" : "s"}`,
    );
  }
}

function stringLiteral(node: Syntax, what: string): string {
  if (node.kind === "literal" && typeof node.value === "string") return node.value;
  throw new FilterError(node.position, what, describe(node));
}

function build(node: Syntax): Filter {
  if (node.kind !== "call") throw new FilterError(node.position, "a function call", describe(node));
  const args = node.args;
  switch (node.name) {
    case "and":
    case "or":
      if (args.length === 0)
        throw new FilterError(node.position, `at least one condition in ${node.name}(...)`, "none");
      return { op: node.name, args: args.map(build) };
    case "not":
      arity(node, 1, "condition");
      return { op: "not", arg: build(args[0]) };
    case "eq":
    case "neq":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
    case "like": {
      arity(node, 2, "attribute, value");
      const attr = attribute(args[0]);
      const kind = ATTRIBUTES[attr];
      if (["gt", "gte", "lt", "lte"].includes(node.name) && kind !== "number" && kind !== "time") {
        throw new FilterError(args[0].position, `a number or time attribute for ${node.name}`, `"${attr}"`);
      }
      if (node.name === "like" && kind !== "string")
        throw new FilterError(args[0].position, "a text attribute for like", `"${attr}"`);
      return { op: node.name, attribute: attr, value: value(args[1], attr, node.name) };
    }
    case "in": {
      arity(node, 2, "attribute, [values]");
      const attr = attribute(args[0]);
      const list = args[1];
      if (list.kind !== "list" || list.items.length === 0)
        throw new FilterError(list.position, "a non-empty list of values", describe(list));
      return { op: "in", attribute: attr, values: list.items.map((item) => value(item, attr, "in")) };
    }
    case "has": {
      arity(node, 2, "tags or metadata, value");
      if (args[0].kind === "attribute" && args[0].name === "tags")
        return { op: "has", attribute: "tags", value: stringLiteral(args[1], "a tag string") };
      if (args[0].kind === "attribute" && args[0].name === "metadata") {
        const text = stringLiteral(args[1], "a JSON object string");
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new FilterError(args[1].position, "a JSON object string", "text that is not JSON");
        }
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
          throw new FilterError(args[1].position, "a JSON object", describe(args[1]));
        if (exceedsDepth(parsed, MAX_METADATA_DEPTH))
          throw new FilterError(
            args[1].position,
            `a JSON object nested at most ${MAX_METADATA_DEPTH} levels`,
            "deeper nesting",
          );
        const badKey = Object.keys(parsed).find((key) => !isPathKey(key));
        if (badKey !== undefined)
          throw new FilterError(
            args[1].position,
            "metadata keys without NUL characters",
            `the key ${JSON.stringify(badKey)}`,
          );
        return { op: "has", attribute: "metadata", value: parsed as Record<string, unknown> };
      }
      throw new FilterError(args[0].position, "tags or metadata", describe(args[0]));
    }
    case "exists": {
      arity(node, 2, "metadata, key");
      if (!(args[0].kind === "attribute" && args[0].name === "metadata"))
        throw new FilterError(args[0].position, "metadata", describe(args[0]));
      const key = stringLiteral(args[1], "a key string");
      if (!isPathKey(key))
        throw new FilterError(
          args[1].position,
          "a metadata key without NUL characters",
          `the key ${JSON.stringify(key)}`,
        );
      return { op: "exists", attribute: "metadata", key };
    }
    case "search":
      if (args.length === 1)
        return { op: "search", attribute: null, text: stringLiteral(args[0], "the text to search for") };
      arity(node, 2, "[attribute,] text");
      return { op: "search", attribute: attribute(args[0]), text: stringLiteral(args[1], "the text to search for") };
    default:
      throw new FilterError(
        node.position,
        "one of and, or, not, eq, neq, gt, gte, lt, lte, like, in, has, exists, search",
        `"${node.name}"`,
      );
  }
}

/** Parses and checks a filter. Throws `FilterError` with the position and what was expected. */
export function parseFilter(text: string): Filter {
  return build(parse(text));
}
