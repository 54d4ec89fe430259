// The trace filter language compiled to SQL and run against the shard's runs table in node:sqlite:
// each case asserts exactly which runs a filter selects.
import { DatabaseSync } from "node:sqlite";
import { beforeAll, describe, expect, it } from "vitest";
import {
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_IN_VALUES,
  MAX_FILTER_PARAMS,
  MAX_FILTER_SQL_DEPTH,
} from "../../src/core/limits.ts";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { compileFilter } from "../../src/tracing/filter/compile.ts";
import { checkQueryFilters } from "../../src/tracing/filter/query-filters.ts";
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

  it("rejects filters with more values than one statement can bind; an in() list is one value", () => {
    const leaves = (n: number) => Array.from({ length: n }, (_, i) => `eq(name, "v${i}")`).join(", ");
    expect(checkQueryFilters({ filter: `or(${leaves(MAX_FILTER_PARAMS + 1)})` }).errors[0].message).toBe(
      `Invalid filter at position 0: expected filters with at most ${MAX_FILTER_PARAMS} values together, found ${MAX_FILTER_PARAMS + 1} values`,
    );
    expect(checkQueryFilters({ filter: `or(${leaves(MAX_FILTER_PARAMS)})` }).errors).toEqual([]);
    const names = Array.from({ length: MAX_FILTER_IN_VALUES }, (_, i) => `"n${i}"`);
    const { params } = compileFilter(parseFilter(`in(name, [${names.join(", ")}, "Agent"])`.replace(', "Agent"', "")));
    expect(params).toHaveLength(1);
    expect(select(`in(name, [${names.slice(1).join(", ")}, "Agent", "Retriever"])`)).toEqual(["r2", "r3"]);
    expect(select("in(latency, [7.5, 1.2])")).toEqual(["r1", "r2"]);
    expect(select("in(is_root, [true])")).toEqual(RUNS.filter((r) => r.is_root).map((r) => r.id));
  });
});

describe("the shared check of a query's filters (query and validate alike)", () => {
  it("balances or() and and(): 99 and 500 conditions run, deeper nesting and more conditions are refused", () => {
    const or = (n: number) => `or(${Array.from({ length: n }, () => "eq(error, null)").join(", ")})`;
    for (const n of [99, 500]) {
      const { compiled, errors } = checkQueryFilters({ filter: or(n) });
      expect(errors).toEqual([]);
      const rows = db.prepare(`SELECT id FROM runs WHERE ${compiled.filter!.sql} ORDER BY id`).all();
      expect(rows.map((row) => row.id)).toEqual(["r1", "r3", "r4"]);
    }
    expect(checkQueryFilters({ filter: or(6000) }).errors).toEqual([
      {
        field: "filter",
        position: 0,
        message: `Invalid filter at position 0: expected filters with at most ${MAX_FILTER_CONDITIONS} conditions together, found 6000 conditions`,
      },
    ]);
    // Across fields: the field that crosses the bound is named.
    expect(checkQueryFilters({ filter: or(300), tree_filter: or(300) }).errors.map((e) => e.field)).toEqual([
      "tree_filter",
    ]);
    const nots = (n: number) => `${"not(".repeat(n)}eq(error, null)${")".repeat(n)}`;
    expect(checkQueryFilters({ filter: nots(40) }).errors).toEqual([]);
    expect(checkQueryFilters({ filter: nots(41) }).errors[0].message).toContain(
      `at most ${MAX_FILTER_SQL_DEPTH} levels deep, found 51 levels`,
    );
    const values = Array.from({ length: MAX_FILTER_IN_VALUES + 1 }, (_, i) => i);
    expect(checkQueryFilters({ filter: `in(latency, [${values.join(", ")}])` }).errors[0].message).toContain(
      `in() with at most ${MAX_FILTER_IN_VALUES} values`,
    );
  });
});

describe("like() patterns longer than SQLite's 50 bytes", () => {
  // A seeded generator: the same cases on every run.
  let seed = 27;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const pick = (n: number, alphabet: string) =>
    Array.from({ length: n }, () => Array.from(alphabet)[Math.floor(random() * Array.from(alphabet).length)]).join("");
  /** What LIKE means (PostgreSQL's, backslash escapes, ASCII case folding), as a regular expression. */
  const oracle = (text: string, pattern: string) => {
    const fold = (t: string) => t.replace(/[A-Z]/g, (c) => c.toLowerCase());
    const literal = (c: string) => fold(c).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const chars = Array.from(pattern);
    let source = "";
    for (let i = 0; i < chars.length; i++) {
      if (chars[i] === "\\" && i + 1 < chars.length) source += literal(chars[++i]);
      else if (chars[i] === "%") source += "[\\s\\S]*";
      else if (chars[i] === "_") source += "[\\s\\S]";
      else source += literal(chars[i]);
    }
    return new RegExp(`^${source}$`, "u").test(fold(text));
  };
  const matching = (pattern: string, texts: string[]) => {
    const like = new DatabaseSync(":memory:");
    like.exec("CREATE TABLE runs (id INTEGER, error TEXT)");
    texts.forEach((text, i) => like.prepare("INSERT INTO runs VALUES (?, ?)").run(i, text));
    const filter = parseFilter(`like(error, ${JSON.stringify(pattern)})`);
    const { sql, params } = compileFilter(filter);
    return like
      .prepare(`SELECT id FROM runs WHERE ${sql} ORDER BY id`)
      .all(...params)
      .map((row) => Number(row.id));
  };

  it("matches an ordinary long pattern with one LIKE of at most 50 bytes per piece", () => {
    const pattern = "%Rate limit reached for gpt-4o in organization org-% on tokens%";
    expect(new TextEncoder().encode(pattern).byteLength).toBeGreaterThan(50);
    const { sql, params } = compileFilter(parseFilter(`like(error, ${JSON.stringify(pattern)})`));
    expect(sql).not.toContain("LIKE ?");
    for (const piece of JSON.stringify(JSON.parse(String(params[0]))).match(/"p":"(?:[^"\\]|\\.)*"/g) ?? [])
      expect(new TextEncoder().encode(JSON.parse(piece.slice(4))).byteLength).toBeLessThanOrEqual(50);
    const texts = [
      "Error code: 429 - Rate limit reached for gpt-4o in organization org-123 on tokens per min",
      "rate LIMIT reached for GPT-4o in organization org-x on TOKENS",
      "Rate limit reached for gpt-4o-mini in organization org-1 on tokens",
      "Rate limit reached for gpt-4o in organization org-1",
      "",
    ];
    expect(matching(pattern, texts)).toEqual([0, 1]);
    // Wildcards and escapes inside a long pattern.
    expect(
      matching("Rate limit reached for gpt-_o in org% on tokens per min\\_100%", [
        "Rate limit reached for gpt-4o in org-123 on tokens per min_100 left",
        "Rate limit reached for gpt-4o in org-123 on tokens per minX100 left",
        "Rate limit reached for gpt-44o in org-123 on tokens per min_100",
      ]),
    ).toEqual([0]);
    expect(matching("%100\\%%", ["50%", "100%", "100 percent"])).toEqual([1]);
  });

  it("agrees with LIKE's meaning on generated patterns and texts", () => {
    let matched = 0;
    for (let round = 0; round < 200; round++) {
      const pattern = pick(30 + Math.floor(random() * 50), "abAB%_%__\\ééxyzab");
      const instance = () => {
        const chars = Array.from(pattern);
        let text = "";
        for (let i = 0; i < chars.length; i++) {
          if (chars[i] === "\\" && i + 1 < chars.length) text += chars[++i];
          else if (chars[i] === "%") text += pick(Math.floor(random() * 6), "abABé%_xy");
          else if (chars[i] === "_") text += pick(1, "abé%_");
          else text += random() < 0.5 ? chars[i].toUpperCase() : chars[i];
        }
        return text;
      };
      const mutate = (text: string) => {
        const chars = Array.from(text);
        chars.splice(Math.floor(random() * chars.length), Math.floor(random() * 2), ...(random() < 0.5 ? ["x"] : []));
        return chars.join("");
      };
      const texts = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? instance() : mutate(instance())));
      const expected = texts.flatMap((text, i) => (oracle(text, pattern) ? [i] : []));
      expect(matching(pattern, texts), pattern).toEqual(expected);
      matched += expected.length;
    }
    expect(matched).toBeGreaterThan(150);
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
