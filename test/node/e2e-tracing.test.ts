// The official langsmith SDK traces into the platform through its default path (GET /info, then
// batched, gzip-compressed multipart), and the runs come back through /runs/query.
import { Client } from "langsmith";
import { traceable } from "langsmith/traceable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "./helpers.ts";

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

type Run = { id: string; name: string; run_type: string; status: string; parent_run_id: string | null; trace_id: string; inputs: unknown; outputs: unknown; tags: string[]; dotted_order: string };

async function api<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Api-Key": server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe("langsmith SDK tracing", () => {
  it("traces nested traceable functions with multipart batches", async () => {
    const project = `sdk-${crypto.randomUUID()}`;
    const client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: true });
    const double = traceable(async (x: number) => x * 2, { name: "double", run_type: "tool", client, project_name: project, tracingEnabled: true });
    const pipeline = traceable(
      async (x: number) => {
        const a = await double(x);
        const b = await double(a);
        return { result: b + 1 };
      },
      { name: "pipeline", client, project_name: project, tracingEnabled: true, tags: ["e2e"], metadata: { thread_id: "sdk-thread" } },
    );
    expect(await pipeline(3)).toEqual({ result: 13 });
    await client.awaitPendingTraceBatches();

    const [session] = await api<{ id: string }[]>(`/sessions?name=${project}`);
    expect(session).toBeDefined();
    const { runs } = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], order: "asc" });
    expect(runs.map((run) => run.name)).toEqual(["pipeline", "double", "double"]);
    const [root, first, second] = runs;
    expect(root).toMatchObject({ status: "success", parent_run_id: null, tags: ["e2e"], outputs: { result: 13 } });
    expect(first).toMatchObject({ run_type: "tool", status: "success", parent_run_id: root.id, trace_id: root.id, outputs: { outputs: 6 } });
    expect(second.outputs).toEqual({ outputs: 12 });
    expect(second.dotted_order.startsWith(root.dotted_order)).toBe(true);

    const filtered = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], filter: 'and(eq(run_type, "tool"), eq(output_value, "12"))' });
    expect(filtered.runs.map((run) => run.id)).toEqual([second.id]);
    // traceable children inherit their parent's metadata, so the whole trace is in the thread.
    const byThread = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], filter: 'eq(thread_id, "sdk-thread")' });
    expect(byThread.runs).toHaveLength(3);
    const rootsOfThread = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], filter: 'and(eq(thread_id, "sdk-thread"), eq(is_root, true))' });
    expect(rootsOfThread.runs.map((run) => run.id)).toEqual([root.id]);
  });
});
