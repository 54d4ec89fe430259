// /api/v1/feedback, feedback_stats and feedback filters on runs, and POST /api/v1/runs/stats, in workspaces of their own.
import { env } from "cloudflare:workers";
import { and, count, eq, isNull, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { traceFeedback } from "../../src/db/schema.ts";
import { tracesDatabase } from "../../src/tracing/directory.ts";
import { placeWaitingFeedback } from "../../src/tracing/feedback/service.ts";
import { call, json } from "./helpers.ts";

type Feedback = { id: string; run_id: string | null; key: string; score: number | null } & Record<string, unknown>;
type Run = { id: string; name: string; feedback_stats: Record<string, { n: number; avg: number | null }> | null };

let key: string;
let otherKey: string;
let projectId: string;

async function workspaceKey(name: string): Promise<string> {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: name } }),
  );
  return (
    await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }))
  ).key;
}

function sdkRun(name: string, start: string, fields: Record<string, unknown> = {}) {
  const id = crypto.randomUUID();
  const dotted_order = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
  return { id, name, run_type: "chain", start_time: start, dotted_order, trace_id: id, session_name: "fb", ...fields };
}

const runs = {
  fast: sdkRun("fast", "2026-11-20T10:00:00.000Z", {
    end_time: "2026-11-20T10:00:01.000Z",
    extra: { metadata: { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } },
  }),
  slow: sdkRun("slow", "2026-11-20T11:00:00.000Z", {
    end_time: "2026-11-20T11:00:03.000Z",
    error: "boom",
    events: [{ name: "new_token", time: "2026-11-20T11:00:00.500Z" }],
  }),
  other: sdkRun("other", "2026-11-21T09:00:00.000Z", { end_time: "2026-11-21T09:00:02.000Z" }),
};

const post = (path: string, body: unknown, as = key) => call(path, { method: "POST", key: as, json: body });
const query = async (body: Record<string, unknown>) => {
  const response = await post("/api/v1/runs/query", { session: [projectId], ...body });
  expect(response.status).toBe(200);
  return (await json<{ runs: Run[] }>(response)).runs;
};

beforeAll(async () => {
  key = await workspaceKey("Feedback tests");
  otherKey = await workspaceKey("Feedback tests, other workspace");
  const stored = await post("/api/v1/runs/batch", { post: Object.values(runs) });
  expect(stored.status).toBe(202);
  projectId = (await json<Run & { session_id: string }>(await call(`/api/v1/runs/${runs.fast.id}`, { key })))
    .session_id;
});

describe("feedback", () => {
  it("creates, reads, updates and deletes a feedback as the JS SDK sends it", async () => {
    const id = crypto.randomUUID();
    const created = await post("/api/v1/feedback", {
      id,
      run_id: runs.fast.id,
      key: "correctness",
      score: 1,
      value: "right",
      comment: "good",
      correction: null,
      feedback_source: { type: "api", metadata: {} },
      comparative_experiment_id: null,
      feedbackConfig: null,
      session_id: null,
      start_time: null,
    });
    expect(created.status).toBe(200);
    expect(await json(created)).toMatchObject({
      id,
      run_id: runs.fast.id,
      key: "correctness",
      score: 1,
      value: "right",
    });

    const read = await json<Feedback>(await call(`/api/v1/feedback/${id}`, { key }));
    expect(read).toMatchObject({ comment: "good", feedback_source: { type: "api" }, session_id: projectId });

    const updated = await call(`/api/v1/feedback/${id}`, {
      method: "PATCH",
      key,
      json: { score: 0, comment: null, correction: { answer: "x" } },
    });
    expect(updated.status).toBe(200);
    expect(await json(updated)).toMatchObject({ score: 0, comment: "good", correction: { answer: "x" } });

    expect((await call(`/api/v1/feedback/${id}`, { method: "DELETE", key })).status).toBe(200);
    expect((await call(`/api/v1/feedback/${id}`, { key })).status).toBe(404);
    expect((await call(`/api/v1/feedback/${id}`, { method: "DELETE", key })).status).toBe(404);
  });

  it("replaces a feedback sent again with the same id (SDK retries)", async () => {
    const id = crypto.randomUUID();
    const body = { id, run_id: runs.other.id, key: "retry", score: 0.5 };
    expect((await post("/api/v1/feedback", body)).status).toBe(200);
    expect((await post("/api/v1/feedback", { ...body, score: 0.25 })).status).toBe(200);
    const listed = await json<Feedback[]>(await call(`/api/v1/feedback?run=${runs.other.id}&key=retry`, { key }));
    expect(listed.map((f) => [f.id, f.score])).toEqual([[id, 0.25]]);
  });

  it("refuses bad bodies with 422", async () => {
    expect((await post("/api/v1/feedback", { run_id: runs.fast.id })).status).toBe(422);
    expect((await post("/api/v1/feedback", { key: "no-target" })).status).toBe(422);
    expect((await post("/api/v1/feedback", { run_id: "not-a-uuid", key: "k" })).status).toBe(422);
    expect((await post("/api/v1/feedback", { run_id: runs.fast.id, key: "k", score: "high" })).status).toBe(422);
    expect((await call("/api/v1/feedback/not-a-uuid", { key })).status).toBe(422);
    expect((await call("/api/v1/feedback?limit=500", { key })).status).toBe(422);
  });

  it("keeps feedback to its workspace: another workspace gets 404s and empty lists", async () => {
    const id = crypto.randomUUID();
    expect((await post("/api/v1/feedback", { id, run_id: runs.slow.id, key: "private", score: 1 })).status).toBe(200);
    expect((await call(`/api/v1/feedback/${id}`, { key: otherKey })).status).toBe(404);
    expect((await call(`/api/v1/feedback/${id}`, { method: "PATCH", key: otherKey, json: { score: 0 } })).status).toBe(
      404,
    );
    expect((await call(`/api/v1/feedback/${id}`, { method: "DELETE", key: otherKey })).status).toBe(404);
    expect(await json(await call(`/api/v1/feedback?run=${runs.slow.id}`, { key: otherKey }))).toEqual([]);
    // A project of another workspace cannot be named either.
    expect((await post("/api/v1/feedback", { session_id: projectId, key: "x" }, otherKey)).status).toBe(404);
    // The same id is free in another workspace and stays separate.
    expect(
      (await post("/api/v1/feedback", { id, session_id: null, run_id: runs.slow.id, key: "mine" }, otherKey)).status,
    ).toBe(200);
    expect((await json<Feedback>(await call(`/api/v1/feedback/${id}`, { key }))).key).toBe("private");
  });

  it("lists by run, key and source with offset paging, newest first", async () => {
    const ids: string[] = [];
    for (const score of [1, 0, 1]) {
      const id = crypto.randomUUID();
      ids.push(id);
      await post("/api/v1/feedback", { id, run_id: runs.slow.id, key: "paged", score });
    }
    await post("/api/v1/feedback", {
      run_id: runs.slow.id,
      key: "paged",
      score: 1,
      feedback_source: { type: "model", metadata: {} },
    });
    const first = await json<Feedback[]>(
      await call(`/api/v1/feedback?run=${runs.slow.id}&key=paged&source=api&limit=2&offset=0`, { key }),
    );
    const second = await json<Feedback[]>(
      await call(`/api/v1/feedback?run=${runs.slow.id}&key=paged&source=api&limit=2&offset=2`, { key }),
    );
    expect([...first, ...second].map((f) => f.id).sort()).toEqual([...ids].sort());
    expect(first).toHaveLength(2);
    const models = await json<Feedback[]>(await call(`/api/v1/feedback?key=paged&source=model`, { key }));
    expect(models).toHaveLength(1);
    const both = await json<Feedback[]>(
      await call(`/api/v1/feedback?run=${runs.slow.id}&run=${runs.other.id}&key=paged&key=retry`, { key }),
    );
    expect(both).toHaveLength(5);
  });

  it("counts feedback sent before its run once the run is posted", async () => {
    const late = sdkRun("late", "2026-11-22T08:00:00.000Z");
    const id = crypto.randomUUID();
    expect((await post("/api/v1/feedback", { id, run_id: late.id, key: "early-bird", score: 1 })).status).toBe(200);
    expect((await post("/api/v1/runs/batch", { post: [late] })).status).toBe(202);
    const run = await json<Run>(await call(`/api/v1/runs/${late.id}`, { key }));
    expect(run.feedback_stats).toMatchObject({ "early-bird": { n: 1, avg: 1 } });
    expect((await query({ filter: 'eq(feedback_key, "early-bird")' })).map((r) => r.name)).toEqual(["late"]);
    expect((await json<Feedback>(await call(`/api/v1/feedback/${id}`, { key }))).session_id).toBe(projectId);
    expect((await call(`/api/v1/feedback/${id}`, { method: "DELETE", key })).status).toBe(200);
  });

  it("places feedback another isolate stored while ingestion here trusted that none waited, on the minute sweep", async () => {
    // An ingest finds no feedback waiting in this workspace and trusts that for a few seconds.
    // A project of its own, so the other tests' run lists stay as they are.
    const warmUp = sdkRun("warm-up", "2026-11-22T07:00:00.000Z", { session_name: "fb-sweep" });
    expect((await post("/api/v1/runs/batch", { post: [warmUp] })).status).toBe(202);
    const sweepProject = (await json<{ session_id: string }>(await call(`/api/v1/runs/${warmUp.id}`, { key })))
      .session_id;
    const swept = async () => {
      const response = await post("/api/v1/runs/query", {
        session: [sweepProject],
        filter: 'eq(feedback_key, "swept-key")',
      });
      return (await json<{ runs: Run[] }>(response)).runs.map((r) => r.name);
    };
    const late = sdkRun("swept", "2026-11-22T09:00:00.000Z", { session_name: "fb-sweep" });
    const workspaces = await json<{ id: string; display_name: string }[]>(await call("/api/v1/workspaces"));
    const workspaceId = workspaces.find((w) => w.display_name === "Feedback tests")!.id;
    const now = new Date().toISOString();
    // What another isolate's POST /feedback writes for a run not stored yet.
    const traces = tracesDatabase(env, workspaceId);
    await traces.run(
      sql`INSERT INTO trace_feedback (id, workspace_id, run_id, key, score, created_at, modified_at) VALUES (${crypto.randomUUID()}, ${workspaceId}, ${late.id}, 'swept-key', 1, ${now}, ${now})`,
    );
    expect((await post("/api/v1/runs/batch", { post: [late] })).status).toBe(202);
    expect(await swept()).toEqual([]);

    // The workspace's traces partition's alarm places it.
    const partition = { workspaceId, kind: "traces" } as const;
    await placeWaitingFeedback(env, partition, traces);
    expect(await swept()).toEqual(["swept"]);
    const waiting = await traces
      .select({ n: count() })
      .from(traceFeedback)
      .where(and(eq(traceFeedback.runId, late.id), isNull(traceFeedback.day)));
    expect(waiting).toEqual([{ n: 0 }]);
  });

  it("shows feedback_stats on read and query, and filters runs by feedback_key/feedback_score", async () => {
    await post("/api/v1/feedback", { run_id: runs.fast.id, key: "thumbs", score: 1 });
    await post("/api/v1/feedback", { run_id: runs.fast.id, key: "thumbs", score: 0 });
    await post("/api/v1/feedback", { run_id: runs.slow.id, key: "thumbs", score: 0 });
    const run = await json<Run>(await call(`/api/v1/runs/${runs.fast.id}`, { key }));
    expect(run.feedback_stats?.thumbs).toMatchObject({ n: 2, avg: 0.5 });

    const listed = await query({ filter: 'eq(feedback_key, "thumbs")' });
    expect(listed.map((r) => r.name).sort()).toEqual(["fast", "slow"]);
    expect(listed.find((r) => r.name === "slow")?.feedback_stats?.thumbs).toMatchObject({ n: 1, avg: 0 });
    const liked = await query({ filter: 'and(eq(feedback_key, "thumbs"), eq(feedback_score, 1))' });
    expect(liked.map((r) => r.name)).toEqual(["fast"]);
    // "other" has only a 0.25 ("retry"); "slow" has 1s under other keys.
    const scored = await query({ filter: "gt(feedback_score, 0.3)" });
    expect(scored.map((r) => r.name).sort()).toEqual(["fast", "slow"]);
    const none = await query({ filter: 'not(eq(feedback_key, "thumbs"))' });
    expect(none.map((r) => r.name)).toEqual(["late", "other"]);
    const traced = await query({ trace_filter: 'and(eq(feedback_key, "thumbs"), eq(feedback_score, 1))' });
    expect(traced.map((r) => r.name)).toEqual(["fast"]);
    expect((await post("/api/v1/runs/query", { filter: 'eq(feedback_score, "high")' })).status).toBe(400);
  });
});

describe("POST /api/v1/runs/stats", () => {
  it("answers LangSmith's stats over the runs a query matches", async () => {
    const response = await post("/api/v1/runs/stats", {
      session: [projectId],
      start_time: "2026-11-20T00:00:00Z",
      end_time: "2026-11-21T23:59:59Z",
    });
    expect(response.status).toBe(200);
    const stats = await json<Record<string, unknown>>(response);
    expect(stats).toMatchObject({
      run_count: 3,
      latency_p50: 2,
      latency_avg: 2,
      total_tokens: 15,
      prompt_tokens: 10,
      completion_tokens: 5,
      error_rate: 1 / 3,
      streaming_rate: 1 / 3,
    });
    expect(stats.last_run_start_time).toMatch(/^2026-11-21T09:00:00/);
    expect(stats.first_token_p50).toBeCloseTo(0.5, 3);
    expect(stats.latency_p99).toBeCloseTo(2.98);
    expect(stats.feedback_stats).toHaveProperty("thumbs");
  });

  it("takes the filters of /runs/query, feedback included", async () => {
    const day = await json<{ run_count: number }>(
      await post("/api/v1/runs/stats", {
        session: [projectId],
        start_time: "2026-11-20T00:00:00Z",
        end_time: "2026-11-20T23:59:59Z",
      }),
    );
    expect(day.run_count).toBe(2);
    const errors = await json<{ run_count: number; error_rate: number }>(
      await post("/api/v1/runs/stats", { session: [projectId], error: true }),
    );
    expect(errors).toMatchObject({ run_count: 1, error_rate: 1 });
    const liked = await json<{ run_count: number }>(
      await post("/api/v1/runs/stats", {
        session: [projectId],
        filter: 'and(eq(feedback_key, "thumbs"), eq(feedback_score, 1))',
      }),
    );
    expect(liked.run_count).toBe(1);
    expect((await post("/api/v1/runs/stats", { session: [projectId], filter: "eq(name" })).status).toBe(400);
  });

  it("counts nothing of another workspace", async () => {
    const stats = await json<{ run_count: number; latency_p50: number | null }>(
      await post("/api/v1/runs/stats", { session: [projectId] }, otherKey),
    );
    expect(stats).toMatchObject({ run_count: 0, latency_p50: null });
  });
});

describe("feedback as the Python SDK sends it", () => {
  it("accepts create_feedback's body (model_dump without nulls) and reads back what its Feedback model needs", async () => {
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    const response = await post("/api/v1/feedback", {
      id,
      created_at: now,
      modified_at: now,
      run_id: runs.other.id,
      trace_id: runs.other.id,
      key: "py-score",
      score: true,
      feedback_source: { type: "api", metadata: { __run: { run_id: runs.fast.id } } },
      extend_trace_retention: false,
    });
    expect(response.status).toBe(200);
    const read = await json<Feedback>(await call(`/api/v1/feedback/${id}`, { key }));
    expect(read).toMatchObject({
      id,
      run_id: runs.other.id,
      trace_id: runs.other.id,
      key: "py-score",
      score: 1,
      feedback_source: { type: "api", metadata: { __run: { run_id: runs.fast.id } } },
    });
    for (const field of ["created_at", "modified_at", "value", "comment", "correction", "session_id"])
      expect(read).toHaveProperty(field);
    // list_feedback: run, limit and offset, key and source as repeated parameters.
    const listed = await json<Feedback[]>(
      await call(`/api/v1/feedback?run=${runs.other.id}&limit=100&offset=0&key=py-score&source=api`, { key }),
    );
    expect(listed.map((f) => f.id)).toEqual([id]);
  });

  it("stores a multipart feedback.<id> part holding the full FeedbackCreate dump with its nulls", async () => {
    const id = crypto.randomUUID();
    const body = JSON.stringify({
      id,
      created_at: new Date().toISOString(),
      modified_at: new Date().toISOString(),
      run_id: runs.fast.id,
      trace_id: runs.fast.id,
      key: "py-multipart",
      score: 0.5,
      value: null,
      comment: null,
      correction: null,
      feedback_source: { type: "api", metadata: {}, user_id: null },
      session_id: null,
      start_time: null,
      comparative_experiment_id: null,
      feedback_group_id: null,
      extra: null,
      feedback_config: null,
      error: null,
    });
    const boundary = "----LangSmithFormBoundary1234";
    const multipart = [
      `--${boundary}`,
      `Content-Disposition: form-data; name="feedback.${id}"`,
      "Content-Type: application/json",
      `Content-Length: ${body.length}`,
      "",
      body,
      `--${boundary}--`,
      "",
    ].join("\r\n");
    const response = await call("/api/v1/runs/multipart", {
      method: "POST",
      key,
      body: multipart,
      headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
    });
    expect(response.status).toBe(202);
    expect(await json(response)).toEqual({ accepted: 1, errors: [] });
    const run = await json<Run>(await call(`/api/v1/runs/${runs.fast.id}`, { key }));
    expect(run.feedback_stats?.["py-multipart"]).toMatchObject({ n: 1, avg: 0.5 });
  });

  it("answers get_run_stats' body (None values left out)", async () => {
    const response = await post("/api/v1/runs/stats", {
      session: [projectId],
      is_root: true,
      filter: 'eq(name, "fast")',
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ run_count: 1, latency_p50: 1 });
  });
});
