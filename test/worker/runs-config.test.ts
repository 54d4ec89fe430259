// Issue 27, defect 2: a run config LangGraph cannot run with (max_concurrency 0 starts no task, so
// the run never ends) is refused wherever a config enters, fails at run time when it was stored
// before; and every run has a wall-clock limit (BG_JOB_TIMEOUT_SECS), past which it ends `timeout`.
import {
  createExecutionContext,
  env,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { crons } from "../../src/db/schema.ts";
import worker from "../../src/index.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import type { ThreadDO } from "../../src/threads/object/thread-do.ts";
import type { RunJson } from "../../src/threads/runs/types.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { BOOTSTRAP_KEY, call, FAR_SCHEDULE, fireCrons, json } from "./helpers.ts";
import { parseSse } from "./sse.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
const human = (content: string) => ({ messages: [{ role: "user", content }] });

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

const thread = async (threadId: string) => json<ThreadJson>(await call(`/threads/${threadId}`));
const getRun = async (threadId: string, runId: string) =>
  json<RunJson>(await call(`/threads/${threadId}/runs/${runId}`));
const join = async (threadId: string, runId: string) =>
  json<{ __error__?: { error: string; message: string } }>(await call(`/threads/${threadId}/runs/${runId}/join`));

type Issue = { loc: (string | number)[]; msg: string };

/** Each bad value of a config field, and the message naming it. */
const atLeastOne = (field: string) => ({
  message: `config.${field} must be an integer ≥ 1`,
  values: [0, -1, 1.5, "2", null, true, 2 ** 53, [], {}],
});
const BAD_FIELDS: Record<string, { message: string; values: unknown[] }> = {
  max_concurrency: atLeastOne("max_concurrency"),
  recursion_limit: atLeastOne("recursion_limit"),
  tags: { message: "config.tags must be a list of strings", values: ["a", 1, null, {}] },
  configurable: { message: "config.configurable must be an object", values: ["x", 1, null, []] },
};
const BAD_CONFIGURABLE: Record<string, { message: string; values: unknown[] }> = {
  checkpoint_ns: { message: "config.configurable.checkpoint_ns must be a string", values: [1, null, {}] },
  checkpoint_id: { message: "config.configurable.checkpoint_id must be a string", values: [1, {}, []] },
  checkpoint_map: { message: "config.configurable.checkpoint_map must be an object", values: ["x", 1, []] },
};

/** Every (config, message) pair to refuse. */
function badConfigs(): { config: Record<string, unknown>; field: string[]; message: string }[] {
  const cases: { config: Record<string, unknown>; field: string[]; message: string }[] = [];
  for (const [field, { message, values }] of Object.entries(BAD_FIELDS))
    for (const value of values) cases.push({ config: { [field]: value }, field: [field], message });
  for (const [key, { message, values }] of Object.entries(BAD_CONFIGURABLE))
    for (const value of values)
      cases.push({ config: { configurable: { [key]: value } }, field: ["configurable", key], message });
  return cases;
}

describe("run configs LangGraph cannot run with are refused with 422 where they enter", () => {
  it("every config field × bad value × entry point (runs, crons, assistants)", async () => {
    const threadId = await newThread();
    const assistant = await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }));
    const cron = await json<{ cron_id: string }>(
      await post("/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *", input: human("x") }),
    );
    const run = { assistant_id: "echo", input: human("never") };
    const entries: [string, string, (config: unknown) => unknown, (string | number)[]][] = [
      ["POST", `/threads/${threadId}/runs`, (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", `/threads/${threadId}/runs/stream`, (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", `/threads/${threadId}/runs/wait`, (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", "/runs", (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", "/runs/stream", (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", "/runs/wait", (config) => ({ ...run, config }), ["body", "config"]],
      ["POST", "/runs/batch", (config) => [{ ...run, config }], ["body", 0, "config"]],
      ["POST", "/runs/crons", (config) => ({ ...run, schedule: "* * * * *", config }), ["body", "config"]],
      [
        "POST",
        `/threads/${threadId}/runs/crons`,
        (config) => ({ ...run, schedule: "* * * * *", config }),
        ["body", "config"],
      ],
      ["PATCH", `/runs/crons/${cron.cron_id}`, (config) => ({ config }), ["body", "config"]],
      ["POST", "/assistants", (config) => ({ graph_id: "echo", config }), ["body", "config"]],
      ["PATCH", `/assistants/${assistant.assistant_id}`, (config) => ({ config }), ["body", "config"]],
    ];
    for (const { config, field, message } of badConfigs()) {
      for (const [method, path, body, loc] of entries) {
        const response = await call(path, { method, json: body(config) });
        const what = `${method} ${path} ${JSON.stringify(config)}`;
        expect(response.status, what).toBe(422);
        const { detail } = await json<{ detail: Issue[] }>(response);
        expect(detail, what).toContainEqual(expect.objectContaining({ loc: [...loc, ...field], msg: message }));
      }
    }
    // Nothing was created on the way: the thread never ran, the assistant and the cron kept their config.
    expect(await json<RunJson[]>(await call(`/threads/${threadId}/runs`))).toEqual([]);
    expect((await thread(threadId)).status).toBe("idle");
    expect((await json<{ config: unknown }>(await call(`/assistants/${assistant.assistant_id}`))).config).toEqual({});
  });

  it("accepts what LangGraph can run with, and LangGraph's own camelCase keys do not reach it", async () => {
    const configs = [
      { max_concurrency: 1, recursion_limit: 5, tags: ["t"], configurable: { checkpoint_ns: "", checkpoint_id: null } },
      // camelCase keys are kept as given but never passed to LangGraph (maxConcurrency 0 would hang).
      { maxConcurrency: 0, recursionLimit: 0, signal: {}, callbacks: {}, store: {} },
    ];
    for (const config of configs) {
      // A thread each: a thread's later runs inherit what earlier requests set.
      const threadId = await newThread();
      const response = await post(`/threads/${threadId}/runs/wait`, {
        assistant_id: "echo",
        input: human("ok"),
        config,
      });
      expect(response.status).toBe(200);
      const result = await json<{ messages?: unknown[]; __error__?: unknown }>(response);
      expect(result.__error__, JSON.stringify(config)).toBeUndefined();
      expect((await thread(threadId)).status).toBe("idle");
    }
  });
});

describe("a config stored before it was checked", () => {
  it("an assistant with max_concurrency 0 in D1: its run ends as error naming the field, the next run works", async () => {
    const assistant = await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }));
    await env.DB.prepare("UPDATE assistants SET config = ? WHERE assistant_id = ?")
      .bind(JSON.stringify({ max_concurrency: 0 }), assistant.assistant_id)
      .run();
    const threadId = await newThread();

    // runs/wait returns, with the error.
    const waited = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: assistant.assistant_id,
      input: human("x"),
    });
    expect(waited.status).toBe(200);
    const result = await json<{ __error__: { error: string; message: string } }>(waited);
    expect(result.__error__).toEqual({
      error: "InvalidConfig",
      message: expect.stringMatching(/cannot start: config\.max_concurrency must be an integer ≥ 1$/),
    });
    const [failed] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect(failed.status).toBe("error");
    expect((await thread(threadId)).status).toBe("error");

    // The thread is free: a run whose request sets a valid value runs to the end.
    const next = await post(`/threads/${threadId}/runs/wait`, {
      assistant_id: assistant.assistant_id,
      input: human("y"),
      config: { max_concurrency: 2 },
    });
    expect((await json<{ messages: unknown[] }>(next)).messages).toHaveLength(2);
    expect((await thread(threadId)).status).toBe("idle");
  });

  it("a cron whose stored payload has max_concurrency 0: its run ends as error, the thread is free", async () => {
    const threadId = await newThread();
    const cron = await json<{ cron_id: string; next_run_date: string }>(
      await post(`/threads/${threadId}/runs/crons`, {
        assistant_id: "echo",
        schedule: FAR_SCHEDULE,
        input: human("x"),
      }),
    );
    await workspaceDatabase(env, { workspaceId: DEFAULT_WORKSPACE_ID, kind: "crons" })
      .update(crons)
      .set({ payload: sql`json_set(payload, '$.config', json(${JSON.stringify({ max_concurrency: 0 })}))` })
      .where(eq(crons.cronId, cron.cron_id))
      .run();
    await fireCrons(new Date(cron.next_run_date));
    const [fired] = await json<RunJson[]>(await call(`/threads/${threadId}/runs`));
    expect((await join(threadId, fired.run_id)).__error__).toEqual({
      error: "InvalidConfig",
      message: `Run ${fired.run_id} cannot start: config.max_concurrency must be an integer ≥ 1`,
    });
    expect((await thread(threadId)).status).toBe("error");
    await call(`/runs/crons/${cron.cron_id}`, { method: "DELETE" });
  });
});

/** Sends a request through the Worker with other vars, as a deployment configured so would see it. */
async function callWith(vars: Record<string, string>, path: string, body: unknown): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://platform.test${path}`, {
      method: "POST",
      headers: { "X-Api-Key": BOOTSTRAP_KEY, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    Object.assign({}, env, vars),
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

describe("the wall-clock limit of a run (BG_JOB_TIMEOUT_SECS)", () => {
  const short = { BG_JOB_TIMEOUT_SECS: "0.3" };
  // Every node of `steps` pauses this long unless the run is stopped: it ends only by the limit.
  const endless = { assistant_id: "steps", input: { delay_ms: 3_600_000 } };
  const timedOut = (runId: string) => ({
    error: "TimeoutError",
    message: `Run ${runId} exceeded the wall-clock limit of 0.3 s (BG_JOB_TIMEOUT_SECS) and was stopped`,
  });

  it("stops a run over it: `timeout`, join and runs/wait return, the queued run runs, the thread is free", async () => {
    const threadId = await newThread();
    const stuck = await json<RunJson>(await callWith(short, `/threads/${threadId}/runs`, endless));
    // Queued behind it, with the deployment's limit (an hour here).
    const queued = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("after") }),
    );
    expect(queued.status).toBe("pending");

    expect((await join(threadId, stuck.run_id)).__error__).toEqual(timedOut(stuck.run_id));
    expect((await getRun(threadId, stuck.run_id)).status).toBe("timeout");
    const after = await join(threadId, queued.run_id);
    expect(after.__error__).toBeUndefined();
    expect((await getRun(threadId, queued.run_id)).status).toBe("success");
    expect((await thread(threadId)).status).toBe("idle");
    // The stopped run's steps never finished: no step wrote to the state.
    const state = await json<{ values: { items?: string[] } }>(await call(`/threads/${threadId}/state`));
    expect(state.values.items ?? []).toEqual([]);

    // runs/wait and a stream on their own run end with it too.
    const waited = await callWith(short, `/threads/${threadId}/runs/wait`, endless);
    expect(waited.status).toBe(200);
    const waitedRun = waited.headers.get("content-location")!.split("/").at(-1)!;
    expect((await json<{ __error__: unknown }>(waited)).__error__).toEqual(timedOut(waitedRun));
    const streamed = await callWith(short, `/threads/${threadId}/runs/stream`, endless);
    const events = parseSse(await streamed.text());
    const { run_id } = events[0].data as { run_id: string };
    expect(events.at(-1)).toMatchObject({ event: "error", data: timedOut(run_id) });
    expect((await thread(threadId)).status).toBe("error");
  });

  it("stateless runs/wait over it returns the timeout", async () => {
    const waited = await callWith(short, "/runs/wait", endless);
    expect(waited.status).toBe(200);
    expect((await json<{ __error__: { error: string } }>(waited)).__error__.error).toBe("TimeoutError");
  });

  /**
   * A run a restart cut off while running, with its stored deadline; then the alarm a restart fires.
   * The thread's index is left behind (as when the run's start had not reached it yet), so the alarm
   * also saves the record after the runs' work.
   */
  async function cutOff(deadline: number) {
    const threadId = await newThread();
    const run = await json<RunJson>(
      await post(`/threads/${threadId}/runs`, { assistant_id: "echo", input: human("again"), after_seconds: 3600 }),
    );
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    await runInDurableObject(stub, (instance: ThreadDO, state) => {
      state.storage.sql.exec(
        "UPDATE runs SET status = 'running', attempt = 1, not_before = 0, deadline = ? WHERE run_id = ?",
        deadline,
        run.run_id,
      );
      // A newer record than the index has: the run's start, not yet pushed (a sync under way for the
      // older one does not clear it).
      state.storage.sql.exec("UPDATE thread SET index_dirty = 1, updated_at = ?", new Date().toISOString());
      instance.reloadFromStorage();
    });
    await runDurableObjectAlarm(stub);
    return { threadId, runId: run.run_id, stub };
  }

  it("ends a run resumed after a restart past its deadline as `timeout` instead of running it again", async () => {
    const { threadId, runId } = await cutOff(Date.now() - 1);
    const result = await join(threadId, runId);
    expect(result.__error__).toEqual({ error: "TimeoutError", message: expect.stringContaining("wall-clock limit") });
    expect((await getRun(threadId, runId)).status).toBe("timeout");
    // The alarm settles the run, then saves the thread for its index: the record as it is then, not as
    // it was read before the run ended (which left the thread `busy` for good, with no run).
    expect((await thread(threadId)).status).toBe("error");
  });

  it("a run resumed before its deadline keeps it, and runs to the end", async () => {
    const deadline = Date.now() + 600_000;
    const { threadId, runId, stub } = await cutOff(deadline);
    expect((await join(threadId, runId)).__error__).toBeUndefined();
    expect((await getRun(threadId, runId)).status).toBe("success");
    const stored = await runInDurableObject(
      stub,
      (_instance: ThreadDO, state) =>
        state.storage.sql.exec<{ deadline: number }>("SELECT deadline FROM runs WHERE run_id = ?", runId).one()
          .deadline,
    );
    expect(stored).toBe(deadline);
  });
});

describe("threads whose run table predates the wall-clock limit", () => {
  it("get its columns on first use, and their runs run under the limit", async () => {
    const threadId = await newThread();
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${threadId}`));
    // The run table as threads made it before timeout_ms and deadline.
    await runInDurableObject(stub, (instance: ThreadDO, state) => {
      state.storage.sql.exec(`CREATE TABLE runs (
        run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, assistant_id TEXT NOT NULL, graph_id TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, status TEXT NOT NULL, metadata TEXT NOT NULL,
        kwargs TEXT NOT NULL, multitask_strategy TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,
        not_before INTEGER NOT NULL, started_at TEXT, ended_at TEXT, result TEXT, error TEXT, auth_user TEXT)`);
      instance.reloadFromStorage();
    });
    const waited = await callWith({ BG_JOB_TIMEOUT_SECS: "0.3" }, `/threads/${threadId}/runs/wait`, {
      assistant_id: "steps",
      input: { delay_ms: 3_600_000 },
    });
    expect((await json<{ __error__: { error: string } }>(waited)).__error__.error).toBe("TimeoutError");
    const [row] = await runInDurableObject(stub, (_instance: ThreadDO, state) =>
      state.storage.sql
        .exec<{ timeout_ms: number; deadline: number }>("SELECT timeout_ms, deadline FROM runs")
        .toArray(),
    );
    expect(row.timeout_ms).toBe(300);
    expect(row.deadline).toBeGreaterThan(0);
  });
});
