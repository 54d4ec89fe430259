// `npm start` fires the Worker's scheduled handler at every minute boundary by itself, as the deployed
// Cron Trigger does: a cron runs and a bulk export completes with nobody calling the scheduled route.
// One server and one wait for the boundary serve both, to keep the test as short as a minute allows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until as poll } from "../fixtures/until.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
let apiKey: string;

beforeAll(async () => {
  deployment = await startDeployment("langgraph.json");
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

describe("npm start runs what it schedules", () => {
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
});
