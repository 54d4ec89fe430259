import { describe, expect, it } from "vitest";
import { systemAssistantId } from "../../src/assistants/resolve.ts";
import type { ThreadJson } from "../../src/threads/types.ts";
import { until } from "../fixtures/until.ts";
import { call, json } from "./helpers.ts";

interface Assistant {
  assistant_id: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: unknown;
  metadata: Record<string, unknown>;
  version: number;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const post = (path: string, body: unknown, key?: string) => call(path, { method: "POST", json: body, key });

async function create(body: Record<string, unknown>, key?: string): Promise<Assistant> {
  const response = await post("/assistants", body, key);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<Assistant>(response);
}

describe("system assistants", () => {
  it("exist for every deployed graph from the first request, with the official ids", async () => {
    const found = await json<Assistant[]>(
      await post("/assistants/search", { metadata: { created_by: "system" }, sort_by: "name", sort_order: "asc" }),
    );
    expect(found.map((a) => a.name)).toEqual([
      "agent",
      "approval",
      "echo",
      "factory",
      "memory",
      "nested",
      "steps",
      "weather",
    ]);
    // The official server's id for graph "agent": UUIDv5 in the URL namespace.
    expect(systemAssistantId("agent")).toBe("fe096781-5601-53d2-b2f6-0d3403f7e9ca");
    for (const assistant of found) {
      expect(assistant.assistant_id).toBe(systemAssistantId(assistant.graph_id));
      expect(assistant).toMatchObject({ version: 1, metadata: { created_by: "system" } });
    }
    expect((await json<Assistant>(await call("/assistants/echo"))).assistant_id).toBe(systemAssistantId("echo"));
  });

  it("cannot be deleted, by graph id or by id, in any workspace, and keeps serving runs and threads", async () => {
    const workspace = await json<{ id: string }>(
      await post("/api/v1/workspaces", { display_name: "System assistants" }),
    );
    const { key } = await json<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
    const thread = await json<ThreadJson>(await post("/threads", {}));
    expect(
      (
        await post(`/threads/${thread.thread_id}/runs/wait`, {
          assistant_id: "echo",
          input: { messages: [{ role: "user", content: "hi" }] },
        })
      ).status,
    ).toBe(200);
    for (const [path, as] of [
      ["/assistants/echo?delete_threads=true", undefined],
      [`/assistants/${systemAssistantId("echo")}`, undefined],
      ["/assistants/echo", key],
    ] as const) {
      const response = await call(path, { method: "DELETE", key: as });
      expect(response.status, path).toBe(409);
      expect(await response.json()).toEqual({
        detail: `Assistant ${systemAssistantId("echo")} is the system assistant of graph "echo" and cannot be deleted`,
      });
    }
    for (const as of [undefined, key]) {
      expect((await json<Assistant>(await call("/assistants/echo", { key: as }))).assistant_id).toBe(
        systemAssistantId("echo"),
      );
      expect(
        (
          await post(
            "/runs/wait",
            { assistant_id: "echo", input: { messages: [{ role: "user", content: "still here" }] } },
            as,
          )
        ).status,
      ).toBe(200);
    }
    // delete_threads was refused with the rest: the thread that used it is still there.
    expect((await call(`/threads/${thread.thread_id}`)).status).toBe(200);
  });
});

describe("assistant resource", () => {
  it("creates, honours if_exists, and refuses unknown graphs", async () => {
    const assistantId = crypto.randomUUID();
    const made = await create({
      assistant_id: assistantId,
      graph_id: "echo",
      name: "Echoer",
      description: "repeats",
      config: { configurable: { a: 1 } },
      context: { lang: "en" },
      metadata: { team: "x" },
    });
    expect(made).toMatchObject({
      assistant_id: assistantId,
      graph_id: "echo",
      name: "Echoer",
      description: "repeats",
      version: 1,
      context: { lang: "en" },
    });
    const again = await post("/assistants", { assistant_id: assistantId, graph_id: "echo" });
    expect(again.status).toBe(409);
    expect((await create({ assistant_id: assistantId, graph_id: "steps", if_exists: "do_nothing" })).graph_id).toBe(
      "echo",
    );
    const unknown = await post("/assistants", { graph_id: "nope" });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).detail).toContain('Graph "nope" not found');
    expect((await call(`/assistants/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it("versions every patch, merges metadata, replaces config, and sets an older version current", async () => {
    const a = await create({ graph_id: "echo", config: { configurable: { tone: "dry" } }, metadata: { keep: 1 } });
    const patched = await json<Assistant>(
      await call(`/assistants/${a.assistant_id}`, {
        method: "PATCH",
        json: { config: { configurable: { tone: "wet" } }, metadata: { add: 2 } },
      }),
    );
    expect(patched).toMatchObject({
      version: 2,
      config: { configurable: { tone: "wet" } },
      metadata: { keep: 1, add: 2 },
    });
    const bumped = await json<Assistant>(await call(`/assistants/${a.assistant_id}`, { method: "PATCH", json: {} }));
    expect(bumped.version).toBe(3);
    const versions = await json<Assistant[]>(await post(`/assistants/${a.assistant_id}/versions`, {}));
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[2].config).toEqual({ configurable: { tone: "dry" } });
    expect(
      await json<Assistant[]>(await post(`/assistants/${a.assistant_id}/versions`, { metadata: { add: 2 } })),
    ).toHaveLength(2);

    const latest = await json<Assistant>(await post(`/assistants/${a.assistant_id}/latest`, { version: 1 }));
    expect(latest).toMatchObject({ version: 1, config: { configurable: { tone: "dry" } }, metadata: { keep: 1 } });
    expect(
      (await json<Assistant[]>(await post(`/assistants/${a.assistant_id}/versions`, {}))).map((v) => v.version),
    ).toEqual([3, 2, 1]);
    const byQuery = await json<Assistant>(
      await call(`/assistants/${a.assistant_id}/latest?version=2`, { method: "POST" }),
    );
    expect(byQuery.version).toBe(2);
    expect((await post(`/assistants/${a.assistant_id}/latest`, { version: 9 })).status).toBe(404);
    // A patch after set-latest continues from the highest version.
    expect(
      (await json<Assistant>(await call(`/assistants/${a.assistant_id}`, { method: "PATCH", json: { name: "four" } })))
        .version,
    ).toBe(4);
  });

  it("treats a null context like an absent one: {} on create, kept on patch", async () => {
    const a = await create({ graph_id: "echo", context: null });
    expect(a.context).toEqual({});
    const b = await create({ graph_id: "echo", context: { tone: "dry" } });
    const response = await call(`/assistants/${b.assistant_id}`, { method: "PATCH", json: { context: null } });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await json<Assistant>(response)).toMatchObject({ version: 2, context: { tone: "dry" } });
    const versions = await json<Assistant[]>(await post(`/assistants/${b.assistant_id}/versions`, {}));
    expect(versions.map((v) => v.context)).toEqual([{ tone: "dry" }, { tone: "dry" }]);
  });

  it("searches with filters, sort, paging, select, and counts", async () => {
    const tag = crypto.randomUUID();
    for (const name of ["Bravo", "alpha", "Charlie"]) await create({ graph_id: "steps", name, metadata: { tag } });
    const search = async (body: Record<string, unknown>) => {
      const response = await post("/assistants/search", { metadata: { tag }, ...body });
      expect(response.status).toBe(200);
      return {
        found: await json<Assistant[]>(response),
        total: response.headers.get("x-pagination-total"),
        next: response.headers.get("x-pagination-next"),
      };
    };
    expect((await search({ sort_by: "name", sort_order: "asc" })).found.map((a) => a.name)).toEqual([
      "Bravo",
      "Charlie",
      "alpha",
    ]);
    expect((await search({ name: "ALP" })).found.map((a) => a.name)).toEqual(["alpha"]);
    const page = await search({ sort_by: "created_at", sort_order: "asc", limit: 2 });
    expect(page.found.map((a) => a.name)).toEqual(["Bravo", "alpha"]);
    expect(page).toMatchObject({ total: "3", next: "2" });
    const selected = await search({ select: ["assistant_id", "name"], limit: 1 });
    expect(Object.keys(selected.found[0]).sort()).toEqual(["assistant_id", "name"]);
    expect((await search({ graph_id: "echo" })).found).toEqual([]);
    expect(await json(await post("/assistants/count", { metadata: { tag } }))).toBe(3);
    expect(await json(await post("/assistants/count", { metadata: { tag }, name: "a" }))).toBe(3);
    expect((await post("/assistants/search", { sort_by: "colour" })).status).toBe(422);
  });

  it("deletes an assistant, with its threads when asked", async () => {
    const a = await create({ graph_id: "echo" });
    const thread = await json<ThreadJson>(await post("/threads", {}));
    await post(`/threads/${thread.thread_id}/runs/wait`, {
      assistant_id: a.assistant_id,
      input: { messages: [{ role: "user", content: "x" }] },
    });
    // The search index learns the thread's assistant right after the run starts; wait for it.
    await until(
      async () => json<number>(await post("/threads/count", { metadata: { assistant_id: a.assistant_id } })),
      (count) => count > 0,
    );
    expect((await call(`/assistants/${a.assistant_id}?delete_threads=true`, { method: "DELETE" })).status).toBe(200);
    expect((await call(`/assistants/${a.assistant_id}`)).status).toBe(404);
    expect((await call(`/threads/${thread.thread_id}`)).status).toBe(404);
    expect((await call(`/assistants/${a.assistant_id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("graph, schemas and subgraphs", () => {
  it("draws the graph's nodes and edges", async () => {
    const graph = await json<{ nodes: { id: string; type: string }[]; edges: { source: string; target: string }[] }>(
      await call("/assistants/steps/graph"),
    );
    expect(graph.nodes.map((n) => n.id)).toEqual(["__start__", "step1", "step2", "step3", "review", "__end__"]);
    expect(graph.nodes.find((n) => n.id === "__start__")?.type).toBe("schema");
    expect(graph.edges).toContainEqual(expect.objectContaining({ source: "step3", target: "review" }));
    // xray is handed to LangGraph (which draws this compiled subgraph as one node in 1.4.17).
    const xray = await call("/assistants/nested/graph?xray=true");
    expect(xray.status).toBe(200);
    expect((await json<{ nodes: { id: string }[] }>(xray)).nodes.map((n) => n.id)).toContain("child");
    expect((await call("/assistants/nested/graph?xray=2")).status).toBe(200);
    expect((await call("/assistants/nested/graph?xray=maybe")).status).toBe(422);
  });

  it("serves the schemas the build extracted from the graphs' TypeScript types", async () => {
    // agent's state is MessagesAnnotation: messages are a $ref into definitions, as Studio-style clients expect.
    const messageRef = "#/definitions/BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
    const agent = await json<Record<string, Record<string, unknown> | string | null>>(
      await call("/assistants/agent/schemas"),
    );
    for (const field of ["state_schema", "input_schema", "output_schema"]) {
      expect(agent[field], field).toMatchObject({
        type: "object",
        properties: { messages: { type: "array", items: { $ref: messageRef } } },
        definitions: { "BaseMessage<MessageStructure<MessageToolSet>,MessageType>": expect.any(Object) },
        $schema: "http://json-schema.org/draft-07/schema#",
      });
    }
    // No context schema declared: an empty object schema, as the official extractor gives it, not null.
    expect(agent.config_schema).toEqual({ type: "object", $schema: "http://json-schema.org/draft-07/schema#" });
    expect(agent.context_schema).toEqual(agent.config_schema);
    const subgraphs = await json<Record<string, Record<string, Record<string, unknown> | null>>>(
      await call("/assistants/nested/subgraphs"),
    );
    expect(subgraphs.child.state_schema).toMatchObject({
      properties: { trail: { type: "array", items: { type: "string" } }, seen: { $ref: expect.any(String) } },
      definitions: expect.any(Object),
    });
    // The official LangGraph.js server answers each namespace with the schema object itself (`state`,
    // `input`, `output`, `config`); the Agent Server API reference's names carry the same schemas.
    expect(Object.keys(subgraphs.child).sort()).toEqual([
      "config",
      "config_schema",
      "context_schema",
      "input",
      "input_schema",
      "output",
      "output_schema",
      "state",
      "state_schema",
    ]);
    for (const field of ["state", "input", "output", "config"]) {
      expect(subgraphs.child[field], field).toEqual(subgraphs.child[`${field}_schema`]);
    }
  });

  it("derives JSON schemas, and subgraph schemas by namespace", async () => {
    const schemas = await json<Record<string, { properties?: Record<string, unknown> } | string | null>>(
      await call("/assistants/agent/schemas"),
    );
    expect(schemas.graph_id).toBe("agent");
    const state = schemas.state_schema as { properties: Record<string, { type?: string }> };
    expect(state.properties.messages.type).toBe("array");
    expect(Object.keys((schemas.input_schema as { properties: object }).properties)).toEqual(["messages"]);
    const steps = await json<{ state_schema: { properties: object } }>(await call("/assistants/steps/schemas"));
    expect(Object.keys(steps.state_schema.properties)).toEqual(["items", "ask_human", "answer", "delay_ms"]);
    const subgraphs = await json<Record<string, { state_schema: { properties: object } }>>(
      await call("/assistants/nested/subgraphs"),
    );
    expect(Object.keys(subgraphs)).toEqual(["child"]);
    expect(Object.keys(subgraphs.child.state_schema.properties)).toEqual(["trail", "seen"]);
    expect(await json(await call("/assistants/echo/subgraphs"))).toEqual({});
    expect(Object.keys(await json<object>(await call("/assistants/nested/subgraphs/child")))).toEqual(["child"]);
  });
});

describe("runs use assistants", () => {
  it("gives the run the assistant's configurable values, merged below the request's", async () => {
    const a = await create({ graph_id: "nested", config: { configurable: { tone: "dry", level: 3 } } });
    const thread = await json<ThreadJson>(await post("/threads", {}));
    const result = await json<{ seen: Record<string, unknown> }>(
      await post(`/threads/${thread.thread_id}/runs/wait`, {
        assistant_id: a.assistant_id,
        input: {},
        config: { configurable: { level: 5 } },
      }),
    );
    expect(result.seen).toMatchObject({ tone: "dry", level: 5, assistant_id: a.assistant_id, graph_id: "nested" });
    // After a patch the next run sees the new version.
    await call(`/assistants/${a.assistant_id}`, {
      method: "PATCH",
      json: { config: { configurable: { tone: "wet" } } },
    });
    const after = await json<{ seen: Record<string, unknown> }>(
      await post(`/threads/${thread.thread_id}/runs/wait`, { assistant_id: a.assistant_id, input: {} }),
    );
    expect(after.seen.tone).toBe("wet");
  });
});

describe("tenancy", () => {
  it("keeps assistants in their workspace; system assistants exist in every workspace", async () => {
    const workspace = await json<{ id: string }>(
      await post("/api/v1/workspaces", { display_name: "Assistant tenants" }),
    );
    const { key } = await json<{ key: string }>(await post("/api/v1/api-key", { workspace_id: workspace.id }));
    const mine = await create({ graph_id: "echo", name: "private" });
    expect((await call(`/assistants/${mine.assistant_id}`, { key })).status).toBe(404);
    expect((await call(`/assistants/${mine.assistant_id}`, { key, method: "PATCH", json: {} })).status).toBe(404);
    const theirs = await json<Assistant[]>(await post("/assistants/search", { limit: 100 }, key));
    expect(theirs.map((a) => a.name).sort()).toEqual([
      "agent",
      "approval",
      "echo",
      "factory",
      "memory",
      "nested",
      "steps",
      "weather",
    ]);
    // A patch of a system assistant stays in its workspace.
    await call("/assistants/echo", { key, method: "PATCH", json: { metadata: { patched: true } } });
    expect((await json<Assistant>(await call("/assistants/echo"))).metadata).not.toHaveProperty("patched");
    const thread = await json<ThreadJson>(await post("/threads", {}, key));
    expect((await post(`/threads/${thread.thread_id}/runs`, { assistant_id: mine.assistant_id }, key)).status).toBe(
      404,
    );
  });
});
