// D1 read replication through the Sessions API (src/db/client.ts, src/http/d1-session.ts): the hot
// path's reads go through a session, and a client that sends back the bookmark reads its own writes.
// Local D1 has no replicas (every read is the primary's), so these tests check the plumbing: which
// statements run on a session, from which bookmark, and what the client is handed.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { D1_BOOKMARK_HEADER, isD1Bookmark } from "../../src/db/client.ts";
import { guardD1, guardD1Session } from "../../src/limits-guard/d1.ts";
import { inInvocation, invocationCounts } from "../../src/limits-guard/invocation.ts";
import { guardLimits } from "../../src/limits-guard/limits.ts";
import { spiedD1 } from "./d1-spy.ts";
import { json } from "./helpers.ts";

interface Assistant {
  assistant_id: string;
  version: number;
  config: { configurable?: Record<string, unknown> };
}

const ASSISTANT_LOOKUP = /^select .* from "assistants" where/i;

describe("D1 sessions", () => {
  it("run the assistant lookup before each run on a session, which a read replica may answer", async () => {
    const d1 = spiedD1();
    const assistant = await json<Assistant>(
      await d1.fetch("/assistants", { method: "POST", json: { graph_id: "echo" } }),
    );
    const before = d1.queries.length;
    const response = await d1.fetch("/runs/wait", {
      method: "POST",
      json: { assistant_id: assistant.assistant_id, input: { messages: [] } },
    });
    expect(response.status).toBe(200);
    const lookups = d1.queries.slice(before).filter((query) => ASSISTANT_LOOKUP.test(query.sql));
    expect(lookups).toHaveLength(1);
    expect(lookups[0].via).not.toBe("primary");
  });

  it("hand a client that created and patched an assistant a bookmark its next run's lookup starts from", async () => {
    const d1 = spiedD1();
    const created = await d1.fetch("/assistants", {
      method: "POST",
      json: { graph_id: "echo", config: { configurable: { flavour: "plain" } } },
    });
    expect(created.status).toBe(200);
    const createdAt = created.headers.get(D1_BOOKMARK_HEADER);
    expect(createdAt).toEqual(expect.any(String));
    expect(isD1Bookmark(createdAt ?? "")).toBe(true);
    // The create's writes ran on the request's session, so its bookmark covers them.
    const inserts = d1.matching(/^insert into "assistants"/i);
    expect(inserts.at(-1)?.via).not.toBe("primary");
    const { assistant_id } = await json<Assistant>(created);

    const patched = await d1.fetch(`/assistants/${assistant_id}`, {
      method: "PATCH",
      headers: { [D1_BOOKMARK_HEADER]: createdAt ?? "" },
      json: { config: { configurable: { flavour: "patched" } } },
    });
    expect(patched.status).toBe(200);
    expect(d1.sessions.at(-1)! >= createdAt!).toBe(true);
    const patchedAt = patched.headers.get(D1_BOOKMARK_HEADER);
    expect(patchedAt! > createdAt!).toBe(true);

    const before = d1.queries.length;
    const run = await d1.fetch("/runs/wait", {
      method: "POST",
      headers: { [D1_BOOKMARK_HEADER]: patchedAt ?? "" },
      json: { assistant_id, input: { messages: [] } },
    });
    expect(run.status).toBe(200);
    const lookup = d1.queries.slice(before).find((query) => ASSISTANT_LOOKUP.test(query.sql));
    expect(lookup?.via).toEqual({ session: expect.any(String) });
    const start = (lookup!.via as { session: string }).session;
    expect(start >= patchedAt!).toBe(true);
    expect(run.headers.get(D1_BOOKMARK_HEADER)! >= patchedAt!).toBe(true);

    // And the assistant as the client last wrote it is what it reads.
    const read = await json<Assistant>(
      await d1.fetch(`/assistants/${assistant_id}`, { headers: { [D1_BOOKMARK_HEADER]: patchedAt ?? "" } }),
    );
    expect(read.config.configurable?.flavour).toBe("patched");
  });

  it("start later requests of an isolate no older than its own writes, whatever the client sends", async () => {
    const d1 = spiedD1();
    const created = await d1.fetch("/assistants", { method: "POST", json: { graph_id: "echo" } });
    const writtenAt = created.headers.get(D1_BOOKMARK_HEADER)!;
    const { assistant_id } = await json<Assistant>(created);
    await d1.fetch("/runs/wait", { method: "POST", json: { assistant_id, input: { messages: [] } } });
    expect(d1.sessions.at(-1)! >= writtenAt).toBe(true);
    expect(d1.sessions.at(-1)).not.toBe("first-unconstrained");
  });

  it("fall back to the primary when a session fails: the run and the key check are answered all the same", async () => {
    const assistant = await json<Assistant>(
      await spiedD1().fetch("/assistants", { method: "POST", json: { graph_id: "echo" } }),
    );
    const key = await json<{ key: string }>(await spiedD1().fetch("/api/v1/api-key", { method: "POST", json: {} }));
    const d1 = spiedD1({ failingSessions: true });
    const run = await d1.fetch("/runs/wait", {
      method: "POST",
      key: key.key,
      json: { assistant_id: assistant.assistant_id, input: { messages: [] } },
    });
    expect(run.status).toBe(200);
    for (const table of ["api_keys", "assistants"]) {
      expect(d1.matching(new RegExp(`^select .* from "${table}" where`, "i")).map((query) => query.via)).toEqual([
        { session: expect.any(String) },
        "primary",
      ]);
    }
  });

  it("take first-primary, and refuse a header that is no bookmark with 400", async () => {
    const d1 = spiedD1();
    const primary = await d1.fetch("/assistants/search", {
      method: "POST",
      headers: { [D1_BOOKMARK_HEADER]: "first-primary" },
      json: {},
    });
    expect(primary.status).toBe(200);
    for (const bad of ["'; DROP TABLE api_keys", "x".repeat(600), "first-replica"]) {
      const refused = await d1.fetch("/assistants/search", {
        method: "POST",
        headers: { [D1_BOOKMARK_HEADER]: bad },
        json: {},
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        detail: `${D1_BOOKMARK_HEADER} must be a bookmark this server returned, "first-primary" or "first-unconstrained"`,
      });
    }
    // An empty header is no bookmark at all (Cloudflare's example sends one when a session has none).
    const empty = await d1.fetch("/ok", { key: null, headers: { [D1_BOOKMARK_HEADER]: "" } });
    expect(empty.status).toBe(200);
  });
});

describe("a D1 session under the limits guard", () => {
  it("counts its queries and refuses what D1 refuses, like the binding's own", async () => {
    const limits = guardLimits(env)!;
    const session = guardD1(env.DB, limits).withSession("first-unconstrained");
    const counts = await inInvocation(limits, null, async () => {
      await session.prepare("SELECT 1").all();
      await session.batch([session.prepare("SELECT 2"), session.prepare("SELECT 3")]);
      await expect(session.prepare("SELECT ?").bind("x".repeat(2_100_000)).all()).rejects.toThrow(/TOOBIG/);
      return invocationCounts();
    });
    expect(counts?.d1Queries).toBe(3);
    expect(session.getBookmark()).toEqual(expect.any(String));
    // A session of a plain binding is guarded the same way, once; without limits it is left alone.
    const plain = env.DB.withSession("first-unconstrained");
    const wrapped = guardD1Session(plain, limits);
    expect(wrapped).not.toBe(plain);
    expect(guardD1Session(wrapped, limits)).toBe(wrapped);
    expect(guardD1Session(plain, null)).toBe(plain);
  });
});
