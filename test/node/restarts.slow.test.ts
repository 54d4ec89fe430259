// The slow tier: a server killed and restarted on its state (real processes, real time). `npm test` runs
// it; `npm test -- --fast` skips it.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { type Gate, gate } from "../fixtures/gate.ts";
import { until } from "../fixtures/until.ts";
import { startTestServer, type TestServer } from "./helpers.ts";
import { protocolClient, rootLifecycle } from "./protocol-v2-client.ts";

const ALL_STEPS = ["step1", "step2", "step3", "review"];
const TERMINAL = ["success", "error", "interrupted", "timeout"];

interface StepsValues {
  items: string[];
  [key: string]: unknown;
}

const openGate = (client: Client, g: Gate) => client.store.putItem(g.opening.namespace, g.opening.key, g.opening.value);

describe("a local server killed mid-run", () => {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    if (first) rmSync(first.persistTo, { recursive: true, force: true });
  });

  it("restarted on the same state, finishes the run (resuming from its last checkpoint) and leaves the thread consistent", async () => {
    first = await startTestServer({ keep: true });
    let client = new Client({ apiUrl: first.url, apiKey: first.apiKey });
    const threadId = (await client.threads.create()).thread_id;
    // Held at step2's gate, opened only after the restart.
    const held = gate("step2");
    const run = await client.runs.create(threadId, "steps", { input: { items: [] }, config: held.config });
    await until(
      () => client.runs.get(threadId, run.run_id),
      (r) => r.status === "running",
      10_000,
    );
    // Killed mid-run: step1 is checkpointed, review is far off.
    const before = (
      await until(
        () => client.threads.getState<StepsValues>(threadId),
        (state) => state.values.items?.includes("step1") === true,
      )
    ).values.items;
    expect(before).toContain("step1");
    expect(before).not.toContain("review");
    await first.kill();

    second = await startTestServer({ persistTo: first.persistTo });
    client = new Client({ apiUrl: second.url, apiKey: second.apiKey });
    const seenAfterRestart = await client.runs.get(threadId, run.run_id);
    expect(["pending", "running"]).toContain(seenAfterRestart.status);
    await openGate(client, held);

    const finished = await until(
      () => client.runs.get(threadId, run.run_id),
      (r) => TERMINAL.includes(r.status),
      70_000,
      500,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- wrangler output after restart ---\n${second?.output().slice(-4_000)}`);
    });
    const thread = await client.threads.get<StepsValues>(threadId);
    expect(["success", "error"]).toContain(finished.status);
    if (finished.status === "success") {
      expect(thread.status).toBe("idle");
      // Resumed from the checkpoint after step1: no step ran twice.
      expect(thread.values.items).toEqual(ALL_STEPS);
      expect((await client.threads.getState<StepsValues>(threadId)).values.items).toEqual(ALL_STEPS);
      expect(await client.runs.join(threadId, run.run_id)).toMatchObject({ items: ALL_STEPS });
    } else {
      expect(thread.status).toBe("error");
    }
    // Either way the thread takes new runs.
    const values = (await client.runs.wait(threadId, "steps", {
      input: { items: ["again"] },
    })) as StepsValues;
    expect(values.items.slice(-5)).toEqual(["again", ...ALL_STEPS]);
  }, 150_000);
});

describe("protocol v2 across a restart", () => {
  let server: TestServer;
  const { command, openEvents, close } = protocolClient(() => server);
  afterAll(async () => {
    close();
    await server?.stop();
  });

  it("keeps the event log and its numbering across a restart of the server", async () => {
    server = await startTestServer();
    const threadId = randomUUID();
    const stream = await openEvents(threadId, { channels: ["lifecycle", "values"] });
    await command(threadId, { id: 1, method: "run.start", params: { assistant_id: "steps", input: { items: [] } } });
    const before = await stream.inbox.waitFor((all) => rootLifecycle(all).includes("completed"));
    stream.close();
    const lastSeq = Math.max(...before.map((e) => e.seq));

    await server.kill();
    server = await startTestServer({ persistTo: server.persistTo });

    const replay = await openEvents(threadId, { channels: ["lifecycle", "values"] });
    const replayed = await replay.inbox.waitFor((all) => rootLifecycle(all).includes("completed"));
    expect(replayed.map((e) => e.seq)).toEqual(before.map((e) => e.seq));
    const again = await command(threadId, {
      id: 2,
      method: "run.start",
      params: { assistant_id: "steps", input: { items: [] } },
    });
    expect(again.body.meta?.applied_through_seq).toBeGreaterThanOrEqual(lastSeq);
    const after = await replay.inbox.waitFor((all) => rootLifecycle(all).filter((s) => s === "completed").length === 2);
    replay.close();
    const fresh = after.slice(replayed.length);
    expect(Math.min(...fresh.map((e) => e.seq))).toBeGreaterThan(lastSeq);
  }, 180_000);
});
