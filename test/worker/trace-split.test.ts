// Trace shards split before they grow large: generations by trace root time × hash buckets.
import { env } from "cloudflare:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm/esm";
import { describe, expect, it } from "vitest";
import { TRACE_GENERATION_MARGIN_MS } from "../../src/core/limits.ts";
import {
  EXPORT_PLAN_MESSAGE,
  EXPORT_PLAN_PAGE_MESSAGE,
  enqueueExportPlans,
  exportTick,
} from "../../src/export/planner.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { tracesDatabase } from "../../src/tracing/directory.ts";
import { generationsOf, openGeneration } from "../../src/tracing/generations.ts";
import { Ingestor } from "../../src/tracing/ingest.ts";
import type { RunPatch, RunPost } from "../../src/tracing/schemas.ts";
import { placeTrace, rootTimeOf, splitsOfDay } from "../../src/tracing/splits.ts";
import { traceShardName } from "../../src/tracing/trace-shard-do.ts";
import { tickExports } from "./export-tick.ts";
import { call, completedExport, json } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

const stamp = (iso: string) => `${iso.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z`;

/** A trace: its root at `rootAt` and children at the given times, with LangSmith's dotted orders. */
function trace(project: string, rootAt: string, childTimes: string[] = []): RunPost[] {
  const rootId = crypto.randomUUID();
  const rootOrder = `${stamp(rootAt)}${rootId}`;
  const base = { run_type: "chain", session_name: project, trace_id: rootId } as const;
  return [
    { ...base, id: rootId, name: "root", start_time: rootAt, dotted_order: rootOrder },
    ...childTimes.map((at) => {
      const id = crypto.randomUUID();
      return {
        ...base,
        id,
        name: "child",
        start_time: at,
        parent_run_id: rootId,
        dotted_order: `${rootOrder}.${stamp(at)}${id}`,
      };
    }),
  ] as RunPost[];
}

/** An Ingestor whose shards split past `splitBytes` (and refuse past `capBytes`), at the clock `now`. */
const ingestor = (now: number, vars: { split?: number; cap?: number; calls?: number } = {}) =>
  new Ingestor(tracesDatabase(env, DEFAULT_WORKSPACE_ID), env.TRACE_SHARD, DEFAULT_WORKSPACE_ID, {
    maxRunBytes: 32 * 1024,
    env: Object.assign({}, env, {
      TRACE_SHARD_SPLIT_BYTES: String(vars.split ?? 1),
      TRACE_SHARD_CAP_BYTES: String(vars.cap ?? 8 * 1024 ** 3),
      TRACE_SHARD_SPLIT_CALLS: String(vars.calls ?? 250),
    }),
    now: () => now,
  });

async function projectId(name: string): Promise<string> {
  const [project] = await json<{ id: string }[]>(await call(`/api/v1/sessions?name=${name}`));
  return project.id;
}

/** Every run of a query, following its cursors, with the number of pages. */
async function walk(body: Record<string, unknown>): Promise<{ ids: string[]; times: string[]; pages: number }> {
  const ids: string[] = [];
  const times: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response = await post("/api/v1/runs/query", { ...body, ...(cursor ? { cursor } : {}) });
    expect(response.status).toBe(200);
    const page = await json<{ runs: { id: string; start_time: string }[]; cursors: { next: string | null } }>(response);
    ids.push(...page.runs.map((run) => run.id));
    times.push(...page.runs.map((run) => run.start_time));
    cursor = page.cursors.next;
    pages++;
  } while (cursor && pages < 100);
  return { ids, times, pages };
}

describe("trace shard splits", () => {
  it("places a trace by its root's time and id, the same for every run and patch of it", () => {
    const generations = [{ generation: 1, buckets: 2, from: Date.parse("2026-11-20T10:00:00Z") }];
    const [root, child] = trace("p", "2026-11-20T09:59:59.000Z", ["2026-11-20T11:00:00.000Z"]);
    expect(rootTimeOf(child)).toBe(Date.parse("2026-11-20T09:59:59.000Z"));
    expect(placeTrace("2026-11-20", generations, rootTimeOf(child)!, root.id)).toBe("2026-11-20");
    const later = trace("p", "2026-11-20T10:00:00.000Z", ["2026-11-20T10:00:01.000Z"]);
    const [a, b] = later.map((run) => placeTrace("2026-11-20", generations, rootTimeOf(run)!, run.trace_id!));
    expect(a).toMatch(/^2026-11-20\/1\.[01]$/);
    expect(b).toBe(a);
    expect(splitsOfDay("2026-11-20", generations)).toEqual(["2026-11-20", "2026-11-20/1.0", "2026-11-20/1.1"]);
  });

  it("rolls a project-day over past the split size; every run stays readable by id, query, trace, stats and export", async () => {
    const name = `split-${crypto.randomUUID()}`;
    const day = "2026-06-10";
    const t0 = Date.parse(`${day}T08:00:00Z`);
    // A trace rooted before the split, whose later runs and patches come after it.
    const early = trace(name, `${day}T07:00:00.000Z`, [`${day}T07:00:01.000Z`]);
    expect(await ingestor(t0).ingest(early, [])).toEqual({ accepted: 2, errors: [] });
    const project = await projectId(name);
    // The shard passed the (1 byte) split size: generation 1 starts a margin after now.
    const opened = (await generationsOf(env, DEFAULT_WORKSPACE_ID, [{ projectId: project, day }], { fresh: true })).get(
      `${project}/${day}`,
    );
    expect(opened).toEqual([{ generation: 1, buckets: 2, from: t0 + TRACE_GENERATION_MARGIN_MS }]);

    // Traces rooted after the split, in two requests an hour apart (the second opens generation 2).
    const late: RunPost[][] = [];
    for (let i = 0; i < 6; i++) late.push(trace(name, `${day}T09:0${i}:00.000Z`, [`${day}T09:0${i}:30.000Z`]));
    const later: RunPost[][] = [];
    for (let i = 0; i < 6; i++) later.push(trace(name, `${day}T11:0${i}:00.000Z`, [`${day}T11:0${i}:30.000Z`]));
    // (The clock is past each request's roots, as a server's is past its clients'.)
    expect((await ingestor(t0 + 70 * 60_000).ingest(late.flat(), [])).errors).toEqual([]);
    expect((await ingestor(t0 + 190 * 60_000).ingest(later.flat(), [])).errors).toEqual([]);
    // The early trace goes on after the splits: a new child, and a patch of its root naming only
    // what the SDK sends (its dotted_order), with no post in the request.
    const [earlyRoot] = early;
    const [lateChild] = trace(name, `${day}T07:00:00.000Z`, [`${day}T12:00:00.000Z`]).slice(1);
    const continued: RunPost = {
      ...lateChild,
      trace_id: earlyRoot.id,
      parent_run_id: earlyRoot.id,
      dotted_order: `${earlyRoot.dotted_order}.${stamp(`${day}T12:00:00.000Z`)}${lateChild.id}`,
    };
    const patch: RunPatch = {
      id: earlyRoot.id,
      trace_id: earlyRoot.id,
      dotted_order: earlyRoot.dotted_order,
      session_name: name,
      end_time: `${day}T12:30:00.000Z`,
      outputs: { done: true },
    } as RunPatch;
    // Children's patches naming their project and start time but not their dotted_order cannot tell
    // their trace root: the run locator says where each went (by its own time and id, most would
    // land in another split and wait there forever).
    const children = late.map((t) => t[1]);
    const bare = children.map((child) => ({
      id: child.id,
      session_name: name,
      start_time: child.start_time,
      end_time: `${day}T12:00:00.000Z`,
    }));
    expect(await ingestor(t0 + 250 * 60_000).ingest([continued], [patch, ...(bare as RunPatch[])])).toEqual({
      accepted: 2 + bare.length,
      errors: [],
    });
    for (const child of children)
      expect((await json<{ end_time: string }>(await call(`/api/v1/runs/${child.id}`))).end_time).toMatch(/T12:00:00/);

    const generations =
      (await generationsOf(env, DEFAULT_WORKSPACE_ID, [{ projectId: project, day }], { fresh: true })).get(
        `${project}/${day}`,
      ) ?? [];
    expect(generations.map((g) => [g.generation, g.buckets])).toEqual([
      [1, 2],
      [2, 4],
      [3, 8],
    ]);
    // The early trace stayed whole in generation 0, its patch applied there.
    const first = env.TRACE_SHARD.getByName(traceShardName(DEFAULT_WORKSPACE_ID, project, day));
    const stored = JSON.parse((await first.get(earlyRoot.id))!) as { end_time: string; outputs: unknown };
    expect(stored).toMatchObject({ end_time: expect.stringMatching(/T12:30:00/), outputs: { done: true } });
    expect(await first.get(continued.id)).not.toBeNull();
    // The later traces are spread over more than one split.
    const holding = new Set<string>();
    for (const split of splitsOfDay(day, generations).slice(1)) {
      const shard = env.TRACE_SHARD.getByName(traceShardName(DEFAULT_WORKSPACE_ID, project, split));
      const page = JSON.parse(await shard.query({ limit: 100, maxBytes: 1_000_000 })) as { runs: unknown[] };
      if (page.runs.length) holding.add(split);
    }
    expect(holding.size).toBeGreaterThan(1);

    const all = [...early, ...late.flat(), ...later.flat(), continued];
    for (const run of all) expect((await call(`/api/v1/runs/${run.id}`)).status).toBe(200);

    // Paged queries over every split, both orders: every run once, in order.
    const desc = await walk({ session: [project], limit: 3 });
    expect(desc.ids.sort()).toEqual(all.map((run) => run.id).sort());
    expect(desc.pages).toBeGreaterThan(3);
    const asc = await walk({ session: [project], limit: 4, order: "asc" });
    expect(asc.ids.length).toBe(all.length);
    expect(new Set(asc.ids).size).toBe(all.length);
    expect(asc.times).toEqual([...asc.times].sort());
    expect(desc.times).toEqual([...desc.times].sort().reverse());

    // A trace read: the trace's bucket in each generation.
    const tree = await walk({ trace: earlyRoot.id, limit: 100 });
    expect(tree.ids.sort()).toEqual([earlyRoot.id, early[1].id, continued.id].sort());
    const lateTree = await walk({ trace: later[3][0].id, limit: 100 });
    expect(lateTree.ids.sort()).toEqual(later[3].map((run) => run.id).sort());

    const stats = await json<{ run_count: number }>(await post("/api/v1/runs/stats", { session: [project] }));
    expect(stats.run_count).toBe(all.length);

    // The day's export reads every split into the day's one partition.
    const destination = await json<{ id: string }>(
      await post("/api/v1/bulk-exports/destinations", {
        display_name: "split lake",
        config: { bucket_name: "exports", prefix: `split-${project}/`, r2_binding: "EXPORT_TEST_BUCKET" },
      }),
    );
    const exported = await json<{ id: string }>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destination.id,
        session_id: project,
        start_time: `${day}T00:00:00Z`,
        end_time: "2026-06-11T00:00:00Z",
      }),
    );
    await tickExports(env, new Date("2026-06-11T01:00:00Z"));
    await completedExport(exported.id);
    const files = (await env.EXPORT_TEST_BUCKET.list({ prefix: "workspaces/" })).objects
      .map((o) => o.key)
      .filter((key) => key.includes(`export_id=${exported.id}/`) && key.endsWith(".parquet"));
    expect(new Set(files.map((key) => key.replace(/\/part-.*$/, ""))).size).toBe(1);
    const exportedIds: string[] = [];
    for (const key of files) {
      const bytes = new Uint8Array(await (await env.EXPORT_TEST_BUCKET.get(key))!.arrayBuffer());
      const table = tableFromIPC(readParquet(bytes).intoIPCStream());
      exportedIds.push(...(table.getChild("id")!.toArray() as string[]));
    }
    expect(exportedIds.sort()).toEqual(all.map((run) => run.id).sort());
  });

  it("opens a generation under load however small the shard, up to MAX_LOAD_SPLIT_BUCKETS", async () => {
    const name = `busy-${crypto.randomUUID()}`;
    const day = "2026-06-14";
    const t0 = Date.parse(`${day}T08:00:00Z`);
    const busy = (now: number) => ingestor(now, { split: 8 * 1024 ** 3, calls: 0 });
    expect((await busy(t0).ingest(trace(name, `${day}T07:59:00.000Z`), [])).errors).toEqual([]);
    const project = await projectId(name);
    const read = async () =>
      (await generationsOf(env, DEFAULT_WORKSPACE_ID, [{ projectId: project, day }], { fresh: true })).get(
        `${project}/${day}`,
      ) ?? [];
    expect(await read()).toEqual([{ generation: 1, buckets: 2, from: t0 + TRACE_GENERATION_MARGIN_MS }]);
    // Not by the size: the same shard under the default call rate opens nothing more.
    await ingestor(t0 + 1000, { split: 8 * 1024 ** 3 }).ingest(trace(name, `${day}T08:00:40.000Z`), []);
    expect(await read()).toHaveLength(1);
    // Load alone stops at 64 buckets: a day whose newest generation has them opens no other.
    for (let g = 2; g <= 6; g++)
      await openGeneration(
        env,
        DEFAULT_WORKSPACE_ID,
        { projectId: project, day },
        { generation: g, buckets: 2 ** g, from: t0 + g * 60_000 },
      );
    await busy(t0 + 3_600_000).ingest(trace(name, `${day}T08:59:00.000Z`), []);
    expect((await read()).map((g) => g.buckets)).toEqual([2, 4, 8, 16, 32, 64]);
  });

  it("sends a patch where the run index says when its trace's root was placed before its generation was known", async () => {
    const name = `skew-${crypto.randomUUID()}`;
    const day = "2026-06-15";
    const t0 = Date.parse(`${day}T08:00:00Z`);
    // A client clock 10 minutes ahead: the root starts "later" than the server's now.
    const [root] = trace(name, `${day}T08:10:00.000Z`);
    expect((await ingestor(t0, { split: 8 * 1024 ** 3 }).ingest([root], [])).errors).toEqual([]);
    const project = await projectId(name);
    // Meanwhile a generation opens that the root's time falls in: the patch, placed by its dotted
    // order, goes to that generation, where the run is not.
    await openGeneration(
      env,
      DEFAULT_WORKSPACE_ID,
      { projectId: project, day },
      { generation: 1, buckets: 2, from: t0 + 60_000 },
    );
    const patch = {
      id: root.id,
      trace_id: root.id,
      dotted_order: root.dotted_order,
      session_name: name,
      end_time: `${day}T08:11:00.000Z`,
    };
    expect(await ingestor(t0 + 120_000, { split: 8 * 1024 ** 3 }).ingest([], [patch as RunPatch])).toEqual({
      accepted: 1,
      errors: [],
    });
    expect((await json<{ end_time: string }>(await call(`/api/v1/runs/${root.id}`))).end_time).toMatch(/T08:11:00/);
  });

  it("agrees on a generation two isolates open at once", async () => {
    const projectDay = { projectId: crypto.randomUUID(), day: "2026-06-11" };
    const [a, b] = await Promise.all([
      openGeneration(env, DEFAULT_WORKSPACE_ID, projectDay, { generation: 1, buckets: 2, from: 1000 }),
      openGeneration(env, DEFAULT_WORKSPACE_ID, projectDay, { generation: 1, buckets: 2, from: 2000 }),
    ]);
    expect(a).toEqual(b);
    expect(a).toHaveLength(1);
    expect([1000, 2000]).toContain(a[0].from);
  });

  it("does not open a generation for a past day: only the cap bounds a backfill", async () => {
    const name = `backfill-${crypto.randomUUID()}`;
    const day = "2026-06-12";
    await ingestor(Date.parse("2026-06-20T00:00:00Z")).ingest(trace(name, `${day}T10:00:00.000Z`), []);
    const project = await projectId(name);
    expect(
      (await generationsOf(env, DEFAULT_WORKSPACE_ID, [{ projectId: project, day }], { fresh: true })).get(
        `${project}/${day}`,
      ),
    ).toEqual([]);
  });

  it("refuses new runs of a shard at its cap with a 503 detail, and still applies patches of its runs", async () => {
    const name = `capped-${crypto.randomUUID()}`;
    const day = "2026-06-13";
    const now = Date.parse("2026-06-20T00:00:00Z");
    const [stored] = trace(name, `${day}T10:00:00.000Z`);
    expect(await ingestor(now, { split: 1, cap: 8 * 1024 ** 3 }).ingest([stored], [])).toEqual({
      accepted: 1,
      errors: [],
    });
    const full = ingestor(now, { split: 1, cap: 1 });
    const refused = await full.ingest(trace(name, `${day}T10:05:00.000Z`), [
      { id: stored.id, session_name: name, dotted_order: stored.dotted_order, end_time: `${day}T10:10:00.000Z` },
    ] as RunPatch[]);
    expect(refused.accepted).toBe(1);
    expect(refused.errors).toEqual([
      {
        operation: "post",
        run_id: expect.any(String),
        kind: "unavailable",
        detail: expect.stringContaining("at its cap of 1 (TRACE_SHARD_CAP_BYTES)"),
      },
    ]);
    const run = await json<{ end_time: string }>(await call(`/api/v1/runs/${stored.id}`));
    expect(run.end_time).toMatch(/T10:10:00/);
  });

  it("plans exports with one queue message per workspace, continuing on the queue past a page", async () => {
    const db = env.DB;
    const columns = (await db.prepare("PRAGMA table_info(bulk_exports)").all<{ name: string }>()).results.map(
      (c) => c.name,
    );
    // 1,001 scheduled exports, one per workspace: more than one invocation enqueues.
    const values = columns.map((c) =>
      c === "id"
        ? "'plan-' || i"
        : c === "workspace_id"
          ? "'ws-plan-' || printf('%05d', i)"
          : c === "status"
            ? "'Created'"
            : `(SELECT ${c} FROM seed)`,
    );
    const destination = await json<{ id: string }>(
      await post("/api/v1/bulk-exports/destinations", {
        display_name: "plan",
        config: { bucket_name: "exports", r2_binding: "EXPORT_TEST_BUCKET" },
      }),
    );
    const project = await json<{ id: string }>(await post("/api/v1/sessions", { name: `plan-${crypto.randomUUID()}` }));
    const seed = await json<{ id: string }>(
      await post("/api/v1/bulk-exports", {
        bulk_export_destination_id: destination.id,
        session_id: project.id,
        start_time: "2020-01-01T00:00:00Z",
        end_time: "2020-01-02T00:00:00Z",
      }),
    );
    await db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001),
           seed AS (SELECT * FROM bulk_exports WHERE id = ?)
         INSERT INTO bulk_exports (${columns.join(", ")}) SELECT ${values.join(", ")} FROM n`,
      )
      .bind(seed.id)
      .run();
    const sent: { kind: string; workspaceId?: string; after?: string }[] = [];
    const batches: number[] = [];
    const queue = {
      send: async (body: { kind: string }) => void sent.push(body),
      sendBatch: async (batch: { body: { kind: string; workspaceId: string } }[]) => {
        batches.push(batch.length);
        sent.push(...batch.map((m) => m.body));
      },
    };
    await exportTick(Object.assign({}, env, { QUEUE: queue as unknown as Queue }), new Date("2020-01-03T00:00:00Z"));
    const plans = sent.filter((m) => m.kind === EXPORT_PLAN_MESSAGE);
    expect(plans).toHaveLength(1000);
    expect(new Set(plans.map((m) => m.workspaceId)).size).toBe(1000);
    expect(Math.max(...batches)).toBeLessThanOrEqual(100);
    const pages = sent.filter((m) => m.kind === EXPORT_PLAN_PAGE_MESSAGE);
    expect(pages).toHaveLength(1);
    // The page message enqueues the workspaces after the first thousand.
    sent.length = 0;
    await enqueueExportPlans(
      Object.assign({}, env, { QUEUE: queue as unknown as Queue }),
      new Date("2020-01-03T00:00:00Z"),
      pages[0].after!,
    );
    expect(sent.map((m) => m.workspaceId)).toContain("ws-plan-01001");
    expect(sent.map((m) => m.workspaceId)).not.toContain(plans[0].workspaceId);
    await db.prepare("DELETE FROM bulk_exports WHERE id LIKE 'plan-%'").run();
  });
});
