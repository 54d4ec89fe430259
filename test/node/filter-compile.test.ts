// The trace filter language compiled to SQL and run against the shard's runs table in node:sqlite:
// each case asserts exactly which runs a filter selects.
import { DatabaseSync } from "node:sqlite";
import { beforeAll, describe, expect, it } from "vitest";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { compileFilter, MAX_FILTER_PARAMS } from "../../src/tracing/filter/compile.ts";
import { FilterError } from "../../src/tracing/filter/parse.ts";
import { flattenForFilters, RUNS_TABLE } from "../../src/tracing/shard-schema.ts";

type Run = {
  id: string;
  name: string;
  run_type: string;
  status: string;
  error?: string | null;
  start_time: string;
  latency?: number | null;
  total_tokens?: number | null;
  is_root: boolean;
  tags?: string[];
  metadata?: Record<string, unknown>;
  inputs?: unknown;
  outputs?: unknown;
};

const RUNS: Run[] = [
  {
    id: "r1",
    name: "ChatOpenAI",
    run_type: "llm",
    status: "success",
    start_time: "2026-11-20T10:00:00.000000Z",
    latency: 7.5,
    total_tokens: 120,
    is_root: false,
    tags: ["prod", "gpt"],
    metadata: { env: "prod", user: "alice", tier: 2, beta: true },
    inputs: { messages: [{ content: "What is the weather?" }] },
    outputs: { text: "Sunny" },
  },
  {
    id: "r2",
    name: "Retriever",
    run_type: "retriever",
    status: "error",
    error: "Timeout reaching index",
    start_time: "2026-11-20T11:00:00.000000Z",
    latency: 1.2,
    total_tokens: null,
    is_root: false,
    tags: ["prod"],
    metadata: { env: "staging", user: "bob" },
    inputs: { query: "weather" },
  },
  {
    id: "r3",
    name: "Agent",
    run_type: "chain",
    status: "success",
    start_time: "2026-11-20T12:00:00.000000Z",
    latency: 9,
    total_tokens: 300,
    is_root: true,
    tags: [],
    metadata: { env: "prod", nested: { a: 1 } },
    inputs: { question: "hi" },
    outputs: { answer: "hello" },
  },
  {
    id: "r4",
    name: "chat-model",
    run_type: "llm",
    status: "pending",
    start_time: "2026-11-21T09:00:00.000000Z",
    latency: null,
    is_root: true,
    metadata: {},
  },
];

let db: DatabaseSync;

beforeAll(() => {
  db = new DatabaseSync(":memory:");
  db.exec(RUNS_TABLE);
  const insert = db.prepare(
    `INSERT INTO runs (id, trace_id, session_id, name, run_type, status, error, start_time, latency, total_tokens, is_root, tags, metadata, inputs, outputs, input_kv, output_kv, updated_at)
     VALUES (?, ?, 's', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '2026-11-21T00:00:00.000Z')`,
  );
  for (const run of RUNS) {
    insert.run(
      run.id,
      run.id,
      run.name,
      run.run_type,
      run.status,
      run.error ?? null,
      run.start_time,
      run.latency ?? null,
      run.total_tokens ?? null,
      run.is_root ? 1 : 0,
      JSON.stringify(run.tags ?? []),
      JSON.stringify(run.metadata ?? {}),
      run.inputs === undefined ? null : JSON.stringify(run.inputs),
      run.outputs === undefined ? null : JSON.stringify(run.outputs),
      JSON.stringify(flattenForFilters(run.inputs ?? {})),
      JSON.stringify(flattenForFilters(run.outputs ?? {})),
    );
  }
});

function select(filter: string): string[] {
  const { sql, params } = compileFilter(parseFilter(filter));
  return db
    .prepare(`SELECT id FROM runs WHERE ${sql} ORDER BY id`)
    .all(...params)
    .map((row) => String(row.id));
}

describe("compiled filters select the right runs", () => {
  it.each([
    ['eq(run_type, "llm")', ["r1", "r4"]],
    ['neq(run_type, "llm")', ["r2", "r3"]],
    ["eq(error, null)", ["r1", "r3", "r4"]],
    ["neq(error, null)", ["r2"]],
    ['neq(error, "Timeout reaching index")', ["r1", "r3", "r4"]],
    ['gt(latency, "5s")', ["r1", "r3"]],
    ["lte(latency, 1.2)", ["r2"]],
    ["gte(total_tokens, 120)", ["r1", "r3"]],
    ['lt(start_time, "2026-11-20T11:30:00Z")', ["r1", "r2"]],
    ['gte(start_time, "2026-11-21")', ["r4"]],
    ["eq(is_root, true)", ["r3", "r4"]],
    ['like(name, "chat%")', ["r1", "r4"]],
    ['in(status, ["error", "pending"])', ["r2", "r4"]],
    ['has(tags, "prod")', ["r1", "r2"]],
    ['has(tags, "gpt")', ["r1"]],
    ['has(metadata, \'{"env": "prod"}\')', ["r1", "r3"]],
    ['has(metadata, \'{"env": "prod", "user": "alice"}\')', ["r1"]],
    ['has(metadata, \'{"tier": 2, "beta": true}\')', ["r1"]],
    ['has(metadata, \'{"nested": {"a": 1}}\')', ["r3"]],
    ['exists(metadata, "user")', ["r1", "r2"]],
    ['eq(metadata_key, "nested")', ["r3"]],
    ['eq(metadata_value, "bob")', ["r2"]],
    ['and(eq(metadata_key, "user"), eq(metadata_value, "alice"))', ["r1"]],
    // key and value must match the same entry: r2 has user=bob and env=staging, not user=staging.
    ['and(eq(metadata_key, "user"), eq(metadata_value, "staging"))', []],
    ['and(eq(input_key, "query"), eq(input_value, "weather"))', ["r2"]],
    ['eq(input_key, "messages.content")', ["r1"]],
    ['and(eq(output_key, "answer"), like(output_value, "hel%"))', ["r3"]],
    ['search("weather")', ["r1", "r2"]],
    ['search("TIMEOUT")', ["r2"]],
    ['search(name, "agent")', ["r3"]],
    ['not(eq(run_type, "llm"))', ["r2", "r3"]],
    ['not(eq(error, "Timeout reaching index"))', ["r1", "r3", "r4"]],
    ['or(eq(status, "error"), and(eq(run_type, "llm"), gt(total_tokens, 100)))', ["r1", "r2"]],
    ['and(eq(run_type, "llm"), not(has(tags, "prod")))', ["r4"]],
  ] as const)("%s", (filter, expected) => {
    expect(select(filter)).toEqual(expected);
  });

  it("binds every value instead of splicing it into the SQL", () => {
    const { sql, params } = compileFilter(parseFilter(`eq(name, "x'); DROP TABLE runs; --")`));
    expect(sql).not.toContain("DROP");
    expect(params).toEqual(["x'); DROP TABLE runs; --"]);
    expect(select(`eq(name, "x'); DROP TABLE runs; --")`)).toEqual([]);
    expect(select('eq(run_type, "llm")')).toEqual(["r1", "r4"]);
  });

  it("rejects filters with more values than one statement can bind", () => {
    const values = Array.from({ length: MAX_FILTER_PARAMS + 1 }, (_, i) => `"v${i}"`).join(", ");
    expect(() => compileFilter(parseFilter(`in(name, [${values}])`))).toThrow(FilterError);
    expect(() => compileFilter(parseFilter(`in(name, [${values.split(", ").slice(1).join(", ")}])`))).not.toThrow();
  });
});

describe("flattenForFilters", () => {
  it("maps every dot-path to the scalars found there, dropping array indices", () => {
    expect(
      flattenForFilters({
        messages: [
          { role: "user", content: "a" },
          { role: "ai", content: "b" },
        ],
        n: 1,
        flag: null,
      }),
    ).toEqual({
      "messages.role": ["user", "ai"],
      "messages.content": ["a", "b"],
      n: [1],
      flag: [null],
    });
    expect(flattenForFilters("bare")).toEqual({});
  });
});
