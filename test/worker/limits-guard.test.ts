// The limits guard (src/limits-guard/): what Cloudflare refuses and local workerd accepts fails here too.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client.ts";
import worker from "../../src/index.ts";
import { guardEnv } from "../../src/limits-guard/bindings.ts";
import { guardD1 } from "../../src/limits-guard/d1.ts";
import { guardWorker, registerMemoryProbe } from "../../src/limits-guard/index.ts";
import { inInvocation, invocationCounts } from "../../src/limits-guard/invocation.ts";
import { guardLimits, type InvocationLimits, MAX_SQL_VALUE_BYTES } from "../../src/limits-guard/limits.ts";
import { MAX_ISOLATE_MEMORY_BYTES } from "../../src/limits-guard/memory.ts";
import { threadStub } from "../../src/threads/client.ts";

const PAID = guardLimits({ LIMITS_GUARD: "paid" })!;
const FREE = guardLimits({ LIMITS_GUARD: "free" })!;
const OVER = "x".repeat(2_100_000);
const HALF = "y".repeat(1_100_000);
const TOO_BIG = "string or blob too big: SQLITE_TOOBIG";
/** A thousand local round trips take a few seconds on a busy machine. */
const THOUSAND_CALLS_MS = 60_000;

/** `n` comma-separated placeholders. */
const args = (n: number) => Array.from({ length: n }, (_, i) => `'${i}'`).join(", ");

describe("the guard's switch", () => {
  it("is on in the test suites, with the Paid plan's limits", () => {
    expect(env.LIMITS_GUARD).toBe("paid");
    expect(PAID).toMatchObject({ subrequests: 1000, d1Queries: 1000 });
    expect(FREE).toMatchObject({ subrequests: 50, d1Queries: 50 });
    expect(guardLimits({})).toBeNull();
    expect(guardLimits({ LIMITS_GUARD: "off" })).toBeNull();
    expect(() => guardLimits({ LIMITS_GUARD: "toString" })).toThrow(/LIMITS_GUARD must be/);
  });
});

describe("D1", () => {
  const db = guardD1(env.DB, PAID);

  it("refuses a value over 2,000,000 bytes, which local D1 accepts without the guard", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS guard_probe (id INTEGER, a TEXT, b TEXT)");
    await expect(db.prepare("INSERT INTO guard_probe (id, a) VALUES (?, ?)").bind(1, OVER).run()).rejects.toThrow(
      `D1_ERROR: ${TOO_BIG}`,
    );
    const bytes = new Uint8Array(MAX_SQL_VALUE_BYTES + 1);
    await expect(db.prepare("INSERT INTO guard_probe (id, a) VALUES (?, ?)").bind(2, bytes).run()).rejects.toThrow(
      TOO_BIG,
    );
    // Counted in UTF-8: 700,000 "é" are 1,400,000 bytes, 700,000 "€" 2,100,000.
    await db.prepare("INSERT INTO guard_probe (id, a) VALUES (?, ?)").bind(3, "é".repeat(700_000)).run();
    await expect(
      db.prepare("INSERT INTO guard_probe (id, a) VALUES (?, ?)").bind(4, "€".repeat(700_000)).run(),
    ).rejects.toThrow(TOO_BIG);
    // Off: local D1 stores it.
    await env.DB.prepare("INSERT INTO guard_probe (id, a) VALUES (?, ?)").bind(5, OVER).run();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM guard_probe WHERE id IN (1, 2, 4)").first("n")).toBe(0);
  });

  it("refuses a row whose values add up to more than 2 MB, not several rows that do", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS guard_rows (id INTEGER, a TEXT, b TEXT)");
    await expect(
      db.prepare("INSERT INTO guard_rows (id, a, b) VALUES (?, ?, ?)").bind(1, HALF, HALF).run(),
    ).rejects.toThrow(TOO_BIG);
    await expect(
      db.prepare("UPDATE guard_rows SET a = ?, b = ? WHERE id = ?").bind(HALF, HALF, 1).run(),
    ).rejects.toThrow(TOO_BIG);
    await db.prepare("INSERT INTO guard_rows (id, a) VALUES (?, ?), (?, ?)").bind(2, HALF, 3, HALF).run();
    // An upsert binds the value for its insert and for its update; the row holds one of them.
    await env.DB.exec("CREATE UNIQUE INDEX IF NOT EXISTS guard_rows_id ON guard_rows (id)");
    const upsert = "INSERT INTO guard_rows (id, a) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET a = ?";
    await db.prepare(upsert).bind(2, HALF, HALF).run();
    await db.batch([
      db.prepare("UPDATE guard_rows SET b = ? WHERE id = ?").bind("b", 2),
      db.prepare("UPDATE guard_rows SET b = ? WHERE id = ?").bind("b", 3),
    ]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM guard_rows WHERE b = 'b'").first("n")).toBe(2);
  });

  it("refuses a row read back over 2 MB (assembled in SQL), which could not exist deployed", async () => {
    await env.DB.exec("CREATE TABLE IF NOT EXISTS guard_read (id INTEGER, a TEXT)");
    await db.batch([
      db.prepare("INSERT INTO guard_read VALUES (?, ?)").bind(1, HALF),
      db.prepare("INSERT INTO guard_read VALUES (?, ?)").bind(2, HALF),
    ]);
    const assembled = "SELECT group_concat(a, '') AS joined FROM guard_read";
    await expect(db.prepare(assembled).all()).rejects.toThrow(TOO_BIG);
    await expect(db.prepare(assembled).first("joined")).rejects.toThrow(TOO_BIG);
    await expect(db.prepare(assembled).raw()).rejects.toThrow(TOO_BIG);
    await expect(db.prepare("SELECT a, a AS b FROM guard_read WHERE id = 1").all()).rejects.toThrow(TOO_BIG);
    expect(await db.prepare("SELECT length(a) AS n FROM guard_read WHERE id = 1").first("n")).toBe(1_100_000);
    // Off: local D1 answers it.
    expect(((await env.DB.prepare(assembled).first("joined")) as string).length).toBe(2_200_000);
  });

  it("refuses a function of 33 arguments, not one of 32, nor 33 columns of a table", async () => {
    await expect(db.prepare(`SELECT json_array(${args(33)}) AS a`).all()).rejects.toThrow(
      "D1_ERROR: too many arguments on function json_array: SQLITE_ERROR",
    );
    await expect(db.prepare(`SELECT coalesce(NULL, max(${args(33)})) AS a`).first()).rejects.toThrow(
      "too many arguments on function max",
    );
    expect(
      await db.prepare(`SELECT json_array(${args(30)}, 'a(b, c)', "x") AS a FROM (SELECT 1 AS x)`).first("a"),
    ).toContain('"29","a(b, c)",1');
    const columns = Array.from({ length: 40 }, (_, i) => `c${i}`);
    await db.exec(`CREATE TABLE IF NOT EXISTS guard_wide (${columns.map((c) => `${c} TEXT`).join(", ")})`);
    await db
      .prepare(`INSERT INTO guard_wide (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
      .bind(...columns)
      .run();
    // Off: local D1 runs it.
    expect(await env.DB.prepare(`SELECT json_array(${args(33)}) AS a`).first("a")).toContain('"32"');
  });

  it(
    "counts the queries of one invocation: the 1,000th runs, the 1,001st fails as D1 fails it",
    async () => {
      const select = db.prepare("SELECT 1 AS one");
      await inInvocation(PAID, null, async () => {
        for (let i = 0; i < 999; i++) await select.first();
        await db.batch([select]);
        expect(invocationCounts()).toEqual({ subrequests: 1000, d1Queries: 1000 });
        await expect(select.first()).rejects.toThrow("D1_ERROR: Too many API requests by single worker invocation.");
      });
      // A new invocation starts from zero; outside one nothing is counted.
      await inInvocation(PAID, null, () => select.first());
      expect(invocationCounts()).toBeNull();
    },
    THOUSAND_CALLS_MS,
  );

  it("counts 50 queries on the Free plan", async () => {
    const select = guardD1(env.DB, FREE).prepare("SELECT 1 AS one");
    await inInvocation(FREE, null, async () => {
      for (let i = 0; i < 50; i++) await select.first();
      await expect(select.all()).rejects.toThrow("Too many API requests");
    });
  });
});

describe("the D1 client", () => {
  it("is built once per binding (guarded or not) and still counts every query of an invocation", async () => {
    // Building a drizzle client reads the whole schema again: every call used to pay for it.
    expect(database(env)).toBe(database(env));
    expect(database({ ...env, LIMITS_GUARD: "off" })).toBe(database({ ...env, LIMITS_GUARD: "off" }));
    expect(database({ ...env, LIMITS_GUARD: "off" })).not.toBe(database(env));
    const limits = guardLimits(env)!;
    const counts = await inInvocation(limits, null, async () => {
      await database(env).$client.prepare("SELECT 1").all();
      await database(env).$client.prepare("SELECT 2").all();
      return invocationCounts();
    });
    expect(counts?.d1Queries).toBe(2);
  });
});

describe("Durable Object SQLite", () => {
  const metrics = (name: string) => env.METRICS.get(env.METRICS.idFromName(name));
  type Sql = { exec(query: string, ...bindings: unknown[]): { toArray(): unknown[]; one(): unknown } };
  const sqlOf = (instance: unknown) => (instance as { ctx: DurableObjectState }).ctx.storage.sql as unknown as Sql;

  // The instance's `ctx` is the one the exported (guarded) class hands its object.
  it("refuses a value over 2 MB, a row over 2 MB and 33 arguments in the platform's objects", async () => {
    await runInDurableObject(metrics("guard-sql"), (instance, state) => {
      const sql = sqlOf(instance);
      sql.exec("CREATE TABLE probe (a TEXT, b TEXT)");
      expect(() => sql.exec("INSERT INTO probe (a) VALUES (?)", OVER)).toThrow(TOO_BIG);
      expect(() => sql.exec("INSERT INTO probe (a, b) VALUES (?, ?)", HALF, HALF)).toThrow(TOO_BIG);
      expect(() => sql.exec(`SELECT json_object(${args(34)}) AS o`)).toThrow(
        "too many arguments on function json_object: SQLITE_ERROR",
      );
      sql.exec("INSERT INTO probe (a) VALUES (?)", HALF);
      sql.exec("INSERT INTO probe (a) VALUES (?)", HALF);
      const assembled = "SELECT json_group_array(a) AS all_a FROM probe";
      expect(() => sql.exec(assembled).toArray()).toThrow(TOO_BIG);
      expect(() => sql.exec(assembled).one()).toThrow(TOO_BIG);
      expect(() => [...(sql.exec(assembled) as unknown as Iterable<unknown>)]).toThrow(TOO_BIG);
      expect(sql.exec("SELECT count(*) AS n FROM probe").one()).toEqual({ n: 2 });
      // Off (the object's own state, unguarded): local SQLite takes and answers both.
      state.storage.sql.exec("INSERT INTO probe (a) VALUES (?)", OVER);
      expect(String(state.storage.sql.exec(assembled).one().all_a).length).toBeGreaterThan(4_000_000);
    });
  });

  it("leaves the platform's own SQLite work alone", async () => {
    const id = crypto.randomUUID();
    const thread = threadStub(guardEnv(env, PAID), "guard-ws", id);
    const created = await thread.create({
      threadId: id,
      workspaceId: "guard-ws",
      metadata: { a: 1 },
      ifExists: "raise",
    });
    expect(created).toMatchObject({ ok: true, value: { thread_id: id, metadata: { a: 1 } } });
  });
});

describe("subrequests", () => {
  it(
    "counts Durable Object calls: the 1,000th passes, the 1,001st fails as Workers fail it",
    async () => {
      const guarded = guardEnv(env, PAID);
      const stub = guarded.METRICS.get(guarded.METRICS.idFromName("guard-count"));
      await inInvocation(PAID, null, async () => {
        for (let i = 0; i < 1000; i++) await stub.snapshot();
        await expect(stub.snapshot()).rejects.toThrow("Too many subrequests.");
        await expect(fetch("http://platform.test/ok")).rejects.toThrow("Too many subrequests.");
      });
    },
    THOUSAND_CALLS_MS,
  );

  it("counts 50 on the Free plan, of every kind together", async () => {
    const guarded = guardEnv(env, FREE);
    const stub = guarded.METRICS.getByName("guard-free");
    await inInvocation(FREE, null, async () => {
      for (let i = 0; i < 20; i++) await stub.snapshot();
      for (let i = 0; i < 10; i++) await guarded.EXPORT_BUCKET.head("nothing");
      for (let i = 0; i < 10; i++) await guarded.QUEUE.send({ kind: "guard-test" });
      const db = guardD1(guarded.DB, FREE);
      for (let i = 0; i < 10; i++) await db.prepare("SELECT 1").first();
      expect(invocationCounts()).toEqual({ subrequests: 50, d1Queries: 10 });
      await expect(guarded.EXPORT_BUCKET.put("k", "v")).rejects.toThrow("Too many subrequests.");
    });
  });

  it("counts in every Worker entry, each invocation on its own", async () => {
    const limited: InvocationLimits = { plan: "paid", subrequests: 3, d1Queries: 3 };
    const calls = async (e: Env) => {
      for (let i = 0; i < 3; i++) await e.METRICS.getByName("guard-entry").snapshot();
      return invocationCounts();
    };
    let counts: unknown = null;
    const handler: ExportedHandler<Env> = guardWorker({
      fetch: async (_request, e) => Response.json(await calls(e)),
      scheduled: async (_controller, e) => void (counts = await calls(e)),
    } satisfies ExportedHandler<Env>);
    // Paid limits from the test env: 3 calls are fine, twice.
    for (let i = 0; i < 2; i++) {
      const response = await handler.fetch!(new Request("http://platform.test/"), env, {} as ExecutionContext);
      expect(await response.json()).toEqual({ subrequests: 3, d1Queries: 0 });
    }
    await handler.scheduled!({} as ScheduledController, env, {} as ExecutionContext);
    expect(counts).toEqual({ subrequests: 3, d1Queries: 0 });
    // The same work over a lower limit fails on the 4th call.
    await inInvocation(limited, null, async () => {
      await calls(guardEnv(env, limited));
      await expect(env.METRICS.getByName("x").snapshot()).resolves.toBeDefined();
      await expect(guardEnv(env, limited).METRICS.getByName("x").snapshot()).rejects.toThrow("Too many subrequests.");
    });
    // The platform's Worker and objects are the guarded ones.
    expect(worker.fetch).not.toBe((await import("../../src/app.ts")).createApp().fetch);
  });

  it("keeps RPC through a guarded stub intact: values, streams and fetch", async () => {
    const guarded = guardEnv(env, PAID);
    const id = crypto.randomUUID();
    const thread = threadStub(guarded, "guard-ws", id);
    await inInvocation(PAID, null, async () => {
      await thread.create({
        threadId: id,
        workspaceId: "guard-ws",
        metadata: { big: "z".repeat(100) },
        ifExists: "raise",
      });
      const body = await thread.joinRunBody("no-such-run");
      expect(body).toBeInstanceOf(ReadableStream);
      expect(await new Response(body).text()).toContain("RunNotFound");
      const stream = await thread.streamThread();
      expect(stream.ok).toBe(true);
      if (stream.ok) await stream.value.cancel();
      const response = await guarded.THREAD.getByName(`guard-ws:${id}`).fetch("http://thread/");
      expect(response.status).toBeGreaterThanOrEqual(400);
      await response.body?.cancel();
      expect(invocationCounts()).toEqual({ subrequests: 4, d1Queries: 0 });
    });
  });
});

describe("memory", () => {
  it("fails the invocation that leaves the measured memory (WebAssembly) over 128 MB", async () => {
    let bytes = 0;
    const unregister = registerMemoryProbe("test-wasm", () => bytes);
    try {
      const handler: ExportedHandler<Env> = guardWorker({
        fetch: async () => new Response("ok"),
        queue: async () => void (bytes = MAX_ISOLATE_MEMORY_BYTES + 65_536),
      } satisfies ExportedHandler<Env>);
      const ctx = {} as ExecutionContext;
      expect(await (await handler.fetch!(new Request("http://platform.test/"), env, ctx)).text()).toBe("ok");
      await expect(handler.queue!({} as MessageBatch, env, ctx)).rejects.toThrow("Worker exceeded memory limit.");
      // Wasm memory never shrinks: the isolate stays over, as it would be ended deployed.
      await expect(handler.fetch!(new Request("http://platform.test/"), env, ctx)).rejects.toThrow("memory limit");
    } finally {
      unregister();
    }
  });
});
