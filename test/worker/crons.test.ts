import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EARLY_TRIGGER_TOLERANCE_MS } from "../../src/crons/service.ts";
import worker from "../../src/index.ts";
import type { RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { call, json } from "./helpers.ts";

interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  timezone: string;
  enabled: boolean;
  next_run_date: string | null;
  disabled_reason: string | null;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  on_run_completed: string | null;
  end_time: string | null;
}

const post = (path: string, body: unknown, key?: string) => call(path, { method: "POST", json: body, key });

async function tick(at: Date): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** A tick late enough that every cron created so far has come due. */
const tickAfterNextMinute = () => tick(new Date(Date.now() + 60_000));

async function runsOf(threadId: string): Promise<RunJson[]> {
  return json<RunJson[]>(await call(`/threads/${threadId}/runs`));
}

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

describe("creating crons", () => {
  it("creates a thread cron with its next run at the next minute", async () => {
    const threadId = await newThread();
    const response = await post(`/threads/${threadId}/runs/crons`, {
      assistant_id: "echo",
      schedule: "* * * * *",
      input: { messages: [{ role: "user", content: "tick" }] },
      metadata: { team: "ops" },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const cron = await json<Cron>(response);
    expect(cron).toMatchObject({
      thread_id: threadId,
      schedule: "* * * * *",
      timezone: "UTC",
      enabled: true,
      metadata: { team: "ops" },
      on_run_completed: null,
    });
    expect(cron.payload).toMatchObject({ input: { messages: [{ role: "user", content: "tick" }] } });
    const next = Date.parse(cron.next_run_date!);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(60_000);
    expect(new Date(next).getUTCSeconds()).toBe(0);
    expect(await json<Cron>(await call(`/runs/crons/${cron.cron_id}`))).toEqual(cron);
  });

  it("rejects bad schedules, time zones, assistants and threads", async () => {
    const threadId = await newThread();
    const bad = async (body: Record<string, unknown>) =>
      json<{ detail: { loc: string[]; msg: string }[] }>(await post("/runs/crons", { assistant_id: "echo", ...body }));
    const over = await post("/runs/crons", { assistant_id: "echo", schedule: "61 * * * *" });
    expect(over.status).toBe(422);
    expect((await bad({ schedule: "61 * * * *" })).detail[0]).toMatchObject({
      loc: ["body", "schedule"],
      msg: expect.stringContaining("61"),
    });
    expect((await bad({ schedule: "* * * *" })).detail[0].msg).toContain("5 fields");
    expect((await bad({ schedule: "* * * * *", timezone: "Mars/Base" })).detail[0]).toMatchObject({
      loc: ["body", "timezone"],
    });
    expect((await post("/runs/crons", { assistant_id: "nope", schedule: "* * * * *" })).status).toBe(404);
    expect(
      (await post(`/threads/${crypto.randomUUID()}/runs/crons`, { assistant_id: "echo", schedule: "* * * * *" }))
        .status,
    ).toBe(404);
    expect((await post(`/threads/${threadId}/runs/crons`, { schedule: "* * * * *" })).status).toBe(422);
  });
});

describe("firing", () => {
  it("starts exactly one run per occurrence, on the cron's thread", async () => {
    const threadId = await newThread();
    const cron = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "echo",
        schedule: "* * * * *",
        input: { messages: [{ role: "user", content: "tick" }] },
      }),
    );
    const occurrence = new Date(cron.next_run_date!);
    await Promise.all([tick(occurrence), tick(occurrence)]); // overlapping ticks
    await tick(occurrence); // a retried one
    const runs = await runsOf(threadId);
    expect(runs).toHaveLength(1);
    expect(runs[0].metadata).toMatchObject({ cron_id: cron.cron_id });
    const after = await json<Cron>(await call(`/runs/crons/${cron.cron_id}`));
    expect(Date.parse(after.next_run_date!) - Date.parse(cron.next_run_date!)).toBe(60_000);
    // The next minute's tick starts the next run.
    await tick(new Date(Date.parse(after.next_run_date!) + 1_000));
    expect(await runsOf(threadId)).toHaveLength(2);
  });

  it("a cron's payload cannot set the auth user or the run's ids in config.configurable", async () => {
    const threadId = await newThread();
    const forged = {
      langgraph_auth_user: { identity: "admin", permissions: ["*"] },
      langgraph_auth_user_id: "admin",
      thread_id: "elsewhere",
      tone: "kept",
    };
    const cron = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "nested",
        schedule: "* * * * *",
        input: {},
        config: { configurable: forged },
      }),
    );
    await tick(new Date(cron.next_run_date!));
    const [run] = await runsOf(threadId);
    const values = await json<{ seen: Record<string, unknown> }>(
      await call(`/threads/${threadId}/runs/${run.run_id}/join`),
    );
    expect(values.seen).toMatchObject({ thread_id: threadId, auth_identity: null, tone: "kept" });
    expect(values.seen).not.toHaveProperty("langgraph_auth_user_id");
  });

  it("runs stateless crons on fresh threads, deleted or kept per on_run_completed", async () => {
    const tag = crypto.randomUUID();
    await post("/runs/crons", {
      assistant_id: "echo",
      schedule: "* * * * *",
      input: { messages: [{ role: "user", content: "gone" }] },
      metadata: { tag },
    });
    const keep = await json<Cron>(
      await post("/runs/crons", {
        assistant_id: "echo",
        schedule: "* * * * *",
        input: { messages: [{ role: "user", content: "kept" }] },
        on_run_completed: "keep",
        metadata: { tag },
      }),
    );
    expect(keep.on_run_completed).toBe("keep");
    await tickAfterNextMinute();
    // Kept runs leave their thread (indexed with the run's assistant); deleted ones leave nothing.
    let kept: ThreadJson[] = [];
    // The index has the thread from its run's start (busy), and its values once the run ends (idle).
    for (let i = 0; i < 80 && kept[0]?.status !== "idle"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      kept = await json<ThreadJson[]>(await post("/threads/search", { metadata: { cron_id: keep.cron_id } }));
    }
    expect(kept).toHaveLength(1);
    // The thread is indexed when its run starts: join the run before reading what it wrote.
    const [run] = await json<{ run_id: string }[]>(await call(`/threads/${kept[0].thread_id}/runs`));
    const values = await json<{ messages: { content: string }[] }>(
      await call(`/threads/${kept[0].thread_id}/runs/${run.run_id}/join`),
    );
    expect(values.messages[1].content).toBe("kept");
  });

  it("disables crons past their end_time, or whose assistant or thread is gone", async () => {
    // An end_time that has passed (one a second ahead could still precede the next occurrence).
    const ended = await json<Cron>(
      await post("/runs/crons", {
        assistant_id: "echo",
        schedule: "* * * * *",
        end_time: new Date(Date.now() - 1_000).toISOString(),
      }),
    );
    const assistant = await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }));
    const orphan = await json<Cron>(
      await post("/runs/crons", { assistant_id: assistant.assistant_id, schedule: "* * * * *" }),
    );
    await call(`/assistants/${assistant.assistant_id}`, { method: "DELETE" });
    const threadId = await newThread();
    const threadless = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, { assistant_id: "echo", schedule: "* * * * *" }),
    );
    await call(`/threads/${threadId}`, { method: "DELETE" });
    await tickAfterNextMinute();
    const state = async (id: string) => json<Cron>(await call(`/runs/crons/${id}`));
    expect(await state(ended.cron_id)).toMatchObject({
      enabled: false,
      disabled_reason: expect.stringContaining("end_time"),
    });
    expect(await state(orphan.cron_id)).toMatchObject({
      enabled: false,
      disabled_reason: expect.stringContaining("assistant"),
    });
    expect(await state(threadless.cron_id)).toMatchObject({
      enabled: false,
      disabled_reason: expect.stringContaining("thread"),
    });
  });
});

describe("firing time", () => {
  const newCron = async () => {
    const threadId = await newThread();
    const cron = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "echo",
        schedule: "* * * * *",
        input: { messages: [{ role: "user", content: "on time" }] },
      }),
    );
    return { threadId, cron, occurrence: Date.parse(cron.next_run_date!) };
  };
  const nextRunOf = async (cronId: string) => (await json<Cron>(await call(`/runs/crons/${cronId}`))).next_run_date;

  it("starts one run for two ticks seconds apart, not the next minute's occurrence ahead of time", async () => {
    const { threadId, cron, occurrence } = await newCron();
    await tick(new Date(occurrence));
    await tick(new Date(occurrence + 5_000));
    expect(await runsOf(threadId)).toHaveLength(1);
    expect(await nextRunOf(cron.cron_id)).toBe(new Date(occurrence + 60_000).toISOString());
  });

  it("starts nothing on a tick 30 s before the occurrence", async () => {
    const { threadId, cron, occurrence } = await newCron();
    await tick(new Date(occurrence - 30_000));
    expect(await runsOf(threadId)).toHaveLength(0);
    expect(await nextRunOf(cron.cron_id)).toBe(cron.next_run_date);
  });

  it("starts the occurrence on the tick at its time", async () => {
    const { threadId, cron, occurrence } = await newCron();
    await tick(new Date(occurrence));
    const runs = await runsOf(threadId);
    expect(runs).toHaveLength(1);
    expect(runs[0].metadata).toMatchObject({ cron_id: cron.cron_id });
  });

  it("starts the occurrence once on a trigger a few seconds early, and not again on time", async () => {
    const { threadId, cron, occurrence } = await newCron();
    await tick(new Date(occurrence - EARLY_TRIGGER_TOLERANCE_MS));
    expect(await runsOf(threadId)).toHaveLength(1);
    await tick(new Date(occurrence));
    expect(await runsOf(threadId)).toHaveLength(1);
    expect(await nextRunOf(cron.cron_id)).toBe(new Date(occurrence + 60_000).toISOString());
    // Just beyond the tolerance, the next occurrence still waits.
    await tick(new Date(occurrence + 60_000 - EARLY_TRIGGER_TOLERANCE_MS - 1_000));
    expect(await runsOf(threadId)).toHaveLength(1);
  });
});

describe("managing crons", () => {
  it("searches, counts, patches and deletes", async () => {
    const threadId = await newThread();
    const a = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "echo",
        schedule: "0 9 * * *",
        timezone: "Europe/Paris",
      }),
    );
    const b = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, { assistant_id: "steps", schedule: "*/5 * * * *" }),
    );
    const found = await json<Cron[]>(
      await post("/runs/crons/search", { thread_id: threadId, sort_by: "created_at", sort_order: "asc" }),
    );
    expect(found.map((c) => c.cron_id)).toEqual([a.cron_id, b.cron_id]);
    expect(
      (await json<Cron[]>(await post("/runs/crons/search", { thread_id: threadId, assistant_id: "steps" }))).map(
        (c) => c.cron_id,
      ),
    ).toEqual([b.cron_id]);
    expect(await json(await post("/runs/crons/count", { thread_id: threadId }))).toBe(2);
    const selected = await json<Record<string, unknown>[]>(
      await post("/runs/crons/search", { thread_id: threadId, select: ["cron_id", "schedule"], limit: 1 }),
    );
    expect(Object.keys(selected[0]).sort()).toEqual(["cron_id", "schedule"]);
    expect(new Date(a.next_run_date!).getUTCHours()).toBe(
      new Date(a.next_run_date!).getUTCMonth() >= 3 && new Date(a.next_run_date!).getUTCMonth() <= 9 ? 7 : 8,
    );

    const paused = await json<Cron>(
      await call(`/runs/crons/${b.cron_id}`, {
        method: "PATCH",
        json: { enabled: false, metadata: { why: "maintenance" } },
      }),
    );
    expect(paused).toMatchObject({ enabled: false, next_run_date: null, metadata: { why: "maintenance" } });
    const resumed = await json<Cron>(
      await call(`/runs/crons/${b.cron_id}`, { method: "PATCH", json: { enabled: true, schedule: "*/10 * * * *" } }),
    );
    expect(resumed).toMatchObject({ enabled: true, schedule: "*/10 * * * *" });
    expect(new Date(resumed.next_run_date!).getUTCMinutes() % 10).toBe(0);
    expect((await call(`/runs/crons/${b.cron_id}`, { method: "PATCH", json: { schedule: "bad" } })).status).toBe(422);
    expect((await call(`/runs/crons/${a.cron_id}`, { method: "DELETE" })).status).toBe(200);
    expect((await call(`/runs/crons/${a.cron_id}`)).status).toBe(404);
  });

  it("keeps every key of 20 concurrent metadata patches", async () => {
    const cron = await json<Cron>(await post("/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *" }));
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`/runs/crons/${cron.cron_id}`, { method: "PATCH", json: { metadata: { [`k${i}`]: i } } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const stored = await json<Cron>(await call(`/runs/crons/${cron.cron_id}`));
    expect(stored.metadata).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])));
  });

  it("keeps crons in their workspace", async () => {
    const workspace = await json<{ id: string }>(await post("/api/v1/workspaces", { display_name: "Cron tenants" }));
    const { key } = await json<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
    const cron = await json<Cron>(
      await post("/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *", metadata: { private: true } }),
    );
    expect((await call(`/runs/crons/${cron.cron_id}`, { key })).status).toBe(404);
    expect((await call(`/runs/crons/${cron.cron_id}`, { key, method: "DELETE" })).status).toBe(404);
    expect(await json(await post("/runs/crons/search", { metadata: { private: true } }, key))).toEqual([]);
    expect(await json(await post("/runs/crons/count", { metadata: { private: true } }, key))).toBe(0);
  });
});

describe("filter limits", () => {
  it("refuses a metadata filter with too many values with a 422, on search and count", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    for (const path of ["/runs/crons/search", "/runs/crons/count"]) {
      const response = await post(path, { metadata });
      expect(response.status, path).toBe(422);
      expect(JSON.stringify(await response.json())).toContain("at most 28 values");
    }
  });
});
