// The runs query paths against SQLite's and Cloudflare's limits (issue 27): long id lists, long like()
// patterns, wide and deep filters (validate and query agree), pages bounded by bytes, and a bounded
// number of shard calls per request.
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_IN_VALUES,
  MAX_ID_LIST,
  MAX_QUERY_PAGE_BYTES,
  SHARD_CALLS_PER_REQUEST,
} from "../../src/core/limits.ts";
import { shardColumns } from "../../src/export/columns.ts";
import { tracesDatabase } from "../../src/tracing/directory.ts";
import { checkQueryFilters } from "../../src/tracing/filter/query-filters.ts";
import { queryBudget, queryRuns, runStats } from "../../src/tracing/query.ts";
import { RunsQuerySchema } from "../../src/tracing/schemas.ts";
import { type TraceShardDO, traceShardName } from "../../src/tracing/trace-shard-do.ts";
import { call, json } from "./helpers.ts";

type Run = { id: string; name: string; start_time: string; session_id: string } & Record<string, unknown>;
type Page = { runs: Run[]; cursors: { next: string | null } };
type Validation = { valid: boolean; errors: { field: string; message: string; position: number }[] };

let key: string;
let workspaceId: string;
const projects: Record<string, string> = {};

const post = (path: string, body: unknown) => call(path, { method: "POST", key, json: body });

async function ingest(runs: Record<string, unknown>[]): Promise<void> {
  const response = await post("/api/v1/runs/batch", { post: runs });
  expect(await json(response)).toMatchObject({ accepted: runs.length, errors: [] });
}

const run = (name: string, project: string, start: string, fields: Record<string, unknown> = {}) => ({
  id: crypto.randomUUID(),
  name,
  run_type: "chain",
  start_time: start,
  session_name: project,
  ...fields,
});

const LONG_ERRORS = {
  tpm: "Error code: 429 - Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000",
  mini: "Rate limit reached for gpt-4o-mini in organization org-abc on tokens per min",
  quota: "100% of quota used: Rate limit reached for gpt-4o in organization org_xyz on tokens",
};

beforeAll(async () => {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Query limits" } }),
  );
  workspaceId = workspace.id;
  key = (
    await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }))
  ).key;
  await ingest([
    run("tpm", "errors", "2026-10-01T10:00:00.000Z", { error: LONG_ERRORS.tpm, run_type: "llm" }),
    run("mini", "errors", "2026-10-01T10:00:01.000Z", { error: LONG_ERRORS.mini, run_type: "llm" }),
    run("quota", "errors", "2026-10-01T10:00:02.000Z", { error: LONG_ERRORS.quota, run_type: "llm" }),
    run("fine", "other", "2026-10-01T11:00:00.000Z", { inputs: { q: "weather" } }),
  ]);
  for (const session of await json<{ id: string; name: string }[]>(await call("/api/v1/sessions", { key })))
    projects[session.name] = session.id;
});

const names = (page: Page) => page.runs.map((r) => r.name);

describe("lists of ids", () => {
  it("takes 120 project ids on /runs/query, /runs/stats, /api/v2/runs/query and GET /sessions", async () => {
    const ids = [projects.errors, projects.other, ...Array.from({ length: 118 }, () => crypto.randomUUID())];
    const page = await post("/api/v1/runs/query", { session: ids });
    expect(page.status).toBe(200);
    expect(names(await json<Page>(page))).toEqual(["fine", "quota", "mini", "tpm"]);
    const stats = await post("/api/v1/runs/stats", { session: ids });
    expect(stats.status).toBe(200);
    expect(await json(stats)).toMatchObject({ run_count: 4, error_rate: 0.75 });
    const v2 = await post("/api/v2/runs/query", {
      project_ids: ids,
      min_start_time: "2026-10-01T00:00:00Z",
      max_start_time: "2026-10-02T00:00:00Z",
      selects: ["NAME"],
    });
    expect(v2.status).toBe(200);
    expect((await json<{ items: { name: string }[] }>(v2)).items.map((r) => r.name)).toEqual([
      "fine",
      "quota",
      "mini",
      "tpm",
    ]);
    const listed = await call(`/api/v1/sessions?${ids.map((id) => `id=${id}`).join("&")}`, { key });
    expect(listed.status).toBe(200);
    expect((await json<{ name: string }[]>(listed)).map((p) => p.name).sort()).toEqual(["errors", "other"]);
  });

  it(`answers more than ${MAX_ID_LIST} ids with a 422 naming the field`, async () => {
    const ids = Array.from({ length: MAX_ID_LIST + 1 }, () => crypto.randomUUID());
    for (const [path, body] of [
      ["/api/v1/runs/query", { session: ids }],
      ["/api/v1/runs/stats", { session: ids }],
      ["/api/v2/runs/query", { project_ids: ids }],
    ] as const) {
      const response = await post(path, body);
      expect(response.status, path).toBe(422);
      expect(JSON.stringify(await response.json()), path).toMatch(/session|project_ids/);
    }
  });
});

describe("like() with patterns over SQLite's 50 bytes", () => {
  it("matches them exactly, wildcards and escapes included", async () => {
    const cases: [string, string[]][] = [
      ["%Rate limit reached for gpt-4o in organization % on tokens%", ["quota", "tpm"]],
      ["%rate LIMIT reached for GPT-4o-mini in organization org-abc on tokens per min", ["mini"]],
      ["100\\% of quota used: Rate limit reached for gpt-_o in organization org\\_%", ["quota"]],
      ["100\\% of quota used: Rate limit reached for gpt-_o in organization org-%", []],
      ["Rate limit reached for gpt-4o in organization org-abc on tokens per min%", []],
    ];
    for (const [pattern, expected] of cases) {
      const filter = `like(error, ${JSON.stringify(pattern)})`;
      expect(new TextEncoder().encode(pattern).byteLength, pattern).toBeGreaterThan(50);
      expect(await json<Validation>(await post("/api/v1/runs/query/validate", { filter }))).toEqual({
        valid: true,
        errors: [],
      });
      const page = await post("/api/v1/runs/query", { filter });
      expect(page.status, pattern).toBe(200);
      expect(names(await json<Page>(page)).sort(), pattern).toEqual(expected);
      const stats = await post("/api/v1/runs/stats", { filter });
      expect((await json<{ run_count: number }>(stats)).run_count, pattern).toBe(expected.length);
    }
  });
});

describe("like() over 50 bytes as a bulk-export filter", () => {
  it("selects the export page's rows in the shard, as the query does", async () => {
    const shard = env.TRACE_SHARD.getByName(traceShardName(workspaceId, projects.errors, "2026-10-01"));
    const { compiled, errors } = checkQueryFilters({
      filter: 'like(error, "%Rate limit reached for gpt-4o in organization % on tokens%")',
    });
    expect(errors).toEqual([]);
    const page = await shard.exportPage({
      start: "2026-10-01T00:00:00.000Z",
      end: "2026-10-02T00:00:00.000Z",
      filter: compiled.filter,
      limit: 10,
      maxBytes: 1 << 20,
      columns: shardColumns(["id", "name"]),
    });
    expect(JSON.parse((page.columns.name as { strings: string }).strings)).toEqual(["tpm", "quota"]);
  });
});

describe("validate and query share one check", () => {
  const repeat = (n: number, leaf: string) => Array(n).fill(leaf).join(", ");
  const nots = (n: number, leaf: string) => `${"not(".repeat(n)}${leaf}${")".repeat(n)}`;
  const longLike = 'like(input_value, "%weather in the north of the country, early in the morning%")';
  const valid: [string, string][] = [
    ["a comparison", 'eq(run_type, "llm")'],
    ["or() of 99 null comparisons", `or(${repeat(99, "eq(error, null)")})`],
    [`or() of ${MAX_FILTER_CONDITIONS} conditions`, `or(${repeat(MAX_FILTER_CONDITIONS, "eq(id, null)")})`],
    [
      `in() of ${MAX_FILTER_IN_VALUES} values`,
      `in(latency, [${Array.from({ length: MAX_FILTER_IN_VALUES }, (_, i) => i).join(", ")}])`,
    ],
    ["the deepest not() nesting, around a long like() on a map", nots(28, `and(eq(input_key, "q"), ${longLike})`)],
    ["80 values", `or(${Array.from({ length: 80 }, (_, i) => `eq(name, "n${i}")`).join(", ")})`],
  ];
  const refused: [string, string, string][] = [
    [
      `or() of ${MAX_FILTER_CONDITIONS + 1} conditions`,
      `or(${repeat(MAX_FILTER_CONDITIONS + 1, "eq(id, null)")})`,
      `expected filters with at most ${MAX_FILTER_CONDITIONS} conditions together, found ${MAX_FILTER_CONDITIONS + 1} conditions`,
    ],
    [
      "or() of 4,000 null comparisons",
      `or(${repeat(4000, "eq(id,null)")})`,
      `expected filters with at most ${MAX_FILTER_CONDITIONS} conditions together, found 4000 conditions`,
    ],
    [
      `in() of ${MAX_FILTER_IN_VALUES + 1} values`,
      `in(latency, [${Array.from({ length: MAX_FILTER_IN_VALUES + 1 }, (_, i) => i).join(", ")}])`,
      `expected in() with at most ${MAX_FILTER_IN_VALUES} values, found ${MAX_FILTER_IN_VALUES + 1} values`,
    ],
    ["not() nested too deep", nots(41, 'eq(name, "x")'), "at most 50 levels deep, found 51 levels"],
    [
      "81 values",
      `or(${Array.from({ length: 81 }, (_, i) => `eq(name, "n${i}")`).join(", ")})`,
      "values together, found 81 values",
    ],
    ["a syntax error", 'eq(name, "x"', "Invalid filter at position 12"],
  ];

  it.each(valid)("accepts %s on validate, /runs/query and /runs/stats alike", async (_, filter) => {
    for (const field of ["filter", "trace_filter", "tree_filter"]) {
      expect(await json<Validation>(await post("/api/v1/runs/query/validate", { [field]: filter }))).toEqual({
        valid: true,
        errors: [],
      });
      expect((await post("/api/v1/runs/query", { [field]: filter })).status, field).toBe(200);
      expect((await post("/api/v1/runs/stats", { [field]: filter })).status, field).toBe(200);
    }
  });

  it.each(refused)(
    "refuses %s on validate, /runs/query and /runs/stats with the same detail",
    async (_, filter, text) => {
      for (const field of ["filter", "tree_filter"]) {
        const validation = await json<Validation>(await post("/api/v1/runs/query/validate", { [field]: filter }));
        expect(validation.valid).toBe(false);
        expect(validation.errors).toHaveLength(1);
        const [error] = validation.errors;
        expect(error.field).toBe(field);
        expect(error.message).toContain(text);
        for (const path of ["/api/v1/runs/query", "/api/v1/runs/stats"]) {
          const response = await post(path, { [field]: filter });
          expect(response.status, path).toBe(400);
          expect((await json<{ detail: string }>(response)).detail, path).toBe(`${field}: ${error.message}`);
        }
      }
    },
  );

  it("runs the deepest filter of each kind it accepts in filter, trace_filter and tree_filter at once", async () => {
    const leaves = [
      'eq(name, "x")',
      'in(name, ["a", "b"])',
      'like(error, "%weather%")',
      `like(error, "%weather in the north of the country, early in the morning%")`,
      'and(eq(input_key, "q"), like(input_value, "%weather%"))',
      `and(eq(input_key, "q"), ${longLike})`,
      `like(metadata_value, "%weather in the north of the country, early in the morning%")`,
      'in(output_value, ["a", "b"])',
      'has(metadata, \'{"a": 1, "b": {"c": 2}}\')',
      'has(tags, "x")',
      'exists(metadata, "a")',
      'and(eq(feedback_key, "a"), gt(feedback_score, 1))',
      'search("abc")',
      'search(feedback_key, "abc")',
      'search(input_value, "abc")',
    ];
    for (const leaf of leaves) {
      let n = 0;
      const accepted = async (depth: number) =>
        (await json<Validation>(await post("/api/v1/runs/query/validate", { filter: nots(depth, leaf) }))).valid;
      while (await accepted(n + 1)) n++;
      const deepest = nots(n, leaf);
      // Every other condition of a query too, a cursor's included: the shards' statement is then deepest.
      const cursor = btoa(JSON.stringify(["2026-10-01T12:00:00.000000Z", "z"]));
      const body = { filter: deepest, trace_filter: deepest, tree_filter: deepest, query: "x", is_root: true };
      const conditions = {
        error: false,
        run_type: "llm",
        start_time: "2026-10-01T00:00:00Z",
        end_time: "2026-10-02",
        id: [crypto.randomUUID(), crypto.randomUUID()],
      };
      for (const [path, extra] of [
        ["/api/v1/runs/query", { ...conditions, cursor }],
        ["/api/v1/runs/query", { ...conditions, cursor, order: "asc" }],
        ["/api/v1/runs/stats", conditions],
      ] as const) {
        const response = await post(path, { ...body, ...extra });
        expect(response.status, `${path} ${n} × not(${leaf})`).toBe(200);
      }
    }
  });

  it("bounds the filters of one query together, and names the field that crosses", async () => {
    const half = `or(${Array.from({ length: 300 }, () => "eq(error, null)").join(", ")})`;
    const body = { filter: half, trace_filter: half };
    const validation = await json<Validation>(await post("/api/v1/runs/query/validate", body));
    expect(validation.errors.map((e) => e.field)).toEqual(["trace_filter"]);
    const response = await post("/api/v1/runs/query", body);
    expect(response.status).toBe(400);
    expect((await json<{ detail: string }>(response)).detail).toBe(`trace_filter: ${validation.errors[0].message}`);
  });
});

describe("pages bounded by bytes", () => {
  it("stops a page of large runs at QUERY_PAGE_BYTES with a cursor, and the cursors walk every run once", async () => {
    const pageBytes = queryBudget(env).pageBytes;
    expect(pageBytes).toBe(200_000);
    // Two projects on one day, interleaved: 14 runs of ~30 KB of inputs each (~420 KB in all).
    const ids: string[] = [];
    for (let i = 0; i < 14; i++) {
      const big = run(`big-${i}`, i % 2 ? "big-a" : "big-b", `2026-09-01T10:00:${String(i).padStart(2, "0")}.000Z`, {
        inputs: { text: `${i}`.padEnd(30_000, "x") },
      });
      ids.push(big.id);
      await ingest([big]);
    }
    const session = await json<{ id: string; name: string }[]>(await call("/api/v1/sessions", { key }));
    const bigProjects = session.filter((p) => p.name.startsWith("big-")).map((p) => p.id);
    for (const order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const response = await post("/api/v1/runs/query", { session: bigProjects, order, cursor });
        expect(response.status).toBe(200);
        const text = await response.text();
        // A page holds at most the byte budget, plus the one run it always holds.
        expect(text.length).toBeLessThan(pageBytes + 40_000);
        const page = JSON.parse(text) as Page;
        expect(page.runs.length).toBeGreaterThan(0);
        seen.push(...page.runs.map((r) => r.id));
        cursor = page.cursors.next;
        pages++;
      } while (cursor);
      expect(pages).toBeGreaterThan(1);
      expect(seen).toEqual(order === "desc" ? [...ids].reverse() : ids);
    }
  });
});

describe("pages over many projects of one day", () => {
  it("keeps what the shards answer within the page's bytes when every share is smaller than its next run", async () => {
    // Twelve projects on one day, one ~30 KB run each: a share (120 KB / 12) holds none of them.
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const wide = run(`wide-${i}`, `wide-${i}`, `2026-09-02T10:00:${String(i).padStart(2, "0")}.000Z`, {
        inputs: { text: `${i}`.padEnd(30_000, "x") },
      });
      ids.push(wide.id);
      await ingest([wide]);
    }
    const sessions = await json<{ id: string; name: string }[]>(await call("/api/v1/sessions", { key }));
    const wideProjects = sessions.filter((p) => p.name.startsWith("wide-")).map((p) => p.id);
    expect(wideProjects).toHaveLength(12);
    const budget = { shardCalls: 100, pageBytes: 120_000 };
    /** TRACE_SHARD, summing the characters its shards answer a page with. */
    const answered = { chars: 0 };
    const namespace = {
      getByName: (name: string) => {
        const shard = env.TRACE_SHARD.getByName(name);
        return {
          query: async (q: Parameters<TraceShardDO["query"]>[0]) => {
            const text = await shard.query(q);
            answered.chars += text.length;
            return text;
          },
        };
      },
    } as unknown as DurableObjectNamespace<TraceShardDO>;
    for (const order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        answered.chars = 0;
        const query = RunsQuerySchema.parse({ session: wideProjects, order, cursor });
        const page = await queryRuns(tracesDatabase(env, workspaceId), namespace, workspaceId, query, budget, env);
        // Before, each of the twelve shards answered its one run whatever its share: 360 KB.
        expect(answered.chars).toBeLessThan(budget.pageBytes + 40_000);
        expect(page.runs.length).toBeGreaterThan(0);
        seen.push(...page.runs.map((r) => String(r.id)));
        cursor = page.cursors.next ?? undefined;
      } while (cursor);
      expect(seen).toEqual(order === "desc" ? [...ids].reverse() : ids);
    }
  });
});

describe("shard calls per request", () => {
  /** TRACE_SHARD, counting the shards a request calls. */
  function counted() {
    const counter = { calls: 0 };
    const namespace = {
      getByName: (name: string) => {
        counter.calls++;
        return env.TRACE_SHARD.getByName(name);
      },
    } as unknown as DurableObjectNamespace<TraceShardDO>;
    return { counter, namespace };
  }

  it("knows the Free plan's budget and caps the page bytes", () => {
    expect(queryBudget({ WORKERS_PLAN: "free" }).shardCalls).toBe(SHARD_CALLS_PER_REQUEST.free);
    expect(queryBudget({}).shardCalls).toBe(SHARD_CALLS_PER_REQUEST.paid);
    expect(queryBudget({ QUERY_PAGE_BYTES: "999999999999" }).pageBytes).toBe(MAX_QUERY_PAGE_BYTES);
  });

  it("walks many project-days within the budget, returning what it found with a cursor that continues", async () => {
    // Two projects with a run on each of 12 days: 24 shards.
    const posts: Record<string, unknown>[] = [];
    for (let day = 1; day <= 12; day++)
      for (const project of ["walk-a", "walk-b"]) {
        const date = `2026-08-${String(day).padStart(2, "0")}T12:00:0${project === "walk-a" ? 0 : 1}.000Z`;
        posts.push(run(day === 1 && project === "walk-a" ? "needle" : `${project}-${day}`, project, date));
      }
    await ingest(posts);
    const db = tracesDatabase(env, workspaceId);
    const budget = { shardCalls: 5, pageBytes: 1 << 20 };
    const walkProjects = (await json<{ id: string; name: string }[]>(await call("/api/v1/sessions", { key })))
      .filter((p) => p.name.startsWith("walk-"))
      .map((p) => p.id);
    const walk = async (body: Record<string, unknown>) => {
      const found: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { counter, namespace } = counted();
        const query = RunsQuerySchema.parse({ session: walkProjects, ...body, cursor });
        const page = await queryRuns(db, namespace, workspaceId, query, budget, env);
        expect(counter.calls).toBeLessThanOrEqual(budget.shardCalls);
        found.push(...page.runs.map((r) => String(r.name)));
        cursor = page.cursors.next ?? undefined;
        pages++;
      } while (cursor);
      return { found, pages };
    };
    // A selective filter: pages come back empty but with a cursor until the needle's day.
    const needle = await walk({ filter: 'eq(name, "needle")' });
    expect(needle.found).toEqual(["needle"]);
    expect(needle.pages).toBe(6);
    const all = await walk({ limit: 100 });
    expect(all.found).toHaveLength(24);
    expect(all.found[0]).toBe("walk-b-12");
    expect(all.found.at(-1)).toBe("needle");
    const ascending = await walk({ limit: 100, order: "asc" });
    expect(ascending.found).toEqual([...all.found].reverse());
    // One day alone with more projects than the budget: narrow with session.
    await expect(
      queryRuns(
        db,
        counted().namespace,
        workspaceId,
        RunsQuerySchema.parse({ session: walkProjects }),
        {
          shardCalls: 1,
          pageBytes: 1 << 20,
        },
        env,
      ),
    ).rejects.toThrow("one request reads at most 1: narrow the query with session");
    // Stats read every shard at once, so they refuse past the budget.
    await expect(
      runStats(db, counted().namespace, workspaceId, RunsQuerySchema.parse({ session: walkProjects }), budget, env),
    ).rejects.toThrow("These filters cover 24 trace shards (project-days and their splits); run stats read at most 5");
  });
});
