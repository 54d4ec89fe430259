// The trace shard's run storage in node:sqlite: posts and patches in any order, derived fields,
// paged queries and trace/tree filters, plus the ingest-side validation of runs.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SqlStore } from "../../src/db/sql.ts";
import { shardColumns } from "../../src/export/columns.ts";
import { type ExportPage, type ExportPageQuery, readExportPage } from "../../src/tracing/export-page.ts";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { compileFilter } from "../../src/tracing/filter/compile.ts";
import type { ModelPrices } from "../../src/tracing/run-input.ts";
import { dottedOrderProblem, parseModelPrices, usageOf } from "../../src/tracing/run-input.ts";
import { RunPatchSchema, RunPostSchema } from "../../src/tracing/schemas.ts";
import { ShardRuns, type TracedRunQuery } from "../../src/tracing/shard-runs.ts";
import { nodeSql } from "./node-sqlite.ts";

const SESSION = "00000000-0000-4000-8000-000000000001";

function segment(time: string, id: string): string {
  return `${time.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
}

/** A run the way the JS SDK posts it: ISO start time, dotted_order built from its ancestors. */
function post(
  fields: { name: string; start: string; parent?: { id: string; dotted_order: string; trace_id: string } } & Record<
    string,
    unknown
  >,
) {
  const id = randomUUID();
  const dotted_order = fields.parent
    ? `${fields.parent.dotted_order}.${segment(fields.start, id)}`
    : segment(fields.start, id);
  const { parent, start, ...rest } = fields;
  return RunPostSchema.parse({
    run_type: "chain",
    ...rest,
    id,
    start_time: start,
    dotted_order,
    trace_id: parent?.trace_id ?? id,
    parent_run_id: parent?.id,
  });
}

/** A shard's runs and its export pages over one SQLite, as the TraceShardDO holds them; pages take export column names. */
function shard(sql: SqlStore = nodeSql(), prices?: ModelPrices) {
  const exportPage = ({ fields, ...query }: Omit<ExportPageQuery, "columns"> & { fields: readonly string[] }) =>
    readExportPage(sql, { ...query, columns: shardColumns(fields) });
  return Object.assign(new ShardRuns(sql, prices), { exportPage });
}

/** A column page back as rows, to compare. */
function rowsOf(page: ExportPage): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = Array.from({ length: page.rows }, () => ({}));
  for (const [field, column] of Object.entries(page.columns)) {
    if ("values" in column) {
      (JSON.parse(column.values) as unknown[]).forEach((value, i) => (rows[i][field] = value));
      continue;
    }
    if ("constant" in column) {
      rows.forEach((row) => (row[field] = column.constant));
      continue;
    }
    (JSON.parse(column.strings) as (string | null)[]).forEach((text, i) => (rows[i][field] = text));
  }
  return rows;
}

describe("run input validation", () => {
  it("normalises ISO strings and epoch milliseconds to ISO times with microseconds", () => {
    const run = RunPostSchema.parse({
      id: randomUUID(),
      name: "a",
      run_type: "llm",
      start_time: "2026-11-20T10:00:00.123456Z",
      end_time: Date.UTC(2026, 10, 20, 10, 0, 2),
    });
    // Microseconds are kept (Date would cut them to milliseconds).
    expect(run.start_time).toBe("2026-11-20T10:00:00.123456Z");
    expect(run.end_time).toBe("2026-11-20T10:00:02.000000Z");
    const naive = RunPostSchema.parse({
      id: randomUUID(),
      name: "a",
      run_type: "llm",
      start_time: "2026-11-20T10:00:00.5",
    });
    expect(naive.start_time).toBe("2026-11-20T10:00:00.500000Z");
    // An offset is converted to UTC; digits past the microsecond are dropped.
    const offset = RunPostSchema.parse({
      id: randomUUID(),
      name: "a",
      run_type: "llm",
      start_time: "2026-11-20T12:00:00.1234567+02:00",
    });
    expect(offset.start_time).toBe("2026-11-20T10:00:00.123456Z");
  });

  it("names the field of a bad run", () => {
    const result = RunPostSchema.safeParse({ id: "nope", name: "", run_type: "llm", start_time: "yesterday" });
    expect(result.success).toBe(false);
    const fields = result.error!.issues.map((issue) => issue.path.join("."));
    expect(fields).toEqual(expect.arrayContaining(["id", "name", "start_time"]));
    expect(RunPatchSchema.safeParse({ id: randomUUID(), tags: "x" }).success).toBe(false);
  });

  it("checks dotted_order against id, trace_id and parent_run_id", () => {
    const root = post({ name: "root", start: "2026-11-20T10:00:00.000Z" });
    const child = post({
      name: "child",
      start: "2026-11-20T10:00:01.000Z",
      parent: { id: root.id, dotted_order: root.dotted_order!, trace_id: root.id },
    });
    expect(dottedOrderProblem(root)).toBeNull();
    expect(dottedOrderProblem(child)).toBeNull();
    expect(dottedOrderProblem({ ...child, id: randomUUID() })).toMatch(/must end with the run's id/);
    expect(dottedOrderProblem({ ...child, trace_id: randomUUID() })).toMatch(/must start with trace_id/);
    expect(dottedOrderProblem({ ...child, parent_run_id: null })).toMatch(/parent_run_id null does not match/);
    expect(dottedOrderProblem({ ...root, dotted_order: "20261120T1000Z" + root.id })).toMatch(/segment 1/);
  });

  it("finds token usage where LangChain and traceable put it", () => {
    expect(usageOf({ usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } }, null)).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
    expect(usageOf({ llm_output: { token_usage: { prompt_tokens: 3, completion_tokens: 4 } } }, null)).toMatchObject({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
    expect(
      usageOf(
        {
          generations: [
            [{ message: { kwargs: { usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } } }],
          ],
        },
        null,
      ).total_tokens,
    ).toBe(3);
    expect(usageOf(null, { metadata: { usage_metadata: { input_tokens: 2, output_tokens: 2 } } }).total_tokens).toBe(4);
    expect(usageOf({ text: "no usage" }, {})).toEqual({
      prompt_tokens: null,
      completion_tokens: null,
      total_tokens: null,
      prompt_cost: null,
      completion_cost: null,
      total_cost: null,
    });
  });

  it("takes costs from the usage, else from the model's price", () => {
    const sent = usageOf(
      { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_cost: 0.01, output_cost: 0.02 } },
      null,
    );
    expect(sent).toMatchObject({ prompt_cost: 0.01, completion_cost: 0.02, total_cost: 0.03 });
    const prices = { "gpt-test": { input_per_million: 2, output_per_million: 8 } };
    const priced = usageOf(
      { usage_metadata: { input_tokens: 1_000_000, output_tokens: 500_000, total_tokens: 1_500_000 } },
      { metadata: { ls_model_name: "gpt-test" } },
      prices,
    );
    expect(priced).toMatchObject({ prompt_cost: 2, completion_cost: 4, total_cost: 6 });
    const byParams = usageOf(
      { llm_output: { token_usage: { prompt_tokens: 500_000, completion_tokens: 0 } } },
      { invocation_params: { model: "gpt-test" } },
      prices,
    );
    expect(byParams).toMatchObject({ prompt_cost: 1, completion_cost: 0, total_cost: 1 });
    // An unknown model has no cost; the tokens still count.
    expect(
      usageOf(
        { usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
        { metadata: { ls_model_name: "other" } },
        prices,
      ),
    ).toMatchObject({ total_tokens: 2, total_cost: null });
  });
});

describe("ShardRuns", () => {
  it("reads MODEL_PRICES, ignoring a value that is not a JSON object", () => {
    expect(parseModelPrices('{"m": {"input_per_million": 2}}')).toEqual({ m: { input_per_million: 2 } });
    expect(parseModelPrices("not json")).toEqual({});
    expect(parseModelPrices("[1]")).toEqual({});
    expect(parseModelPrices(undefined)).toEqual({});
  });

  it("derives costs from the model's price on write", () => {
    const store = shard(nodeSql(), { m: { input_per_million: 1_000_000, output_per_million: 0 } });
    const run = post({
      name: "llm",
      start: "2026-11-20T10:00:00.000Z",
      run_type: "llm",
      extra: { metadata: { ls_model_name: "m" } },
      outputs: { usage_metadata: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } },
    });
    store.post(run, SESSION);
    expect(store.get(run.id)).toMatchObject({ prompt_cost: 3, completion_cost: 0, total_cost: 3 });
  });

  it("pages export rows by count and by size, and ignores first-token times that are not ISO text", () => {
    const store = shard();
    const runs = Array.from({ length: 5 }, (_, i) =>
      post({
        name: `r${i}`,
        start: `2026-11-20T10:00:0${i}.000Z`,
        inputs: { text: "x".repeat(1000) },
        events: [{ name: "new_token", time: i === 0 ? 1735725600.1 : `2026-11-20T10:00:0${i}.500Z` }],
      }),
    );
    store.ingest(runs, [], SESSION);
    const query = {
      start: "2026-11-20T00:00:00.000Z",
      end: "2026-11-21T00:00:00.000Z",
      fields: ["id", "inputs", "first_token_time"],
    };
    const all = store.exportPage({ ...query, limit: 10, maxBytes: 1e9 });
    expect(rowsOf(all).map((r) => r.first_token_time)).toEqual([
      null,
      "2026-11-20T10:00:01.500Z",
      "2026-11-20T10:00:02.500Z",
      "2026-11-20T10:00:03.500Z",
      "2026-11-20T10:00:04.500Z",
    ]);
    expect([all.rows, all.more, all.last]).toEqual([
      5,
      false,
      { start_time: "2026-11-20T10:00:04.000000Z", id: runs[4].id },
    ]);
    const three = store.exportPage({ ...query, limit: 3, maxBytes: 1e9 });
    expect([three.rows, three.more, rowsOf(three).map((r) => r.id)]).toEqual([
      3,
      true,
      runs.slice(0, 3).map((r) => r.id),
    ]);
    const rest = store.exportPage({ ...query, limit: 3, maxBytes: 1e9, after: three.last! });
    expect([rest.rows, rest.more, rowsOf(rest).map((r) => r.id)]).toEqual([2, false, runs.slice(3).map((r) => r.id)]);
    // About 1 KB per row: a 2.5 KB cap stops after three rows, and a page always holds at least one.
    const bySize = store.exportPage({ ...query, limit: 10, maxBytes: 2500 });
    expect([bySize.rows, bySize.more]).toEqual([3, true]);
    expect(store.exportPage({ ...query, limit: 10, maxBytes: 1 }).rows).toBe(1);
    expect(store.exportPage({ ...query, limit: 10, maxBytes: 1e9, after: all.last! })).toEqual({
      rows: 0,
      more: false,
      last: null,
      columns: {},
    });
  });

  it("reads a page's cursor and size from the start_time index alone, seeking to the cursor", () => {
    const sql = nodeSql();
    const seen: { query: string; params: unknown[] }[] = [];
    const store = shard({
      ...sql,
      all: (query, ...params) => {
        seen.push({ query, params });
        return sql.all(query, ...params);
      },
    });
    store.ingest(
      [
        post({ name: "a", start: "2026-11-20T10:00:00.000Z", inputs: { x: 1 } }),
        post({ name: "b", start: "2026-11-20T10:00:01.000Z" }),
      ],
      [],
      SESSION,
    );
    const after = { start_time: "2026-11-20T10:00:00.000000Z", id: "0" };
    for (const fields of [
      ["id", "extra"],
      ["id", "inputs", "outputs", "extra"],
    ]) {
      seen.length = 0;
      store.exportPage({
        start: "2026-11-20T00:00:00.000Z",
        end: "2026-11-21T00:00:00.000Z",
        fields,
        limit: 10,
        maxBytes: 1e9,
        after,
      });
      const plans = seen
        .filter(({ query }) => !query.includes("json_group_array"))
        .map(({ query, params }) =>
          sql.db
            .prepare(`EXPLAIN QUERY PLAN ${query}`)
            .all(...(params as string[]))
            .map((row) => String(row.detail))
            .join("; "),
        );
      expect(plans).toHaveLength(2); // the size of the page, then its last row
      for (const plan of plans) expect(plan).toContain("COVERING INDEX runs_by_start");
      // The seek starts at the cursor, not at the start of the day.
      expect(seen[0].params[0]).toBe(after.start_time);
    }
  });

  it("hands export columns over in row order with exact values: UTF-8 text, nulls, empty strings, times, costs, lists", () => {
    const store = shard();
    // Posted out of order; the page follows (start_time, id).
    const late = post({
      name: "naïve ☃ 😀",
      start: "2026-11-20T10:00:02.250Z",
      error: "",
      tags: ["a", "b"],
      extra: { metadata: { k: "é" } },
    });
    const early = post({
      name: "plain",
      start: "2026-11-20T10:00:01.001Z",
      end_time: "2026-11-20T10:00:01.501Z",
      outputs: {
        usage_metadata: {
          input_tokens: 3,
          output_tokens: 4,
          total_tokens: 7,
          input_cost: 0.1,
          output_cost: 0.2,
          total_cost: 0.1 + 0.2,
        },
      },
    });
    store.ingest([late, early], [], SESSION);
    const fields = [
      "id",
      "name",
      "error",
      "is_root",
      "start_time",
      "end_time",
      "tags",
      "total_tokens",
      "total_cost",
      "feedback_stats",
      "tenant_id",
    ];
    const page = store.exportPage({
      start: "2026-11-20T00:00:00.000Z",
      end: "2026-11-21T00:00:00.000Z",
      fields,
      limit: 10,
      maxBytes: 1e9,
    });
    expect(Object.keys(page.columns)).toEqual(fields.filter((f) => f !== "tenant_id")); // the tenant is the writer's
    expect(rowsOf(page)).toEqual([
      {
        id: early.id,
        name: "plain",
        error: null,
        is_root: 1,
        start_time: "2026-11-20T10:00:01.001000Z",
        end_time: "2026-11-20T10:00:01.501000Z",
        tags: "[]",
        total_tokens: 7,
        total_cost: 0.1 + 0.2,
        feedback_stats: null,
      },
      {
        id: late.id,
        name: "naïve ☃ 😀",
        error: "",
        is_root: 1,
        start_time: "2026-11-20T10:00:02.250000Z",
        end_time: null,
        tags: '["a","b"]',
        total_tokens: null,
        total_cost: null,
        feedback_stats: null,
      },
    ]);
    const arrays = store.exportPage({
      start: "2026-11-20T00:00:00.000Z",
      end: "2026-11-21T00:00:00.000Z",
      fields: ["tags"],
      limit: 10,
      maxBytes: 1e9,
      listsAsArrays: true,
    });
    expect(arrays.columns.tags).toEqual({ values: '[[],["a","b"]]' });
  });

  it("stores attachments in chunks and reads them back whole", () => {
    const store = shard();
    const runId = randomUUID();
    const big = new Uint8Array(2.5 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 256;
    store.putAttachment({ run_id: runId, name: "big", mime_type: "application/octet-stream", data: big });
    store.putAttachment({ run_id: runId, name: "empty", mime_type: "text/plain", data: new Uint8Array(0) });
    expect(store.attachmentsOf(runId)).toEqual([
      { name: "big", mime_type: "application/octet-stream", size: big.byteLength },
      { name: "empty", mime_type: "text/plain", size: 0 },
    ]);
    // Compared as buffers: an element-wise toEqual over 2.5 M bytes takes seconds.
    expect(Buffer.compare(store.attachment(runId, "big")!.data, big)).toBe(0);
    expect(store.attachment(runId, "empty")?.data).toEqual(new Uint8Array(0));
    // Replacing a large attachment with a small one leaves no stale chunks behind.
    store.putAttachment({ run_id: runId, name: "big", mime_type: "text/plain", data: new Uint8Array([1, 2, 3]) });
    expect(store.attachment(runId, "big")).toEqual({ mime_type: "text/plain", data: new Uint8Array([1, 2, 3]) });
    expect(store.attachment(runId, "missing")).toBeNull();
  });

  it("ingests a batch in one pass: duplicates, a post with its patch, and patches waiting for a later batch", () => {
    const store = shard();
    const root = post({ name: "root", start: "2026-11-20T10:00:00.000Z" });
    const child = post({
      name: "child",
      start: "2026-11-20T10:00:01.000Z",
      parent: { id: root.id, dotted_order: root.dotted_order!, trace_id: root.id },
    });
    const later = post({ name: "later", start: "2026-11-20T10:00:02.000Z" });
    // Batch 1: the child twice (a retried post), the root with its patch, and a patch for `later`.
    store.ingest(
      [child, root, { ...child, name: "renamed-by-retry" }],
      [
        RunPatchSchema.parse({ id: root.id, end_time: "2026-11-20T10:00:05Z", outputs: { ok: true } }),
        RunPatchSchema.parse({ id: later.id, error: "boom" }),
      ],
      SESSION,
    );
    expect(store.get(root.id)).toMatchObject({ status: "success", latency: 5, outputs: { ok: true } });
    // A repeated post only fills what is missing, so the first name stays.
    expect(store.get(child.id)).toMatchObject({ name: "child", parent_run_id: root.id, parent_run_ids: [root.id] });
    expect(store.get(later.id)).toBeNull();
    // Batch 2: the post of `later` picks up its waiting patch.
    store.ingest([later], [], SESSION);
    expect(store.get(later.id)).toMatchObject({ name: "later", status: "error", error: "boom" });
    expect(store.query({ limit: 10 }).map((run) => run.name)).toEqual(["later", "child", "root"]);
  });

  it("derives status, latency, is_root, parent_run_ids, thread_id and tokens", () => {
    const store = shard();
    const root = post({ name: "agent", start: "2026-11-20T10:00:00.000Z", extra: { metadata: { thread_id: "t-1" } } });
    const llm = post({
      name: "model",
      run_type: "llm",
      start: "2026-11-20T10:00:01.000Z",
      parent: { id: root.id, dotted_order: root.dotted_order!, trace_id: root.id },
    });
    store.post(root, SESSION);
    store.post(llm, SESSION);
    expect(store.get(root.id)).toMatchObject({
      status: "pending",
      latency: null,
      is_root: true,
      parent_run_ids: [],
      thread_id: "t-1",
      trace_id: root.id,
    });
    store.patch(
      RunPatchSchema.parse({
        id: llm.id,
        end_time: "2026-11-20T10:00:03.500Z",
        outputs: { usage_metadata: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } },
      }),
    );
    expect(store.get(llm.id)).toMatchObject({
      status: "success",
      latency: 2.5,
      is_root: false,
      parent_run_ids: [root.id],
      parent_run_id: root.id,
      total_tokens: 10,
      prompt_tokens: 7,
      completion_tokens: 3,
      execution_order: 2,
    });
    store.patch(RunPatchSchema.parse({ id: root.id, end_time: "2026-11-20T10:00:04Z", error: "boom" }));
    expect(store.get(root.id)).toMatchObject({ status: "error", error: "boom", latency: 4 });
  });

  it("keeps a patch that arrives before its post and applies it when the post lands", () => {
    const store = shard();
    const run = post({ name: "late", start: "2026-11-20T10:00:00.000Z", extra: { metadata: { a: 1 } } });
    store.patch(RunPatchSchema.parse({ id: run.id, end_time: "2026-11-20T10:00:01Z", outputs: { answer: 42 } }));
    store.patch(RunPatchSchema.parse({ id: run.id, extra: { metadata: { b: 2 } } }));
    expect(store.get(run.id)).toBeNull();
    store.post(run, SESSION);
    const stored = store.get(run.id)!;
    expect(stored).toMatchObject({ status: "success", latency: 1, outputs: { answer: 42 } });
    expect(stored.extra).toMatchObject({ metadata: { a: 1, b: 2 } });
  });

  it("is idempotent per run id: a retried post does not undo a patch", () => {
    const store = shard();
    const run = post({ name: "retried", start: "2026-11-20T10:00:00.000Z", inputs: { q: "x" } });
    store.post(run, SESSION);
    store.patch(RunPatchSchema.parse({ id: run.id, end_time: "2026-11-20T10:00:02Z", outputs: { a: "y" } }));
    store.post(run, SESSION);
    store.post(run, SESSION);
    expect(store.query({ limit: 100 })).toHaveLength(1);
    expect(store.get(run.id)).toMatchObject({ status: "success", outputs: { a: "y" }, inputs: { q: "x" } });
  });

  it("resolves the trace of an old-style post that names only its parent", () => {
    const store = shard();
    const root = post({ name: "root", start: "2026-11-20T10:00:00.000Z" });
    store.post(root, SESSION);
    const child = RunPostSchema.parse({
      id: randomUUID(),
      name: "child",
      run_type: "tool",
      start_time: "2026-11-20T10:00:01Z",
      parent_run_id: root.id,
    });
    store.post(child, SESSION);
    expect(store.get(child.id)).toMatchObject({ trace_id: root.id, is_root: false, parent_run_ids: [root.id] });
  });

  it("pages by (start_time, id) in both orders and filters by fields and compiled filters", () => {
    const store = shard();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const run = post({
        name: `run-${i}`,
        run_type: i % 2 ? "llm" : "chain",
        start: `2026-11-20T10:00:0${i}.000Z`,
        tags: i < 3 ? ["early"] : [],
      });
      store.post(run, SESSION);
      ids.push(run.id);
    }
    const pages: string[][] = [];
    let after: { start_time: string; id: string } | undefined;
    for (;;) {
      const page = store.query({ limit: 3, after });
      if (page.length === 0) break;
      pages.push(page.map((run) => run.id));
      after = { start_time: page.at(-1)!.start_time, id: page.at(-1)!.id };
    }
    expect(pages.flat()).toEqual([...ids].reverse());
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(store.query({ limit: 2, order: "asc" }).map((run) => run.name)).toEqual(["run-0", "run-1"]);
    expect(store.query({ limit: 100, run_type: "llm" }).map((run) => run.name)).toEqual(["run-5", "run-3", "run-1"]);
    const early = compileFilter(parseFilter('has(tags, "early")'));
    expect(store.query({ limit: 100, filters: [early], order: "asc" }).map((run) => run.name)).toEqual([
      "run-0",
      "run-1",
      "run-2",
    ]);
    expect(store.query({ limit: 100, start_time: "2026-11-20T10:00:05Z" }).map((run) => run.name)).toEqual([
      "run-6",
      "run-5",
    ]);
  });

  it("pages from the cursor within time bounds in both orders, ties broken by id", () => {
    const store = shard();
    // Three runs share each second, so pages end in the middle of a tie.
    const runs = Array.from({ length: 12 }, (_, i) =>
      post({ name: `run-${i}`, start: `2026-11-20T10:00:0${Math.floor(i / 3)}.000Z` }),
    );
    store.ingest(runs, [], SESSION);
    const sorted = [...runs]
      .sort((a, b) => (a.start_time === b.start_time ? (a.id < b.id ? -1 : 1) : a.start_time < b.start_time ? -1 : 1))
      .map((run) => run.id);
    const walk = (bounds: Pick<TracedRunQuery, "order" | "start_time" | "end_time">) => {
      const seen: string[] = [];
      let after: { start_time: string; id: string } | undefined;
      for (;;) {
        const page = store.query({ ...bounds, limit: 2, after });
        if (!page.length) return seen;
        seen.push(...page.map((run) => run.id));
        after = { start_time: page.at(-1)!.start_time, id: page.at(-1)!.id };
      }
    };
    expect(walk({ order: "asc", start_time: "2026-11-20T10:00:01Z" })).toEqual(sorted.slice(3));
    expect(walk({ order: "desc", end_time: "2026-11-20T10:00:02Z" })).toEqual(sorted.slice(0, 9).reverse());
    expect(walk({ order: "asc", start_time: "2026-11-20T10:00:01Z", end_time: "2026-11-20T10:00:02Z" })).toEqual(
      sorted.slice(3, 9),
    );
    // A cursor from before the bounds does not widen them.
    expect(
      store
        .query({
          order: "asc",
          start_time: "2026-11-20T10:00:03Z",
          limit: 10,
          after: { start_time: "2026-11-20T10:00:00.000000Z", id: sorted[0] },
        })
        .map((run) => run.id),
    ).toEqual(sorted.slice(9));
    expect(
      store
        .query({
          order: "desc",
          end_time: "2026-11-20T10:00:00Z",
          limit: 10,
          after: { start_time: "2026-11-20T10:00:03.000000Z", id: sorted[11] },
        })
        .map((run) => run.id),
    ).toEqual(sorted.slice(0, 3).reverse());
    // Export pages walk the same ties.
    const exported: string[] = [];
    let after: { start_time: string; id: string } | undefined;
    for (;;) {
      const page = store.exportPage({
        start: "2026-11-20T10:00:01.000Z",
        end: "2026-11-20T10:00:03.000Z",
        fields: ["id"],
        limit: 2,
        maxBytes: 1e9,
        after,
      });
      if (!page.rows) break;
      exported.push(...(JSON.parse((page.columns.id as { strings: string }).strings) as string[]));
      after = page.last!;
    }
    expect(exported).toEqual(sorted.slice(3, 9));
  });

  it("applies trace_filter to the root and tree_filter to any run of the trace", () => {
    const store = shard();
    const a = post({ name: "a-root", start: "2026-11-20T10:00:00.000Z", tags: ["vip"] });
    const aChild = post({
      name: "a-tool",
      run_type: "tool",
      start: "2026-11-20T10:00:01.000Z",
      parent: { id: a.id, dotted_order: a.dotted_order!, trace_id: a.id },
    });
    const b = post({ name: "b-root", start: "2026-11-20T10:00:02.000Z" });
    const bChild = post({
      name: "b-llm",
      run_type: "llm",
      start: "2026-11-20T10:00:03.000Z",
      parent: { id: b.id, dotted_order: b.dotted_order!, trace_id: b.id },
    });
    for (const run of [a, aChild, b, bChild]) store.post(run, SESSION);
    const names = (query: Parameters<ShardRuns["query"]>[0]) =>
      store.query({ ...query, order: "asc" }).map((run) => run.name);
    expect(
      names({ limit: 100, filters: [ShardRuns.traceFilter(compileFilter(parseFilter('has(tags, "vip")')))] }),
    ).toEqual(["a-root", "a-tool"]);
    expect(
      names({ limit: 100, filters: [ShardRuns.treeFilter(compileFilter(parseFilter('eq(run_type, "llm")')))] }),
    ).toEqual(["b-root", "b-llm"]);
    expect(names({ limit: 100, is_root: true })).toEqual(["a-root", "b-root"]);
    expect(names({ limit: 100, trace_id: b.id })).toEqual(["b-root", "b-llm"]);
    expect(names({ limit: 100, parent_run_id: a.id })).toEqual(["a-tool"]);
  });
});
