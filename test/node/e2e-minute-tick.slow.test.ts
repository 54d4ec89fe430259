// `npm start` fires the Worker's scheduled handler at every minute boundary by itself, as the deployed
// Cron Trigger does: a cron runs and a bulk export completes with nobody calling the scheduled route.
// One server and one wait for the boundary serve both, to keep the test as short as a minute allows; a
// cron's occurrence, started by its workspace's alarm and not again by the tick, waits beside them.
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until as poll } from "../fixtures/until.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
let apiKey: string;

beforeAll(async () => {
  deployment = await startDeployment("langgraph.json", { minuteTick: true });
  apiKey = deployment.apiKey;
}, 150_000);

afterAll(async () => {
  await deployment?.stop();
}, 60_000);

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${deployment.url}${path}`, {
    method,
    headers: { "X-Api-Key": apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as T;
}

/**
 * Polls `probe` (every second) until it answers a value. Time itself is under test here: what is
 * waited for comes with the wall clock's minute tick.
 */
async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const value = await poll(probe, Boolean, timeoutMs, 1_000).catch((error: Error) => {
    throw new Error(`timed out waiting for ${what}: ${error.message}`);
  });
  return value as T;
}

function tracedRun(projectId: string, start: string) {
  const id = crypto.randomUUID();
  const stamp = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
  return {
    id,
    name: "step",
    run_type: "chain",
    start_time: start,
    end_time: start,
    session_id: projectId,
    trace_id: id,
    dotted_order: stamp,
    inputs: { q: 1 },
    outputs: { a: 2 },
  };
}

/** The scheduled event the minute tick sends, at `time`. */
const fireTick = (time: number) => fetch(`${deployment.url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*&time=${time}`);

// Both wait for the wall clock's next minute, so they wait together.
describe.concurrent("npm start runs what it schedules", () => {
  it("fires a cron at its minute and completes a bulk export, with nobody calling the scheduled route", async () => {
    type Cron = { cron_id: string; next_run_date: string };
    type Run = { run_id: string; status: string; created_at: string; metadata: Record<string, unknown> };
    const { thread_id } = await api<{ thread_id: string }>("POST", "/threads", {});
    const cron = await api<Cron>("POST", `/threads/${thread_id}/runs/crons`, {
      assistant_id: "echo",
      schedule: "* * * * *",
      input: { messages: [{ role: "user", content: "tick" }] },
    });

    const project = await api<{ id: string }>("POST", "/api/v1/sessions", {
      name: `minute-tick-${crypto.randomUUID()}`,
    });
    const runs = ["2026-09-01T10:00:00.000Z", "2026-09-01T11:00:00.000Z", "2026-09-01T12:00:00.000Z"].map((start) =>
      tracedRun(project.id, start),
    );
    await api("POST", "/api/v1/runs/batch", { post: runs });
    const destination = await api<{ id: string }>("POST", "/api/v1/bulk-exports/destinations", {
      display_name: "local r2",
      config: { bucket_name: "agent-platform-exports", prefix: "minute-tick", r2_binding: "EXPORT_BUCKET" },
    });
    const exported = await api<{ id: string; status: string }>("POST", "/api/v1/bulk-exports", {
      bulk_export_destination_id: destination.id,
      session_id: project.id,
      start_time: "2026-09-01T00:00:00Z",
      end_time: "2026-09-02T00:00:00Z",
    });
    expect(exported.status).toBe("Created");

    const [run, finished] = await Promise.all([
      until(
        "the cron's run to succeed",
        async () => (await api<Run[]>("GET", `/threads/${thread_id}/runs`)).find((r) => r.status === "success"),
        150_000,
      ),
      until(
        "the export to finish",
        async () => {
          const current = await api<{ status: string }>("GET", `/api/v1/bulk-exports/${exported.id}`);
          return ["Completed", "Failed", "Cancelled", "TimedOut"].includes(current.status) && current;
        },
        180_000,
      ),
    ]);

    // The occurrence started at its minute, not ahead of it, and the schedule moved on.
    expect(run.metadata).toMatchObject({ cron_id: cron.cron_id });
    expect(Date.parse(run.created_at)).toBeGreaterThanOrEqual(Date.parse(cron.next_run_date));
    const after = await api<Cron>("GET", `/runs/crons/${cron.cron_id}`);
    expect(Date.parse(after.next_run_date)).toBeGreaterThan(Date.parse(cron.next_run_date));

    expect(finished.status).toBe("Completed");
    const exportRuns = await api<{ status: string; rows_written: number }[]>(
      "GET",
      `/api/v1/bulk-exports/${exported.id}/runs`,
    );
    expect(exportRuns).toEqual([expect.objectContaining({ status: "Completed", rows_written: 3 })]);
  }, 240_000);

  it("a * * * * * cron makes one run per occurrence on its thread, on its workspace's alarm", async () => {
    const sdk = new Client({ apiUrl: deployment.url, apiKey });
    const thread = await sdk.threads.create();
    const cron = await sdk.crons.createForThread(thread.thread_id, "echo", {
      schedule: "* * * * *",
      input: { messages: [{ role: "user", content: "cron" }] },
    });
    expect(cron).toMatchObject({ thread_id: thread.thread_id, enabled: true });
    // The crons partition's alarm starts the occurrence at its time (within the minute), by itself.
    const occurrence = Date.parse(cron.next_run_date!);
    // Time itself is under test: the occurrence comes with the wall clock's next minute.
    const runs = await poll(
      () => sdk.runs.list(thread.thread_id),
      (found) => found.length > 0,
      90_000,
      1_000,
    );
    expect(runs).toHaveLength(1);
    expect(Date.parse(runs[0].created_at)).toBeGreaterThanOrEqual(occurrence);
    // The minute tick no longer fires crons: a scheduled event at the occurrence starts nothing more.
    expect((await fireTick(occurrence)).status).toBe(200);
    expect((await fireTick(occurrence + 3_000)).status).toBe(200);
    expect(await sdk.runs.list(thread.thread_id)).toHaveLength(1);
    const found = await sdk.crons.search({ threadId: thread.thread_id });
    expect(found.map((c) => c.cron_id)).toEqual([cron.cron_id]);
    expect(Date.parse(found[0].next_run_date!)).toBe(occurrence + 60_000);
    expect(await sdk.crons.count({ threadId: thread.thread_id })).toBe(1);
    await sdk.crons.delete(cron.cron_id);
    expect(await sdk.crons.count({ threadId: thread.thread_id })).toBe(0);
  }, 120_000);
});
