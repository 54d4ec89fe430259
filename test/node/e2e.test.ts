import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { sharedServer } from "./helpers.ts";

const server = sharedServer();

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });
const withKey = (key: string) => ({ "X-Api-Key": key });

describe("the local server, end to end", () => {
  it("answers /ok and /info without a key", async () => {
    expect(await (await get("/ok")).json()).toEqual({ ok: true });
    const info = (await (await get("/info")).json()) as { metadata: { graphs: string[] } };
    expect(info.metadata.graphs).toEqual([
      "echo",
      "steps",
      "agent",
      "nested",
      "memory",
      "factory",
      "approval",
      "weather",
    ]);
  });

  it("the official SDK reaches the server with the documented dev key, and is refused without it", async () => {
    const authorized = new Client({ apiUrl: server.url, apiKey: server.apiKey });
    const missing = crypto.randomUUID();
    const reached = await authorized.threads.get(missing).catch((e: { status: number; text: string }) => e);
    expect(reached).toMatchObject({ status: 404 });
    expect(JSON.parse((reached as { text: string }).text)).toEqual({ detail: `Thread with ID ${missing} not found` });

    const refused = new Client({ apiUrl: server.url, apiKey: "lgp_wrong", defaultHeaders: {} });
    const denied = await refused.threads.get(crypto.randomUUID()).catch((e: { status: number; text: string }) => e);
    expect(denied).toMatchObject({ status: 401 });
    expect(JSON.parse((denied as { text: string }).text)).toEqual({ detail: "Invalid API key" });
  });

  it("creates a workspace key through the admin API and uses it", async () => {
    const created = await fetch(`${server.url}/api/v1/api-key`, {
      method: "POST",
      headers: { ...withKey(server.apiKey), "Content-Type": "application/json" },
      body: JSON.stringify({ description: "e2e" }),
    });
    expect(created.status).toBe(200);
    const { key } = (await created.json()) as { key: string };
    expect((await get("/api/v1/sessions", withKey(key))).status).toBe(200);
    expect((await get("/api/v1/workspaces", withKey(key))).status).toBe(403);
  });

  it("rejects a body over the default 10 MiB limit with 413 JSON", async () => {
    const response = await fetch(`${server.url}/api/v1/workspaces`, {
      method: "POST",
      headers: { ...withKey(server.apiKey), "Content-Type": "application/json" },
      body: JSON.stringify({ display_name: "x".repeat(10 * 1024 * 1024 + 10) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ detail: "Request body is larger than the limit of 10485760 bytes" });
  });

  it("answers a URL over 16 KiB with a JSON 414 naming the limit, up to the runtime's own 64 KiB cut-off", async () => {
    for (const size of [17 * 1024, 63 * 1024]) {
      const response = await get(`/threads/search?pad=${"x".repeat(size)}`, withKey(server.apiKey));
      expect(response.status).toBe(414);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(((await response.json()) as { detail: string }).detail).toMatch(
        /^The request URL is \d+ bytes; the limit is 16384 bytes$/,
      );
    }
    // workerd refuses a request line of 64 KiB or more itself, before the Worker runs (docs/api-limits.md#limits).
    expect((await get(`/threads/search?pad=${"x".repeat(64 * 1024)}`, withKey(server.apiKey))).status).toBe(414);
  });

  it("serves /docs with its assets from the Worker's static assets", async () => {
    const html = await (await get("/docs")).text();
    expect(html).toContain("/docs/swagger-ui-bundle.js");
    const bundle = await get("/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
    const doc = (await (await get("/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/ok", "/info", "/metrics", "/api/v1/api-key"]));
  });

  it("runs the minute Cron Trigger handler", async () => {
    const response = await get("/cdn-cgi/local/scheduled?cron=*+*+*+*+*");
    expect(response.status).toBe(200);
  });

  it("reports the requests it served in /metrics", async () => {
    const text = await (await get("/metrics", withKey(server.apiKey))).text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/ok",status="200"\} \d+$/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/api\/v1\/workspaces",status="413"\} 1$/m);
  });
});

describe("client.threads against the local server", () => {
  const client = () => new Client({ apiUrl: server.url, apiKey: server.apiKey });

  it("creates (empty, with metadata, with supersteps), gets, updates and deletes", async () => {
    const sdk = client();
    const empty = await sdk.threads.create();
    expect(empty).toMatchObject({ status: "idle", values: {}, metadata: {} });
    const tagged = await sdk.threads.create({ metadata: { owner: "e2e" }, graphId: "echo" });
    expect(tagged.metadata).toEqual({ owner: "e2e", graph_id: "echo" });
    const seeded = await sdk.threads.create({
      graphId: "echo",
      supersteps: [
        { updates: [{ values: {}, asNode: "__input__" }] },
        { updates: [{ values: { messages: [{ role: "user", content: "hi" }] }, asNode: "__start__" }] },
        { updates: [{ values: { messages: [{ type: "ai", content: "hi back" }] }, asNode: "respond" }] },
      ],
    });
    const messages = (seeded.values as { messages: { type: string; content: string }[] }).messages;
    expect(messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hi"],
      ["ai", "hi back"],
    ]);

    expect(await sdk.threads.get(tagged.thread_id)).toEqual(tagged);
    const updated = await sdk.threads.update(tagged.thread_id, { metadata: { stage: 2 } });
    expect(updated.metadata).toEqual({ owner: "e2e", graph_id: "echo", stage: 2 });
    await sdk.threads.delete(empty.thread_id);
    await expect(sdk.threads.get(empty.thread_id)).rejects.toMatchObject({ status: 404 });
  });

  it("copies with identical history, searches, counts, reads and updates state and history", async () => {
    const sdk = client();
    const tag = crypto.randomUUID();
    const thread = await sdk.threads.create({
      graphId: "steps",
      metadata: { tag },
      supersteps: [
        { updates: [{ values: {}, asNode: "__input__" }] },
        { updates: [{ values: { items: ["a"] }, asNode: "__start__" }] },
      ],
    });
    await sdk.threads.updateState(thread.thread_id, { values: { items: ["b"] }, asNode: "step1" });
    const state = await sdk.threads.getState<{ items: string[] }>(thread.thread_id);
    expect(state.values.items).toEqual(["a", "b"]);
    expect(state.next).toEqual(["step2"]);
    const history = await sdk.threads.getHistory(thread.thread_id, { limit: 10 });
    expect(history.map((s) => s.metadata?.source)).toEqual(["update", "update", "input"]);
    const atParent = await sdk.threads.getState(thread.thread_id, history[1].checkpoint.checkpoint_id!);
    expect(atParent.values).toEqual({ items: ["a"] });
    const before = await sdk.threads.getHistory(thread.thread_id, {
      before: { configurable: { checkpoint_id: history[0].checkpoint.checkpoint_id } },
    });
    expect(before.map((s) => s.checkpoint.checkpoint_id)).toEqual(
      history.slice(1).map((s) => s.checkpoint.checkpoint_id),
    );

    const copy = await sdk.threads.copy(thread.thread_id);
    const copied = await sdk.threads.getHistory(copy.thread_id, { limit: 10 });
    expect(copied.map((s) => s.checkpoint.checkpoint_id)).toEqual(history.map((s) => s.checkpoint.checkpoint_id));
    expect(copied.map((s) => s.values)).toEqual(history.map((s) => s.values));

    const found = await sdk.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id, copy.thread_id]);
    expect(await sdk.threads.search({ metadata: { tag }, limit: 1, offset: 1 })).toHaveLength(1);
    expect(await sdk.threads.count({ metadata: { tag } })).toBe(2);
  });
});

describe("client.assistants against the local server", () => {
  const client = () => new Client({ apiUrl: server.url, apiKey: server.apiKey });

  it("creates, reads, versions, searches, counts and deletes", async () => {
    const sdk = client();
    const system = await sdk.assistants.search({
      metadata: { created_by: "system" },
      sortBy: "name",
      sortOrder: "asc",
    });
    expect(system.map((a) => a.name)).toEqual([
      "agent",
      "approval",
      "echo",
      "factory",
      "memory",
      "nested",
      "steps",
      "weather",
    ]);
    const made = await sdk.assistants.create({
      graphId: "nested",
      name: "Dry",
      config: { configurable: { tone: "dry" } },
      metadata: { suite: "e2e" },
    });
    expect(await sdk.assistants.get(made.assistant_id)).toMatchObject({ name: "Dry", version: 1 });
    const updated = await sdk.assistants.update(made.assistant_id, {
      config: { configurable: { tone: "wet" } },
      metadata: { round: 2 },
    });
    expect(updated).toMatchObject({ version: 2, metadata: { suite: "e2e", round: 2 } });
    expect((await sdk.assistants.getVersions(made.assistant_id)).map((v) => v.version)).toEqual([2, 1]);
    expect((await sdk.assistants.setLatest(made.assistant_id, 1)).config).toEqual({ configurable: { tone: "dry" } });
    expect((await sdk.assistants.getVersions(made.assistant_id)).map((v) => v.version)).toEqual([2, 1]);
    const page = await sdk.assistants.search({
      metadata: { suite: "e2e" },
      select: ["assistant_id", "name"],
      limit: 5,
    });
    expect(page).toEqual([{ assistant_id: made.assistant_id, name: "Dry" }]);
    expect(await sdk.assistants.count({ metadata: { suite: "e2e" } })).toBe(1);

    const graph = await sdk.assistants.getGraph(made.assistant_id);
    expect(graph.nodes.map((n) => n.id)).toEqual(["__start__", "observe", "child", "__end__"]);
    const schemas = await sdk.assistants.getSchemas(made.assistant_id);
    expect(schemas.graph_id).toBe("nested");
    expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual(["trail", "seen"]);
    // The schemas the build extracted from the graph's TypeScript types: typed fields, $refs into definitions.
    expect(schemas.state_schema).toMatchObject({
      properties: { trail: { type: "array", items: { type: "string" } }, seen: { $ref: expect.any(String) } },
      definitions: expect.any(Object),
    });
    expect(Object.keys(await sdk.assistants.getSubgraphs(made.assistant_id))).toEqual(["child"]);

    // A run on the assistant's id sees its configurable values in its nodes.
    const thread = await sdk.threads.create();
    const result = (await sdk.runs.wait(thread.thread_id, made.assistant_id, { input: {} })) as {
      seen: Record<string, unknown>;
    };
    expect(result.seen).toMatchObject({ tone: "dry", assistant_id: made.assistant_id, graph_id: "nested" });

    await sdk.assistants.delete(made.assistant_id);
    await expect(sdk.assistants.get(made.assistant_id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("client.crons and client.store against the local server", () => {
  const client = () => new Client({ apiUrl: server.url, apiKey: server.apiKey });
  const _fireTick = (time: number) => get(`/cdn-cgi/local/scheduled?cron=*+*+*+*+*&time=${time}`);

  it("rejects an invalid schedule with 422", async () => {
    await expect(client().crons.create("echo", { schedule: "every minute" })).rejects.toMatchObject({ status: 422 });
  });

  it("store put/get/search/list/delete round-trip, with items written by a graph node", async () => {
    const sdk = client();
    const user = `e2e-${crypto.randomUUID()}`;
    await sdk.store.putItem(["memories", user], "seed", { text: "from the SDK" });
    const thread = await sdk.threads.create();
    const result = (await sdk.runs.wait(thread.thread_id, "memory", {
      input: { messages: [{ role: "user", content: "remember me" }] },
      config: { configurable: { user_id: user } },
    })) as { messages: { content: string }[] };
    expect(result.messages.at(-1)?.content).toBe("I have 2 memories for you.");
    const { items } = await sdk.store.searchItems(["memories", user]);
    expect(items.map((i) => i.value.text).sort()).toEqual(["from the SDK", "remember me"]);
    expect((await sdk.store.getItem(["memories", user], "seed"))?.value).toEqual({ text: "from the SDK" });
    const { namespaces } = await sdk.store.listNamespaces({ prefix: ["memories", user] });
    expect(namespaces).toEqual([["memories", user]]);
    await sdk.store.deleteItem(["memories", user], "seed");
    expect(await sdk.store.getItem(["memories", user], "seed")).toBeNull();
    await expect(sdk.store.putItem(["memories", ""], "k", {})).rejects.toMatchObject({ status: 422 });
  });
});
