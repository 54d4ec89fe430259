// Store items, crons and A2A tasks live in workspace partitions: their paths write no D1 row (the
// global database keeps what is global), counted on the Worker's own D1 binding.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { fireDueCrons } from "../../src/crons/service.ts";
import worker from "../../src/index.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { legacyRowsRemain } from "../../src/workspace/migration.ts";
import { BOOTSTRAP_KEY, call, FAR_SCHEDULE, json, tracesStored } from "./helpers.ts";

/** An env whose D1 binding records every statement the Worker prepares on it. */
function recording() {
  const statements: string[] = [];
  // The binding and its read-replication sessions (the hot path's reads go through one).
  const record = <T extends D1Database | D1DatabaseSession>(db: T): T =>
    new Proxy(db, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property === "prepare")
          return (sql: string) => {
            statements.push(sql);
            return target.prepare(sql);
          };
        if (property === "withSession")
          return (constraint?: string) => record((target as D1Database).withSession(constraint));
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const DB = record(env.DB);
  const writes = () => statements.filter((sql) => /^\s*(insert|update|delete|replace)\b/i.test(sql));
  /** Tables read, in order, by their `from`. */
  const reads = () => statements.map((sql) => /\bfrom\s+"?(\w+)"?/i.exec(sql)?.[1] ?? sql);
  return { env: { ...env, DB } as Env, statements, writes, reads };
}

/** A request through the Worker's fetch handler, with `recorded`'s env. */
async function send(recorded: ReturnType<typeof recording>, method: string, path: string, body?: unknown) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`http://platform.test${path}`, {
      method,
      headers: { "X-Api-Key": BOOTSTRAP_KEY, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    recorded.env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
  return response;
}

describe("partitioned paths touch no D1 row", () => {
  // An isolate's first request sets up the default organization and workspace, and its first look at
  // a workspace's assistants writes the system assistants: once each, not per operation.
  // The isolate also reads, once, whether rows of the old layout remain to move (none: a new deployment).
  beforeAll(async () => {
    expect((await call("/assistants/echo")).status).toBe(200);
    expect(await legacyRowsRemain(env, "store_items")).toBe(false);
  });

  it("store puts, gets, searches, lists and deletes query no D1 at all", async () => {
    const recorded = recording();
    const ns = ["d1-free", crypto.randomUUID()];
    await send(recorded, "PUT", "/store/items", { namespace: ns, key: "k", value: { a: 1 } });
    await send(recorded, "PUT", "/store/items", { namespace: ns, key: "t", value: { a: 2 }, ttl: 5 });
    const item = await json<{ value: unknown }>(
      await send(recorded, "GET", `/store/items?namespace=${ns.join(".")}&key=k`),
    );
    expect(item.value).toEqual({ a: 1 });
    await send(recorded, "POST", "/store/items/search", { namespace_prefix: ns, refresh_ttl: true });
    await send(recorded, "POST", "/store/namespaces", { prefix: ns });
    await send(recorded, "DELETE", "/store/items", { namespace: ns, key: "k" });
    expect(recorded.statements).toEqual([]);
  });

  it("a cron's create, patch, search, firing and delete write no D1 row", async () => {
    const recorded = recording();
    const { thread_id } = await json<{ thread_id: string }>(await call("/threads", { method: "POST", json: {} }));
    const cron = await json<{ cron_id: string; next_run_date: string }>(
      await send(recorded, "POST", `/threads/${thread_id}/runs/crons`, {
        assistant_id: "echo",
        schedule: FAR_SCHEDULE,
      }),
    );
    await send(recorded, "PATCH", `/runs/crons/${cron.cron_id}`, { metadata: { a: 1 } });
    await send(recorded, "POST", "/runs/crons/search", { thread_id });
    await send(recorded, "POST", "/runs/crons/count", { thread_id });
    // Creating reads the organization's plan and the assistant (global data), nothing else.
    expect(recorded.reads()).toEqual(["organizations", "assistants"]);

    const firing = recording();
    const db = workspaceDatabase(env, { workspaceId: DEFAULT_WORKSPACE_ID, kind: "crons" });
    const fired = await fireDueCrons(firing.env, db, DEFAULT_WORKSPACE_ID, new Date(cron.next_run_date));
    expect(fired.started).toBe(1);
    // Firing reads the workspace's plan, and the assistant of each run unless this isolate read it for
    // a run in the last few seconds (its cache of assistants for runs).
    expect(firing.reads().filter((table) => table !== "assistants")).toEqual(["workspaces"]);
    expect(firing.reads().filter((table) => table === "assistants").length).toBeLessThanOrEqual(1);
    await send(recorded, "DELETE", `/runs/crons/${cron.cron_id}`);
    expect([...recorded.writes(), ...firing.writes()]).toEqual([]);
    // The fired run and its trace are stored before the file ends (see tracesStored).
    await tracesStored([thread_id]);
  });

  it("an A2A task is recorded and found with no D1 write", async () => {
    const recorded = recording();
    const rpc = (method: string, params: unknown) => ({ jsonrpc: "2.0", id: 1, method, params });
    const sent = await json<{ result: { id: string; kind: string; contextId: string } }>(
      await send(
        recorded,
        "POST",
        "/a2a/echo",
        rpc("message/send", {
          message: { messageId: "m", role: "user", parts: [{ kind: "text", text: "hi" }] },
          configuration: { blocking: true },
        }),
      ),
    );
    const found = await json<{ result: { id: string } }>(
      await send(recorded, "POST", "/a2a/echo", rpc("tasks/get", { id: sent.result.id })),
    );
    expect(found.result.id).toBe(sent.result.id);
    await tracesStored([sent.result.contextId]);
    expect(recorded.writes()).toEqual([]);
    // Only the assistant is read from D1 (at most once per request; a run's may come from the isolate's cache).
    expect(recorded.reads().filter((table) => table !== "assistants")).toEqual([]);
  });
});
