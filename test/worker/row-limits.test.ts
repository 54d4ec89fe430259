import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { storedErrorMessage } from "../../src/core/json-size.ts";
import {
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_FILTER_BYTES,
  MAX_JSON_FIELD_BYTES,
  MAX_THREAD_ROW_STATE_BYTES,
} from "../../src/core/limits.ts";
import { isPermanentWriteError } from "../../src/db/client.ts";
import { durableObjectSql } from "../../src/db/sql.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { nextAlarmTime } from "../../src/threads/object/alarm-planner.ts";
import { boundedRunMetadata, MAX_CHECKPOINT_RUN_METADATA_BYTES } from "../../src/threads/object/checkpointer.ts";
import { stateColumns, type ThreadRecord, ThreadRecords } from "../../src/threads/object/record.ts";
import { MAX_RETRY_MS, retryDelay } from "../../src/threads/object/search-index-sync.ts";
import { indexProjection } from "../../src/threads/search-index.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { call, json } from "./helpers.ts";
import { onIndexShard, shardOf } from "./thread-index-helpers.ts";

// The workerd tests run with MAX_JSON_FIELD_BYTES = 8192 (vitest.config.ts): metadata, config and
// context may hold 8 KiB of JSON, store values and cron payloads 32 KiB.
const FIELD = 8192;
const STORE_VALUE = 4 * FIELD;
const CRON_PAYLOAD = 4 * FIELD;

/** A JSON object of exactly `bytes` bytes (`{"k":"xx…"}`). */
const sized = (bytes: number) => ({ k: "x".repeat(bytes - 8) });

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });
const patch = (path: string, body: unknown) => call(path, { method: "PATCH", json: body });

async function expectTooLarge(response: Response, field: string, bytes: number, limit: number) {
  expect(response.status, field).toBe(422);
  expect(JSON.stringify(await response.json())).toContain(
    `${field} is ${bytes} bytes of JSON; the limit is ${limit} bytes`,
  );
}

describe("row bounds of stored JSON", () => {
  it("the production bounds keep every row under D1's 2,000,000 bytes", () => {
    expect(MAX_JSON_FIELD_BYTES).toBe(256 * 1024);
    // A thread row: metadata, config and request config, plus values and interrupts.
    expect(3 * MAX_JSON_FIELD_BYTES + MAX_THREAD_ROW_STATE_BYTES).toBeLessThan(2_000_000);
  });

  it("assistants: config, context and metadata up to the bound are stored whole; one byte more is a 422", async () => {
    for (const field of ["config", "context", "metadata"]) {
      const ok = await post("/assistants", { graph_id: "echo", [field]: sized(FIELD) });
      expect(ok.status, field).toBe(200);
      const created = await json<Record<string, unknown> & { assistant_id: string }>(ok);
      const read = await json<Record<string, unknown>>(await call(`/assistants/${created.assistant_id}`));
      expect(read[field], field).toEqual(sized(FIELD));
      await expectTooLarge(
        await post("/assistants", { graph_id: "echo", [field]: sized(FIELD + 1) }),
        field,
        FIELD + 1,
        FIELD,
      );
      if (field !== "metadata")
        await expectTooLarge(
          await patch(`/assistants/${created.assistant_id}`, { [field]: sized(FIELD + 1) }),
          field,
          FIELD + 1,
          FIELD,
        );
    }
    // Patched metadata is merged, and measured merged.
    const a = await json<{ assistant_id: string }>(
      await post("/assistants", { graph_id: "echo", metadata: { a: "x".repeat(5000) } }),
    );
    const merged = await patch(`/assistants/${a.assistant_id}`, { metadata: { b: "y".repeat(5000) } });
    expect(merged.status).toBe(422);
    expect(JSON.stringify(await merged.json())).toContain("metadata is 10015 bytes of JSON; the limit is 8192 bytes");
    expect((await json<{ version: number }>(await call(`/assistants/${a.assistant_id}`))).version).toBe(1);
  });

  it("threads: metadata up to the bound on create; over it, on create or merged by a patch, is a 422", async () => {
    const ok = await post("/threads", { metadata: sized(FIELD) });
    expect(ok.status).toBe(200);
    const thread = await json<{ thread_id: string; metadata: unknown }>(ok);
    expect(thread.metadata).toEqual(sized(FIELD));
    const over = await post("/threads", { metadata: sized(FIELD + 1) });
    expect(over.status).toBe(422);
    expect(JSON.stringify(await over.json())).toContain(
      `metadata is ${FIELD + 1} bytes of JSON; the limit is ${FIELD} bytes`,
    );

    const small = await json<{ thread_id: string }>(await post("/threads", { metadata: { a: "x".repeat(5000) } }));
    const merged = await patch(`/threads/${small.thread_id}`, { metadata: { b: "y".repeat(5000) } });
    expect(merged.status).toBe(422);
    expect(JSON.stringify(await merged.json())).toContain("metadata is 10015 bytes of JSON; the limit is 8192 bytes");
    expect((await json<{ metadata: unknown }>(await call(`/threads/${small.thread_id}`))).metadata).toEqual({
      a: "x".repeat(5000),
    });
  });

  it("runs: metadata, config and context over the bound are a 422 (they are copied into rows and checkpoints)", async () => {
    const thread = await json<{ thread_id: string }>(await post("/threads", {}));
    for (const field of ["metadata", "config", "context"]) {
      await expectTooLarge(
        await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: "echo", [field]: sized(FIELD + 1) }),
        field,
        FIELD + 1,
        FIELD,
      );
    }
    const ok = await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: "echo",
      input: { messages: [{ role: "user", content: "hi" }] },
      metadata: sized(FIELD),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ messages: expect.any(Array) });
  });

  it("runs: the thread's request config, merged over runs, keeps the bound (422 on the run that would pass it)", async () => {
    const thread = await json<{ thread_id: string }>(await post("/threads", {}));
    const run = (key: string) =>
      post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: "echo",
        input: { messages: [{ role: "user", content: key }] },
        config: { configurable: { [key]: "x".repeat(5000) } },
      });
    const first = await run("a");
    expect(first.status).toBe(200);
    // /runs/wait streams its answer: the run has ended once the body is read.
    await first.text();
    const second = await run("b");
    expect(second.status).toBe(422);
    expect(JSON.stringify(await second.json())).toContain(
      "config is 10032 bytes of JSON; the limit is 8192 bytes (merged with the config of the thread's earlier runs)",
    );
    const runs = await json<unknown[]>(await call(`/threads/${thread.thread_id}/runs`));
    expect(runs).toHaveLength(1);
  });

  it("crons: payload and metadata bounds, on create and merged by a patch", async () => {
    const base = { assistant_id: "echo", schedule: "0 0 1 1 *" };
    // The payload here is {"input":{"k":"…"}}: 10 bytes around the input.
    const ok = await post("/runs/crons", { ...base, input: sized(CRON_PAYLOAD - 10) });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const cron = await json<{ cron_id: string; payload: { input: unknown } }>(ok);
    expect(cron.payload.input).toEqual(sized(CRON_PAYLOAD - 10));
    await expectTooLarge(
      await post("/runs/crons", { ...base, input: sized(CRON_PAYLOAD - 9) }),
      "payload",
      CRON_PAYLOAD + 1,
      CRON_PAYLOAD,
    );
    await expectTooLarge(
      await patch(`/runs/crons/${cron.cron_id}`, { config: { configurable: { a: "x".repeat(10) } } }),
      "payload",
      CRON_PAYLOAD + 45,
      CRON_PAYLOAD,
    );
    await expectTooLarge(
      await post("/runs/crons", { ...base, metadata: sized(FIELD + 1) }),
      "metadata",
      FIELD + 1,
      FIELD,
    );
    await expectTooLarge(await post("/runs/crons", { ...base, config: sized(FIELD + 1) }), "config", FIELD + 1, FIELD);
  });

  it("store: a value up to the bound is stored whole; one byte more is a 422", async () => {
    const put = (value: unknown) =>
      call("/store/items", { method: "PUT", json: { namespace: ["rows"], key: "k", value } });
    expect((await put(sized(STORE_VALUE))).status).toBe(204);
    const item = await json<{ value: unknown }>(await call("/store/items?namespace=rows&key=k"));
    expect(item.value).toEqual(sized(STORE_VALUE));
    await expectTooLarge(await put(sized(STORE_VALUE + 1)), "value", STORE_VALUE + 1, STORE_VALUE);
  });
});

describe("filter bounds", () => {
  const filters: [string, (filter: Record<string, unknown>) => Promise<Response>][] = [
    ["/threads/count metadata", (f) => post("/threads/count", { metadata: f })],
    ["/threads/search values", (f) => post("/threads/search", { values: f })],
    ["/assistants/search metadata", (f) => post("/assistants/search", { metadata: f })],
    ["/assistants/{id}/versions metadata", (f) => post("/assistants/echo/versions", { metadata: f })],
    ["/runs/crons/count metadata", (f) => post("/runs/crons/count", { metadata: f })],
    ["/store/items/search filter", (f) => post("/store/items/search", { filter: f })],
  ];

  it("accepts a filter of MAX_FILTER_BYTES and answers 422 one byte over, naming the size and the limit", async () => {
    expect(MAX_FILTER_BYTES).toBe(16 * 1024);
    for (const [name, send] of filters) {
      expect((await send(sized(MAX_FILTER_BYTES))).status, name).toBe(200);
      const over = await send(sized(MAX_FILTER_BYTES + 1));
      expect(over.status, name).toBe(422);
      expect(JSON.stringify(await over.json()), name).toContain(
        `filter is ${MAX_FILTER_BYTES + 1} bytes of JSON; the limit is ${MAX_FILTER_BYTES} bytes`,
      );
    }
  });

  it("answers 413 to a 2 MiB filter (the body limit), never a 500", async () => {
    for (const [name, send] of filters) expect((await send(sized(2 * 1024 * 1024))).status, name).toBe(413);
  });
});

const record = (fields: Partial<ThreadRecord>): ThreadRecord => ({
  threadId: "t",
  workspaceId: "w",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  stateUpdatedAt: "2026-01-01T00:00:00.000Z",
  metadata: {},
  status: "interrupted",
  config: {},
  requestConfig: {},
  values: null,
  interrupts: {},
  error: null,
  ttl: null,
  indexDirty: false,
  ...fields,
});

describe("thread rows", () => {
  const MiB = 1024 * 1024;
  const interrupts = { task: [{ id: "i1", value: "d".repeat(0.6 * MiB) }] };

  it("keep values and interrupts whole while together within the budget", () => {
    const state = stateColumns(record({ values: { a: "v".repeat(1000) }, interrupts }), MiB);
    expect(state.oversize).toBe(false);
    expect(JSON.parse(state.interrupts)).toEqual(interrupts);
    expect(JSON.parse(state.values!)).toEqual({ a: "v".repeat(1000) });
  });

  it("past it, keep no values and interrupts as ids only (reads take both from the checkpoint)", () => {
    const state = stateColumns(record({ values: { a: "v".repeat(0.6 * MiB) }, interrupts }), MiB);
    expect(state).toEqual({ values: null, interrupts: JSON.stringify({ task: [{ id: "i1" }] }), oversize: true });
  });

  it("a thread whose state passes the row budget answers get with its values and interrupts from the checkpoint", async () => {
    const thread = await json<{ thread_id: string }>(await post("/threads", {}));
    const paused = await json<{ __interrupt__: unknown[]; items: string[] }>(
      await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: "steps", input: { ask_human: true } }),
    );
    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${thread.thread_id}`));
    // The row as a run leaves it when its state is larger than the budget (here: values of 1.5 MiB).
    const row = await runInDurableObject(stub, async (_instance, state) => {
      const records = new ThreadRecords(durableObjectSql(state.storage));
      const current = records.read()!;
      records.write({ ...current, values: { pad: "p".repeat(1.5 * MiB) } });
      return state.storage.sql.exec("SELECT state_values, interrupts, values_oversize FROM thread").one();
    });
    expect(row.state_values).toBeNull();
    expect(row.values_oversize).toBe(1);
    // The row keeps the interrupts' ids only (what pending-interrupt checks need).
    const ids = (paused.__interrupt__ as { id: string }[]).map(({ id }) => ({ id }));
    expect(Object.values(JSON.parse(String(row.interrupts))).flat()).toEqual(ids);
    const read = await json<ThreadJson>(await call(`/threads/${thread.thread_id}`));
    expect(read.values).toMatchObject({ items: paused.items });
    expect(Object.values(read.interrupts).flat()).toEqual(paused.__interrupt__);
  });

  it("the D1 index row always fits: values, then interrupts' contents, then config are left out", () => {
    const big = record({
      metadata: sized(256 * 1024),
      config: sized(900 * 1024),
      values: { a: "v".repeat(0.6 * MiB) },
      interrupts,
    });
    const projection = indexProjection(big);
    expect(projection.valuesIndexed).toBe(false);
    expect(projection.values).toBeNull();
    expect(projection.interrupts).toEqual({ task: [{ id: "i1" }] });
    const bytes = JSON.stringify({ ...projection, metadata: big.metadata }).length;
    expect(bytes).toBeLessThan(2_000_000);
    const huge = indexProjection(record({ metadata: sized(256 * 1024), config: sized(1.8 * MiB) }));
    expect(huge.config).toEqual({});
    // Normal sizes are indexed whole.
    const normal = indexProjection(
      record({ values: { a: 1 }, interrupts: { t: [{ id: "x", value: 1 }] }, config: { c: 1 } }),
    );
    expect(normal).toEqual({
      values: { a: 1 },
      valuesIndexed: true,
      stateBytes: 0,
      interrupts: { t: [{ id: "x", value: 1 }] },
      config: { c: 1 },
    });
  });
});

describe("run errors", () => {
  it("keep at most MAX_ERROR_MESSAGE_LENGTH characters of a failed run's message in the run and thread rows", () => {
    expect(storedErrorMessage("boom")).toBe("boom");
    const cut = storedErrorMessage("e".repeat(5 * MAX_ERROR_MESSAGE_LENGTH));
    expect(cut).toBe(`${"e".repeat(MAX_ERROR_MESSAGE_LENGTH)}…`);
  });
});

describe("checkpoint metadata", () => {
  it("copies the run's metadata whole up to its bound; past it, the run's ids and the keys that still fit", () => {
    expect(MAX_CHECKPOINT_RUN_METADATA_BYTES).toBe(256 * 1024);
    const small = { run_id: "r", team: "ops" };
    expect(boundedRunMetadata(small)).toBe(small);
    const big = {
      notes: "n".repeat(200 * 1024),
      draft: "d".repeat(100 * 1024),
      run_id: "r",
      assistant_id: "a",
      team: "ops",
    };
    const kept = boundedRunMetadata(big);
    expect(kept).toEqual({ run_id: "r", assistant_id: "a", notes: big.notes, team: "ops" });
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(MAX_CHECKPOINT_RUN_METADATA_BYTES);
  });
});

describe("index sync", () => {
  it("tells permanent D1 errors from transient ones, and backs off transient ones up to a cap", () => {
    expect(isPermanentWriteError(new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG"))).toBe(true);
    expect(
      isPermanentWriteError(new Error("D1_ERROR: NOT NULL constraint failed: threads.metadata: SQLITE_CONSTRAINT")),
    ).toBe(true);
    expect(isPermanentWriteError(new Error("D1_ERROR: D1 DB is overloaded. Too many requests queued."))).toBe(false);
    expect(isPermanentWriteError(new Error("Network connection lost."))).toBe(false);
    expect([1, 2, 3, 4].map(retryDelay)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelay(50)).toBe(MAX_RETRY_MS);
    const now = Date.now();
    expect(nextAlarmTime(record({ indexDirty: true }), null, 40_000)).toBeGreaterThanOrEqual(now + 40_000);
    expect(nextAlarmTime(record({ indexDirty: true, indexError: "too big" }), null)).toBeNull();
  });

  it("stops retrying a row the index refuses for good, keeps the thread, and tries again when the thread changes", async () => {
    const thread = await json<{ thread_id: string }>(await post("/threads", { metadata: { v: 1 } }));
    // The index shard refuses every update of this thread's row, as SQLite refuses a row over 2 MB.
    await onIndexShard(
      shardOf(thread.thread_id),
      `CREATE TRIGGER refuse_row BEFORE UPDATE ON threads WHEN NEW.thread_id = '${thread.thread_id}'
       BEGIN SELECT RAISE(ABORT, 'string or blob too big'); END`,
    );
    const patched = await patch(`/threads/${thread.thread_id}`, { metadata: { v: 2 } });
    expect(patched.status).toBe(200);
    expect((await json<{ metadata: unknown }>(await call(`/threads/${thread.thread_id}`))).metadata).toEqual({ v: 2 });

    const stub = env.THREAD.get(env.THREAD.idFromName(`${DEFAULT_WORKSPACE_ID}:${thread.thread_id}`));
    const stored = await runInDurableObject(stub, async (_instance, state) => ({
      alarm: await state.storage.getAlarm(),
      row: state.storage.sql.exec("SELECT index_dirty, index_error FROM thread").one(),
    }));
    // Stale and said so, with no alarm left to retry it.
    expect(stored.alarm).toBeNull();
    expect(stored.row.index_dirty).toBe(1);
    expect(String(stored.row.index_error)).toContain("string or blob too big");
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    const indexed = await json<{ metadata: unknown }[]>(await post("/threads/search", { ids: [thread.thread_id] }));
    expect(indexed[0].metadata).toEqual({ v: 1 });

    // Once the shard takes the row again, the next change reaches the index.
    await onIndexShard(shardOf(thread.thread_id), "DROP TRIGGER refuse_row");
    expect((await patch(`/threads/${thread.thread_id}`, { metadata: { v: 3 } })).status).toBe(200);
    const reindexed = await json<{ metadata: unknown }[]>(await post("/threads/search", { ids: [thread.thread_id] }));
    expect(reindexed[0].metadata).toEqual({ v: 3 });
  });
});
