import { describe, expect, it } from "vitest";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { FilterError } from "../../src/tracing/filter/parse.ts";
import { checkQueryFilters } from "../../src/tracing/filter/query-filters.ts";

const error = (text: string): FilterError => {
  try {
    parseFilter(text);
  } catch (caught) {
    expect(caught).toBeInstanceOf(FilterError);
    return caught as FilterError;
  }
  throw new Error(`"${text}" parsed`);
};

describe("trace filter language: parsing", () => {
  it("parses every comparator into a typed tree", () => {
    expect(parseFilter('eq(run_type, "llm")')).toEqual({ op: "eq", attribute: "run_type", value: "llm" });
    expect(parseFilter("neq(error, null)")).toEqual({ op: "neq", attribute: "error", value: null });
    expect(parseFilter('gte(start_time, "2026-11-21T00:00:00Z")')).toEqual({
      op: "gte",
      attribute: "start_time",
      value: "2026-11-21T00:00:00.000000Z",
    });
    expect(parseFilter("lt(total_tokens, 1000)")).toEqual({ op: "lt", attribute: "total_tokens", value: 1000 });
    expect(parseFilter('gt(latency, "5s")')).toEqual({ op: "gt", attribute: "latency", value: 5 });
    expect(parseFilter('lte(latency, "250ms")')).toEqual({ op: "lte", attribute: "latency", value: 0.25 });
    expect(parseFilter('like(input_value, "%hello%")')).toEqual({
      op: "like",
      attribute: "input_value",
      value: "%hello%",
    });
    expect(parseFilter('in(metadata_key, ["a", "b"])')).toEqual({
      op: "in",
      attribute: "metadata_key",
      values: ["a", "b"],
    });
    expect(parseFilter('has(tags, "prod")')).toEqual({ op: "has", attribute: "tags", value: "prod" });
    expect(parseFilter(`has(metadata, '{"team": "x"}')`)).toEqual({
      op: "has",
      attribute: "metadata",
      value: { team: "x" },
    });
    expect(parseFilter('exists(metadata, "user")')).toEqual({ op: "exists", attribute: "metadata", key: "user" });
    expect(parseFilter('search("timeout")')).toEqual({ op: "search", attribute: null, text: "timeout" });
    expect(parseFilter('search(name, "chain")')).toEqual({ op: "search", attribute: "name", text: "chain" });
    expect(parseFilter("eq(is_root, true)")).toEqual({ op: "eq", attribute: "is_root", value: true });
  });

  it("nests and, or and not, with either quote style and escapes", () => {
    expect(
      parseFilter(`and(eq(metadata_key, 'user'), or(eq(metadata_value, "a\\"b"), not(eq(status, "error"))))`),
    ).toEqual({
      op: "and",
      args: [
        { op: "eq", attribute: "metadata_key", value: "user" },
        {
          op: "or",
          args: [
            { op: "eq", attribute: "metadata_value", value: 'a"b' },
            { op: "not", arg: { op: "eq", attribute: "status", value: "error" } },
          ],
        },
      ],
    });
  });
});

describe("trace filter language: errors with positions", () => {
  it("reports the position and what was expected", () => {
    expect(error('eq(name "x")')).toMatchObject({ position: 8, expected: '"," or ")"' });
    expect(error('eq(colour, "red")')).toMatchObject({ position: 3 });
    expect(error('eq(colour, "red")').message).toContain('found "colour"');
    expect(error('gt(name, "x")')).toMatchObject({ position: 3, expected: "a number or time attribute for gt" });
    expect(error('gt(latency, "soon")')).toMatchObject({ position: 12 });
    expect(error('eq(name, "x"')).toMatchObject({ position: 12, expected: '"," or ")"' });
    expect(error('eq(name, "x)')).toMatchObject({ position: 9 });
    expect(error('frobnicate(name, "x")')).toMatchObject({ position: 0 });
    expect(error('eq(name, "x") extra')).toMatchObject({ position: 14, expected: "the end of the filter" });
    expect(error("name")).toMatchObject({ position: 0 });
    expect(error('gte(start_time, "yesterday-ish")').message).toContain("ISO-8601");
    expect(error("and()")).toMatchObject({ position: 0 });
    expect(error("in(id, [])")).toMatchObject({ position: 7 });
    expect(error('eq(name, "x", "y")')).toMatchObject({ position: 14 });
  });

  it("validates for the query validator endpoint with the queries' own check", () => {
    expect(checkQueryFilters({ filter: 'eq(name, "x")' }).errors).toEqual([]);
    expect(checkQueryFilters({ trace_filter: "eq(name" }).errors).toEqual([
      { field: "trace_filter", position: 7, message: expect.stringContaining("position 7") },
    ]);
  });
});
