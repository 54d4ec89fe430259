// The official langsmith SDK's feedback calls and getRunStats against the platform, over real HTTP.
import { Client } from "langsmith";
import { traceable } from "langsmith/traceable";
import { describe, expect, it } from "vitest";
import { sharedServer } from "./helpers.ts";

const server = sharedServer();

type Run = { id: string; start_time: string; feedback_stats: Record<string, unknown> | null };

async function api<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Api-Key": server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe("langsmith SDK feedback and run stats", () => {
  it("creates, reads, updates, lists and deletes feedback, and sees it in run stats", async () => {
    const project = `feedback-${crypto.randomUUID()}`;
    const client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: true });
    const answer = traceable(async (question: string) => ({ answer: question.toUpperCase() }), {
      name: "answer",
      client,
      project_name: project,
      tracingEnabled: true,
    });
    await answer("one");
    await answer("two");
    await client.awaitPendingTraceBatches();

    const session = await client.readProject({ projectName: project });
    // Read over HTTP: listRuns/readRun are covered by the SDK run tests.
    const { runs } = await api<{ runs: Run[] }>("/runs/query", { session: [session.id], order: "asc" });
    expect(runs).toHaveLength(2);
    const [first, second] = runs;

    const liked = await client.createFeedback(first.id, "thumbs", { score: 1, comment: "nice" });
    const disliked = await client.createFeedback(second.id, "thumbs", {
      score: 0,
      value: "wrong",
      sessionId: session.id,
      startTime: second.start_time,
    });
    expect(await client.readFeedback(liked.id)).toMatchObject({
      id: liked.id,
      run_id: first.id,
      key: "thumbs",
      score: 1,
      comment: "nice",
    });

    await client.updateFeedback(disliked.id, { score: 0.5, comment: "half right" });
    expect(await client.readFeedback(disliked.id)).toMatchObject({ score: 0.5, comment: "half right", value: "wrong" });

    const listed = [];
    for await (const feedback of client.listFeedback({ runIds: [first.id, second.id], feedbackKeys: ["thumbs"] }))
      listed.push(feedback);
    expect(listed.map((f) => f.id).sort()).toEqual([liked.id, disliked.id].sort());

    const read = await api<Run>(`/runs/${first.id}`);
    expect(read.feedback_stats).toMatchObject({ thumbs: { n: 1, avg: 1 } });

    const stats = (await client.getRunStats({ projectNames: [project] })) as Record<string, unknown>;
    expect(stats).toMatchObject({ run_count: 2, error_rate: 0, feedback_stats: { thumbs: { n: 2, avg: 0.75 } } });
    expect(typeof stats.latency_p50).toBe("number");
    const filtered = (await client.getRunStats({
      projectIds: [session.id],
      filter: 'and(eq(feedback_key, "thumbs"), gte(feedback_score, 1))',
    })) as { run_count: number };
    expect(filtered.run_count).toBe(1);

    await client.deleteFeedback(liked.id);
    await expect(client.readFeedback(liked.id)).rejects.toThrow(/404|not found/i);
  });
});
