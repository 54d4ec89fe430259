// Ingestion through /api/v1/runs, /runs/{id} and /runs/batch, read back with GET /api/v1/runs/{id}.
import { describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

type Run = Record<string, unknown> & { id: string; status: string; session_id: string };

/** A run as the JS SDK builds it: dotted_order from the parent's, start time with microseconds. */
function sdkRun(
  name: string,
  start: Date,
  parent?: { id: string; dotted_order: string; trace_id: string },
  extra: Record<string, unknown> = {},
) {
  const id = crypto.randomUUID();
  const stamp = start.toISOString().replace(/[-:]/g, "").replace(".", "").replace("Z", "");
  const segment = `${stamp}000Z${id}`;
  return {
    id,
    name,
    run_type: "chain",
    start_time: start.toISOString().replace("Z", "000Z"),
    dotted_order: parent ? `${parent.dotted_order}.${segment}` : segment,
    trace_id: parent?.trace_id ?? id,
    parent_run_id: parent?.id,
    inputs: { question: name },
    ...extra,
  };
}

const getRun = async (id: string, key?: string) => call(`/api/v1/runs/${id}`, { key });

describe("tracing ingestion", () => {
  it("writes runs named by project to a project made again after a delete or a rename, never to the old one", async () => {
    const name = `reused-${crypto.randomUUID()}`;
    const post = async () => {
      const run = sdkRun("root", new Date("2026-11-20T10:00:00Z"), undefined, { session_name: name });
      expect((await call("/api/v1/runs", { method: "POST", json: run })).status).toBe(202);
      return (await json<Run>(await getRun(run.id))).session_id;
    };
    const projectNamed = async () => (await json<{ id: string }[]>(await call(`/api/v1/sessions?name=${name}`)))[0]?.id;

    const first = await post();
    expect(await projectNamed()).toBe(first);
    expect((await call(`/api/v1/sessions/${first}`, { method: "DELETE" })).status).toBe(200);
    const second = await post();
    expect(second).not.toBe(first);
    expect(await projectNamed()).toBe(second);

    const renamed = `renamed-${crypto.randomUUID()}`;
    expect((await call(`/api/v1/sessions/${second}`, { method: "PATCH", json: { name: renamed } })).status).toBe(200);
    const third = await post();
    expect(third).not.toBe(second);
    expect(await projectNamed()).toBe(third);
  });

  it("creates a run with POST /runs and completes it with PATCH /runs/{id} (epoch-ms end_time)", async () => {
    const project = `ingest-${crypto.randomUUID()}`;
    const run = sdkRun("root", new Date("2026-11-20T10:00:00Z"), undefined, { session_name: project });
    expect((await call("/api/v1/runs", { method: "POST", json: run })).status).toBe(202);
    const pending = await json<Run>(await getRun(run.id));
    expect(pending).toMatchObject({ id: run.id, status: "pending", is_root: true, inputs: { question: "root" } });
    // The project was created from session_name.
    const [created] = await json<{ id: string }[]>(await call(`/api/v1/sessions?name=${project}`));
    expect(pending.session_id).toBe(created.id);

    const patch = await call(`/api/v1/runs/${run.id}`, {
      method: "PATCH",
      json: { end_time: Date.parse("2026-11-20T10:00:02.5Z"), outputs: { answer: 1 } },
    });
    expect(patch.status).toBe(202);
    expect(await json<Run>(await getRun(run.id))).toMatchObject({
      status: "success",
      latency: 2.5,
      outputs: { answer: 1 },
      end_time: "2026-11-20T10:00:02.500000Z",
    });
  });

  it("stores the good runs of a batch and reports the bad ones", async () => {
    const root = sdkRun("batch-root", new Date("2026-11-20T11:00:00Z"), undefined, { session_name: "batch-tests" });
    const child = sdkRun("batch-child", new Date("2026-11-20T11:00:01Z"), root, {
      session_name: "batch-tests",
      run_type: "llm",
    });
    const badOrder = { ...sdkRun("bad", new Date("2026-11-20T11:00:02Z")), trace_id: crypto.randomUUID() };
    const response = await call("/api/v1/runs/batch", {
      method: "POST",
      json: {
        post: [root, child, badOrder, { id: "x", name: "no id" }],
        patch: [
          {
            id: child.id,
            trace_id: root.id,
            dotted_order: child.dotted_order,
            session_name: "batch-tests",
            end_time: "2026-11-20T11:00:03Z",
            outputs: { usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } },
          },
        ],
      },
    });
    expect(response.status).toBe(202);
    const result = await json<{ accepted: number; errors: { run_id: string; detail: string }[] }>(response);
    expect(result.accepted).toBe(3);
    expect(result.errors.map((e) => e.run_id)).toEqual([badOrder.id, "x"]);
    expect(result.errors[0].detail).toMatch(/must start with trace_id/);
    expect(result.errors[1].detail).toMatch(/id: must be a UUID/);
    expect(await json<Run>(await getRun(child.id))).toMatchObject({
      status: "success",
      total_tokens: 7,
      parent_run_ids: [root.id],
      trace_id: root.id,
    });
    expect((await getRun(badOrder.id)).status).toBe(404);
  });

  it("files runs under an existing project named by session_id", async () => {
    const project = await json<{ id: string }>(
      await call("/api/v1/sessions", { method: "POST", json: { name: `by-id-${crypto.randomUUID()}` } }),
    );
    const a = sdkRun("by-id-a", new Date("2026-11-20T14:00:00Z"), undefined, { session_id: project.id });
    const b = sdkRun("by-id-b", new Date("2026-11-20T14:00:01Z"), undefined, { session_id: project.id });
    const response = await call("/api/v1/runs/batch", { method: "POST", json: { post: [a, b] } });
    expect(await json(response)).toEqual({ accepted: 2, errors: [] });
    for (const run of [a, b]) expect((await json<Run>(await getRun(run.id))).session_id).toBe(project.id);
  });

  it("keeps an SDK patch that arrives before its post", async () => {
    const run = sdkRun("late-post", new Date("2026-11-20T12:00:00Z"), undefined, { session_name: "late" });
    const early = await call("/api/v1/runs/batch", {
      method: "POST",
      json: {
        patch: [
          {
            id: run.id,
            trace_id: run.id,
            dotted_order: run.dotted_order,
            session_name: "late",
            end_time: "2026-11-20T12:00:01Z",
            outputs: { ok: true },
          },
        ],
      },
    });
    expect(early.status).toBe(202);
    expect((await call("/api/v1/runs", { method: "POST", json: run })).status).toBe(202);
    expect(await json<Run>(await getRun(run.id))).toMatchObject({ status: "success", outputs: { ok: true } });
  });

  it("answers bad single runs with 4xx and a detail", async () => {
    const missing = await call("/api/v1/runs", {
      method: "POST",
      json: { id: crypto.randomUUID(), run_type: "llm", start_time: "2026-11-20T10:00:00Z" },
    });
    expect(missing.status).toBe(422);
    expect((await json<{ detail: string }>(missing)).detail).toMatch(/^name:/);
    const unknownSession = await call("/api/v1/runs", {
      method: "POST",
      json: { ...sdkRun("x", new Date()), session_id: crypto.randomUUID() },
    });
    expect(unknownSession.status).toBe(422);
    expect((await json<{ detail: string }>(unknownSession)).detail).toMatch(/is not a tracing project/);
    const orphan = await call(`/api/v1/runs/${crypto.randomUUID()}`, {
      method: "PATCH",
      json: { end_time: Date.now() },
    });
    expect(orphan.status).toBe(404);
    const mismatch = await call(`/api/v1/runs/${crypto.randomUUID()}`, {
      method: "PATCH",
      json: { id: crypto.randomUUID() },
    });
    expect(mismatch.status).toBe(422);
    expect((await call("/api/v1/runs/batch", { method: "POST", json: { post: [{ id: "nope" }] } })).status).toBe(422);
    expect((await call("/api/v1/runs/batch", { method: "POST", json: { post: "not a list" } })).status).toBe(422);
  });

  it("refuses token counts and costs that cannot be summed, wherever the SDKs put usage, with 422 naming the field", async () => {
    const project = `usage-${crypto.randomUUID()}`;
    const llm = (extra: Record<string, unknown>) =>
      sdkRun("llm", new Date("2026-11-20T16:00:00Z"), undefined, { run_type: "llm", session_name: project, ...extra });
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { outputs: { usage_metadata: { input_tokens: -5, output_tokens: 3 } } },
        /^outputs\.usage_metadata\.input_tokens: -5 is not a token count/,
      ],
      [
        { outputs: { usage_metadata: { total_tokens: 1e308 } } },
        /^outputs\.usage_metadata\.total_tokens: 1e\+308 is not a token count, an integer from 0 to 1000000000/,
      ],
      [{ outputs: { usage_metadata: { total_tokens: 2.5 } } }, /total_tokens: 2\.5 is not a token count/],
      [
        { outputs: { llm_output: { token_usage: { prompt_tokens: 1, completion_tokens: -1 } } } },
        /^outputs\.llm_output\.token_usage\.completion_tokens: -1/,
      ],
      [
        { extra: { metadata: { usage_metadata: { output_tokens: 1e12 } } } },
        /^extra\.metadata\.usage_metadata\.output_tokens/,
      ],
      [
        { outputs: { generations: [[{ message: { kwargs: { usage_metadata: { input_tokens: -1 } } } }]] } },
        /^outputs\.generations\.0\.0\.message\.kwargs\.usage_metadata\.input_tokens/,
      ],
      [
        { outputs: { usage_metadata: { total_tokens: 10, total_cost: -0.5 } } },
        /^outputs\.usage_metadata\.total_cost: -0\.5 is not a cost/,
      ],
    ];
    for (const [extra, detail] of refusals) {
      const run = llm(extra);
      const response = await call("/api/v1/runs", { method: "POST", json: run });
      const body = await json<{ detail: string }>(response);
      expect(response.status, JSON.stringify(extra)).toBe(422);
      expect(body.detail).toMatch(detail);
      expect((await getRun(run.id)).status).toBe(404);
    }
    // A patch is checked the same way, and a good count is kept.
    const run = llm({});
    expect((await call("/api/v1/runs", { method: "POST", json: run })).status).toBe(202);
    const bad = await call(`/api/v1/runs/${run.id}`, {
      method: "PATCH",
      json: { outputs: { usage_metadata: { input_tokens: -1 } }, end_time: "2026-11-20T16:00:01Z" },
    });
    expect(bad.status).toBe(422);
    const good = await call(`/api/v1/runs/${run.id}`, {
      method: "PATCH",
      json: { outputs: { usage_metadata: { input_tokens: 7, output_tokens: 5 } }, end_time: "2026-11-20T16:00:01Z" },
    });
    expect(good.status).toBe(202);
    expect(await json<Run>(await getRun(run.id))).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 5,
      total_tokens: 12,
    });
  });

  it("refuses a run with a field over MAX_TRACED_RUN_BYTES with 413, alone or in a batch, and stores the others", async () => {
    // The workerd tests run with MAX_TRACED_RUN_BYTES = 32768 (vitest.config.ts).
    const big = { text: "x".repeat(40_000) };
    const single = sdkRun("too-big", new Date("2026-11-20T15:00:00Z"), undefined, {
      session_name: "sizes",
      inputs: big,
    });
    const refused = await call("/api/v1/runs", { method: "POST", json: single });
    expect(refused.status).toBe(413);
    expect((await json<{ detail: string }>(refused)).detail).toBe(
      `Run ${single.id}: inputs is 40011 bytes of JSON; the limit for each field of a traced run is 32768 bytes (MAX_TRACED_RUN_BYTES)`,
    );
    expect((await getRun(single.id)).status).toBe(404);

    const small = sdkRun("fits", new Date("2026-11-20T15:00:01Z"), undefined, { session_name: "sizes" });
    const bigPost = sdkRun("big-post", new Date("2026-11-20T15:00:02Z"), undefined, {
      session_name: "sizes",
      inputs: big,
    });
    const response = await call("/api/v1/runs/batch", { method: "POST", json: { post: [small, bigPost] } });
    expect(response.status).toBe(202);
    const result = await json<{
      accepted: number;
      errors: { run_id: string; operation: string; status: number; detail: string }[];
    }>(response);
    expect(result).toEqual({
      accepted: 1,
      errors: [
        {
          operation: "post",
          run_id: bigPost.id,
          status: 413,
          detail: `Run ${bigPost.id}: inputs is 40011 bytes of JSON; the limit for each field of a traced run is 32768 bytes (MAX_TRACED_RUN_BYTES)`,
        },
      ],
    });
    expect(await json<Run>(await getRun(small.id))).toMatchObject({
      status: "pending",
      inputs: { question: "fits" },
      outputs: null,
    });
    expect((await getRun(bigPost.id)).status).toBe(404);

    // A batch whose every run is too large is a 413 listing each.
    const bigPatch = {
      id: small.id,
      trace_id: small.id,
      dotted_order: small.dotted_order,
      end_time: "2026-11-20T15:00:03Z",
      outputs: { text: "y".repeat(33_000) },
      error: "e".repeat(3_000),
    };
    const refusedBatch = await call("/api/v1/runs/batch", { method: "POST", json: { patch: [bigPatch] } });
    expect(refusedBatch.status).toBe(413);
    expect((await json<{ detail: string }>(refusedBatch)).detail).toBe(
      `patch ${small.id}: Run ${small.id}: outputs is 33011 bytes of JSON; the limit for each field of a traced run is 32768 bytes (MAX_TRACED_RUN_BYTES)`,
    );
    expect(await json<Run>(await getRun(small.id))).toMatchObject({ status: "pending", outputs: null, error: null });

    // A patch over the limit, sent alone, is a 413 too; the run keeps what it had.
    const patch = await call(`/api/v1/runs/${small.id}`, { method: "PATCH", json: { outputs: big } });
    expect(patch.status).toBe(413);
    expect((await json<{ detail: string }>(patch)).detail).toMatch(
      /: outputs is 40011 bytes of JSON; the limit for each field of a traced run is 32768 bytes \(MAX_TRACED_RUN_BYTES\)$/,
    );
  });

  it("does not show one workspace's runs to another", async () => {
    const run = sdkRun("private", new Date("2026-11-20T13:00:00Z"));
    await call("/api/v1/runs", { method: "POST", json: run });
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Other tracer" } }),
    );
    const { key } = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
    );
    expect((await getRun(run.id)).status).toBe(200);
    expect((await getRun(run.id, key)).status).toBe(404);
    expect(
      (await call(`/api/v1/runs/${run.id}`, { method: "PATCH", key, json: { end_time: Date.now() } })).status,
    ).toBe(404);
  });
});
