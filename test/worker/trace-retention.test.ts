// Traced runs expire after their project's retention (LangSmith's base 14 days, extended 400): the
// trace shard deletes its storage on its alarm, and run locator entries expire with it.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE_TRACE_RETENTION_DAYS, EXTENDED_TRACE_RETENTION_DAYS, traceExpiry } from "../../src/core/limits.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { locateRun } from "../../src/tracing/directory.ts";
import { traceShardName } from "../../src/tracing/trace-shard-do.ts";
import { hashBucket, partitionName, RUN_LOCATOR_SHARDS } from "../../src/workspace/partition.ts";
import { call, json, rootRun } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
const DAY = 86_400_000;

const run = rootRun;

describe("trace retention", () => {
  it("keeps runs 14 days after they are ingested, or 400 for a longlived project, to the next midnight", () => {
    const now = Date.parse("2026-11-20T10:30:00Z");
    const midnight = Date.parse("2026-11-21T00:00:00Z");
    expect(traceExpiry(null, now)).toBe(midnight + BASE_TRACE_RETENTION_DAYS * DAY);
    expect(traceExpiry("shortlived", now)).toBe(midnight + 14 * DAY);
    expect(traceExpiry("longlived", now)).toBe(midnight + EXTENDED_TRACE_RETENTION_DAYS * DAY);
  });

  it("arms each shard at its retention's end, and the alarm deletes the shard's storage", async () => {
    const project = `ret-${crypto.randomUUID()}`;
    const today = new Date().toISOString().slice(0, 10);
    const r = run(project, new Date().toISOString());
    expect((await post("/api/v1/runs/batch", { post: [r] })).status).toBe(202);
    const projectId = (await json<{ session_id: string }>(await call(`/api/v1/runs/${r.id}`))).session_id;
    const shard = env.TRACE_SHARD.getByName(traceShardName(DEFAULT_WORKSPACE_ID, projectId, today));
    const alarm = await runInDurableObject(shard, (_i, state) => state.storage.getAlarm());
    expect(alarm).toBe(traceExpiry(null));

    // A longlived project's shard is kept 400 days.
    const patched = await call(`/api/v1/sessions/${projectId}`, { method: "PATCH", json: { trace_tier: "longlived" } });
    expect(patched.status).toBe(200);
    const later = run(project, new Date().toISOString());
    expect((await post("/api/v1/runs/batch", { post: [later] })).status).toBe(202);
    expect(await runInDurableObject(shard, (_i, state) => state.storage.getAlarm())).toBe(traceExpiry("longlived"));

    // Retention over: the shard's storage goes, and its runs are not found.
    expect(await runDurableObjectAlarm(shard)).toBe(true);
    const tables = await runInDurableObject(shard, (_i, state) =>
      state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").one(),
    );
    expect(tables.n).toBe(0);
    expect((await call(`/api/v1/runs/${r.id}`)).status).toBe(404);
    const page = await json<{ runs: unknown[] }>(await post("/api/v1/runs/query", { session: [projectId] }));
    expect(page.runs).toEqual([]);
  });

  it("expires run locator entries with their shard: not found after, and deleted by the locator's alarm", async () => {
    // An expired entry (written straight into a locator shard) is not found, and goes on the shard's alarm.
    const runId = crypto.randomUUID();
    const partition = {
      workspaceId: DEFAULT_WORKSPACE_ID,
      kind: "runs",
      shard: hashBucket(runId, RUN_LOCATOR_SHARDS),
    } as const;
    const stub = env.WORKSPACE.getByName(partitionName(partition));
    const count = async () =>
      (
        await stub.exec(partition, [
          { sql: "SELECT count(*) FROM trace_run_locations WHERE run_id = ?", params: [runId], method: "get" },
        ])
      )[0].rows[0];
    await stub.exec(partition, [
      {
        sql: "INSERT INTO trace_run_locations (workspace_id, run_id, project_id, day, expires_at) VALUES (?, ?, 'p', '2026-01-05', ?)",
        params: [DEFAULT_WORKSPACE_ID, runId, Date.now() - 1000],
        method: "run",
      },
    ]);
    await stub.arm(partition, Date.now() + 60_000);
    expect(await count()).toBe(1);
    expect(await locateRun(env, DEFAULT_WORKSPACE_ID, runId)).toBeNull();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await count()).toBe(0);
  });
});
