import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { cronFiringsPerAlarm } from "../../src/core/limits.ts";
import { EARLY_TRIGGER_TOLERANCE_MS, fireDueCrons } from "../../src/crons/service.ts";
import { crons } from "../../src/db/schema.ts";
import type { RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { partitionName } from "../../src/workspace/partition.ts";
import { until } from "../fixtures/until.ts";
import { call, FAR_SCHEDULE, fireCrons, json } from "./helpers.ts";

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

/** The workspace's crons partition fired at `at` (see fireCrons). */
const tick = async (at: Date) => void (await fireCrons(at));

/** When FAR_SCHEDULE next fires: the first minute of its day. */
const farOccurrence = async () => {
  const probe = await json<Cron>(await post("/runs/crons", { assistant_id: "echo", schedule: FAR_SCHEDULE }));
  await call(`/runs/crons/${probe.cron_id}`, { method: "DELETE" });
  return new Date(probe.next_run_date!);
};

/** The crons partition object of a workspace, and its alarm time. */
const cronsObject = (workspaceId: string) => env.WORKSPACE.getByName(partitionName({ workspaceId, kind: "crons" }));
const alarmOf = (workspaceId: string) =>
  runInDurableObject(cronsObject(workspaceId), (_instance, state) => state.storage.getAlarm());

/** A new workspace, an API key of it, and its id. */
async function newWorkspace(name: string): Promise<{ id: string; key: string }> {
  const workspace = await json<{ id: string }>(await post("/api/v1/workspaces", { display_name: name }));
  const { key } = await json<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
  return { id: workspace.id, key };
}

/**
 * Waits out the last 2 s of a minute: a "* * * * *" cron created then would be due (and fired by its
 * alarm) before the test reads it back.
 */
async function clearOfMinuteBoundary(): Promise<void> {
  // Time itself is under test: the wall clock's minute decides when a cron is due.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 2_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

async function runsOf(threadId: string): Promise<RunJson[]> {
  return json<RunJson[]>(await call(`/threads/${threadId}/runs`));
}

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

// Files after this one share its runtime (vitest.config.ts): leave no cron behind to fire in their tests.
afterAll(async () => {
  for (let page = 0; page < 20; page++) {
    const left = await json<{ cron_id: string }[]>(
      await call("/runs/crons/search", { method: "POST", json: { limit: 100 } }),
    );
    if (!left.length) return;
    for (const cron of left) await call(`/runs/crons/${cron.cron_id}`, { method: "DELETE" });
  }
});

describe("creating crons", () => {
  it("creates a thread cron with its next run at the next minute", async () => {
    const threadId = await newThread();
    await clearOfMinuteBoundary();
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
    await call(`/runs/crons/${cron.cron_id}`, { method: "DELETE" });
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
        schedule: FAR_SCHEDULE,
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
        schedule: FAR_SCHEDULE,
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
      schedule: FAR_SCHEDULE,
      input: { messages: [{ role: "user", content: "gone" }] },
      metadata: { tag },
    });
    const keep = await json<Cron>(
      await post("/runs/crons", {
        assistant_id: "echo",
        schedule: FAR_SCHEDULE,
        input: { messages: [{ role: "user", content: "kept" }] },
        on_run_completed: "keep",
        metadata: { tag },
      }),
    );
    expect(keep.on_run_completed).toBe("keep");
    await tick(await farOccurrence());
    // Kept runs leave their thread (indexed with the run's assistant); deleted ones leave nothing.
    // The index has the thread from its run's start (busy), and its values once the run ends (idle).
    const kept = await until(
      async () => json<ThreadJson[]>(await post("/threads/search", { metadata: { cron_id: keep.cron_id } })),
      (found) => found[0]?.status === "idle",
    );
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
        schedule: FAR_SCHEDULE,
        end_time: new Date(Date.now() - 1_000).toISOString(),
      }),
    );
    const assistant = await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }));
    const orphan = await json<Cron>(
      await post("/runs/crons", { assistant_id: assistant.assistant_id, schedule: FAR_SCHEDULE }),
    );
    await call(`/assistants/${assistant.assistant_id}`, { method: "DELETE" });
    const threadId = await newThread();
    const threadless = await json<Cron>(
      await post(`/threads/${threadId}/runs/crons`, { assistant_id: "echo", schedule: FAR_SCHEDULE }),
    );
    await call(`/threads/${threadId}`, { method: "DELETE" });
    await tick(await farOccurrence());
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
        schedule: FAR_SCHEDULE,
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

describe("each workspace's crons on its own alarm", () => {
  it("arms the alarm at a new cron's next run, and at a re-enabled one's", async () => {
    const { id, key } = await newWorkspace("Cron alarm");
    // The minute after next: due in one to two minutes, not while the test reads it back.
    const minute = (new Date().getUTCMinutes() + 2) % 60;
    const soon = await json<Cron>(
      await post("/runs/crons", { assistant_id: "echo", schedule: `${minute} * * * *` }, key),
    );
    const next = Date.parse(soon.next_run_date!);
    expect(next - Date.now()).toBeGreaterThan(60_000);
    expect(next - Date.now()).toBeLessThanOrEqual(120_000);
    expect(await alarmOf(id)).toBe(next);
    await call(`/runs/crons/${soon.cron_id}`, { method: "DELETE", key });

    const other = await newWorkspace("Cron alarm, enabled later");
    const paused = await json<Cron>(
      await post("/runs/crons", { assistant_id: "echo", schedule: FAR_SCHEDULE, enabled: false }, other.key),
    );
    expect(paused.next_run_date).toBeNull();
    expect(await alarmOf(other.id)).toBeNull();
    const resumed = await json<Cron>(
      await call(`/runs/crons/${paused.cron_id}`, { method: "PATCH", json: { enabled: true }, key: other.key }),
    );
    expect(await alarmOf(other.id)).toBe(Date.parse(resumed.next_run_date!));
  });

  it("fires 150 crons due in the same minute on one alarm run, each workspace on its own", async () => {
    const busy = await newWorkspace("150 crons");
    const quiet = await newWorkspace("3 crons");
    const threadsOf = async (key: string, n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 10)
        ids.push(
          ...(await Promise.all(
            Array.from(
              { length: Math.min(10, n - i) },
              async () => (await json<ThreadJson>(await post("/threads", {}, key))).thread_id,
            ),
          )),
        );
      return ids;
    };
    const cronsOn = async (key: string, threadIds: string[]) => {
      const made: Cron[] = [];
      for (let i = 0; i < threadIds.length; i += 10)
        made.push(
          ...(await Promise.all(
            threadIds.slice(i, i + 10).map(async (threadId) =>
              json<Cron>(
                await post(
                  `/threads/${threadId}/runs/crons`,
                  {
                    assistant_id: "echo",
                    schedule: FAR_SCHEDULE,
                    input: { messages: [{ role: "user", content: "hi" }] },
                  },
                  key,
                ),
              ),
            ),
          )),
        );
      return made;
    };
    const busyThreads = await threadsOf(busy.key, 150);
    const quietThreads = await threadsOf(quiet.key, 3);
    const busyCrons = await cronsOn(busy.key, busyThreads);
    const quietCrons = await cronsOn(quiet.key, quietThreads);
    const planned = busyCrons[0].next_run_date!;
    // Every one of them comes due this minute (as after the object was evicted: the alarm still runs).
    const due = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    for (const workspaceId of [busy.id, quiet.id])
      await workspaceDatabase(env, { workspaceId, kind: "crons" }).update(crons).set({ nextRunDate: due }).run();
    expect(cronFiringsPerAlarm(env)).toBeGreaterThanOrEqual(150);

    expect(await runDurableObjectAlarm(cronsObject(busy.id))).toBe(true);
    const runsIn = async (key: string, threadId: string) =>
      json<RunJson[]>(await call(`/threads/${threadId}/runs`, { key }));
    for (let i = 0; i < busyThreads.length; i += 25) {
      const batch = await Promise.all(busyThreads.slice(i, i + 25).map((threadId) => runsIn(busy.key, threadId)));
      for (const [j, runs] of batch.entries()) {
        expect(runs, busyThreads[i + j]).toHaveLength(1);
        expect(runs[0].metadata).toMatchObject({ cron_id: busyCrons[i + j].cron_id });
      }
    }
    const busyAfter = await workspaceDatabase(env, { workspaceId: busy.id, kind: "crons" })
      .select({ next: crons.nextRunDate })
      .from(crons)
      .all();
    expect(busyAfter).toHaveLength(150);
    // Each moved on to its next occurrence, where the alarm now waits.
    expect(new Set(busyAfter.map((row) => row.next))).toEqual(new Set([planned]));
    expect(await alarmOf(busy.id)).toBe(Date.parse(planned));

    // The other workspace's crons did not move: its own alarm fires them.
    for (const threadId of quietThreads) expect(await runsIn(quiet.key, threadId)).toHaveLength(0);
    expect(await runDurableObjectAlarm(cronsObject(quiet.id))).toBe(true);
    for (const [i, threadId] of quietThreads.entries())
      expect((await runsIn(quiet.key, threadId))[0].metadata).toMatchObject({ cron_id: quietCrons[i].cron_id });
  }, 60_000);

  it("disables a cron whose stored schedule no longer evaluates, and fires the others", async () => {
    const { id, key } = await newWorkspace("Cron bad schedule");
    const made = async () =>
      json<Cron>(await post("/runs/crons", { assistant_id: "echo", schedule: FAR_SCHEDULE }, key));
    const [broken, fine] = [await made(), await made()];
    const db = workspaceDatabase(env, { workspaceId: id, kind: "crons" });
    const due = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    await db.update(crons).set({ nextRunDate: due }).run();
    await db.update(crons).set({ schedule: "61 * * * *" }).where(eq(crons.cronId, broken.cron_id)).run();
    expect(await fireCrons(new Date(), id)).toBe(1);
    const state = async (cronId: string) => json<Cron>(await call(`/runs/crons/${cronId}`, { key }));
    expect(await state(broken.cron_id)).toMatchObject({
      enabled: false,
      next_run_date: null,
      disabled_reason: expect.stringContaining("schedule cannot be evaluated"),
    });
    expect(await state(fine.cron_id)).toMatchObject({ enabled: true, next_run_date: fine.next_run_date });
  });

  it("fires at most its budget of crons per pass, and comes back at once for the rest", async () => {
    const { id, key } = await newWorkspace("Cron budget");
    for (let i = 0; i < 7; i++)
      await post("/runs/crons", { assistant_id: "echo", schedule: FAR_SCHEDULE, metadata: { i } }, key);
    const db = workspaceDatabase(env, { workspaceId: id, kind: "crons" });
    const due = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
    await db.update(crons).set({ nextRunDate: due }).run();
    // A budget of 10 subrequests: 5 firings a pass.
    const small = { ...env, SUBREQUEST_BUDGET: "10" };
    expect(cronFiringsPerAlarm(small)).toBe(5);
    const first = await fireDueCrons(small, db, id, new Date());
    expect(first.started).toBe(5);
    expect(first.next).toBeLessThanOrEqual(Date.now());
    expect(await db.select().from(crons).where(eq(crons.nextRunDate, due)).all()).toHaveLength(2);
    const second = await fireDueCrons(small, db, id, new Date());
    expect(second.started).toBe(2);
    expect(await db.select().from(crons).where(eq(crons.nextRunDate, due)).all()).toHaveLength(0);
    expect(second.next).toBeGreaterThan(Date.now());
  });
});
