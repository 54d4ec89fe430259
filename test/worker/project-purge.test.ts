// Deleting a tracing project deletes its traced data: shards emptied, directory, feedback and
// locator entries gone; another project is untouched.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { locateRun } from "../../src/tracing/directory.ts";
import { traceShardName } from "../../src/tracing/trace-shard-do.ts";
import { call, json, rootRun } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

const run = rootRun;

async function projectOf(runId: string): Promise<string> {
  return (await json<{ session_id: string }>(await call(`/api/v1/runs/${runId}`))).session_id;
}

describe("deleting a tracing project", () => {
  it("empties its shards and removes its directory, feedback and locator entries, and nothing else", async () => {
    const doomed = `doomed-${crypto.randomUUID()}`;
    const kept = `kept-${crypto.randomUUID()}`;
    const runs = [run(doomed, "2026-11-20T10:00:00.000Z"), run(doomed, "2026-11-21T10:00:00.000Z")];
    const other = run(kept, "2026-11-20T10:00:00.000Z");
    expect((await post("/api/v1/runs/batch", { post: [...runs, other] })).status).toBe(202);
    const projectId = await projectOf(runs[0].id);
    expect((await post("/api/v1/feedback", { run_id: runs[0].id, key: "k", score: 1 })).status).toBe(200);

    const deleted = await call(`/api/v1/sessions/${projectId}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);

    for (const r of runs) {
      expect((await call(`/api/v1/runs/${r.id}`)).status).toBe(404);
      expect(await locateRun(env, DEFAULT_WORKSPACE_ID, r.id)).toBeNull();
    }
    // The shards hold nothing (their storage was deleted).
    for (const day of ["2026-11-20", "2026-11-21"]) {
      const stub = env.TRACE_SHARD.getByName(traceShardName(DEFAULT_WORKSPACE_ID, projectId, day));
      const tables = await runInDurableObject(stub, (_instance, state) =>
        state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").one(),
      );
      expect(tables.n).toBe(0);
    }
    const feedback = await json<unknown[]>(await call(`/api/v1/feedback?run=${runs[0].id}`));
    expect(feedback).toEqual([]);
    // The other project's run is where it was.
    expect((await call(`/api/v1/runs/${other.id}`)).status).toBe(200);
    expect(await locateRun(env, DEFAULT_WORKSPACE_ID, other.id)).not.toBeNull();
  });
});
