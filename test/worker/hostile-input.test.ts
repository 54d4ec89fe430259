// Hostile input: deep nesting, NUL keys, oversized ids and names, long URLs and concurrent writes
// answer 4xx JSON naming the problem (never a 500), and nothing stored can break a later read.
import { describe, expect, it } from "vitest";
import { exceedsDepth } from "../../src/core/json-depth.ts";
import { call, json } from "./helpers.ts";

/** `{"a":{"a":...1...}}` nested `depth` levels, written as text (no recursion to build it). */
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
const deepFilter = (depth: number) => "and(".repeat(depth) + 'eq(name, "x")' + ")".repeat(depth);
const send = (method: string, path: string, body: string) =>
  call(path, { method, body, headers: { "Content-Type": "application/json" } });
const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

async function newThread(): Promise<string> {
  return (await json<{ thread_id: string }>(await post("/threads", {}))).thread_id;
}
async function newAssistant(): Promise<string> {
  return (await json<{ assistant_id: string }>(await post("/assistants", { graph_id: "echo" }))).assistant_id;
}
const tracedRun = (extra: string) =>
  `{"id":"${crypto.randomUUID()}","name":"n","run_type":"chain","start_time":"2024-01-01T00:00:00Z",${extra}}`;

function multipart(run: string, inputs: string): { body: FormData } {
  const id = (JSON.parse(run) as { id: string }).id;
  const data = new FormData();
  data.append(`post.${id}`, new Blob([run], { type: "application/json" }));
  data.append(`post.${id}.inputs`, new Blob([inputs], { type: "application/json" }));
  return { body: data };
}

describe("deeply nested JSON", () => {
  const DEEP = deepObject(5000);
  type Case = [
    name: string,
    method: string,
    path: (ids: { thread: string; assistant: string }) => string,
    body: string,
    limit: 48 | 64 | 512,
  ];
  const cases: Case[] = [
    ["threads create metadata", "POST", () => "/threads", `{"metadata":${DEEP}}`, 64],
    ["threads patch metadata", "PATCH", ({ thread }) => `/threads/${thread}`, `{"metadata":${DEEP}}`, 64],
    ["threads search metadata", "POST", () => "/threads/search", `{"metadata":${DEEP}}`, 64],
    ["threads search values", "POST", () => "/threads/search", `{"values":${DEEP}}`, 64],
    ["threads count metadata", "POST", () => "/threads/count", `{"metadata":${DEEP}}`, 64],
    [
      "threads create supersteps",
      "POST",
      () => "/threads",
      `{"graph_id":"echo","supersteps":[{"updates":[{"values":${DEEP},"as_node":"echo"}]}]}`,
      48,
    ],
    ["thread state update", "POST", ({ thread }) => `/threads/${thread}/state`, `{"values":${DEEP}}`, 48],
    ["thread history filter", "POST", ({ thread }) => `/threads/${thread}/history`, `{"metadata":${DEEP}}`, 64],
    [
      "run input",
      "POST",
      ({ thread }) => `/threads/${thread}/runs/wait`,
      `{"assistant_id":"echo","input":${DEEP}}`,
      48,
    ],
    [
      "run command",
      "POST",
      ({ thread }) => `/threads/${thread}/runs`,
      `{"assistant_id":"echo","command":{"resume":${DEEP}}}`,
      48,
    ],
    [
      "run metadata",
      "POST",
      ({ thread }) => `/threads/${thread}/runs`,
      `{"assistant_id":"echo","metadata":${DEEP}}`,
      64,
    ],
    [
      "run config",
      "POST",
      ({ thread }) => `/threads/${thread}/runs`,
      `{"assistant_id":"echo","config":{"configurable":${DEEP}}}`,
      64,
    ],
    ["run config extra key", "POST", () => "/runs/wait", `{"assistant_id":"echo","config":{"other":${DEEP}}}`, 64],
    ["run context", "POST", () => "/runs", `{"assistant_id":"echo","context":${DEEP}}`, 64],
    ["assistants create metadata", "POST", () => "/assistants", `{"graph_id":"echo","metadata":${DEEP}}`, 64],
    [
      "assistants create config",
      "POST",
      () => "/assistants",
      `{"graph_id":"echo","config":{"configurable":${DEEP}}}`,
      64,
    ],
    ["assistants patch context", "PATCH", ({ assistant }) => `/assistants/${assistant}`, `{"context":${DEEP}}`, 64],
    ["assistants patch metadata", "PATCH", ({ assistant }) => `/assistants/${assistant}`, `{"metadata":${DEEP}}`, 64],
    ["system assistant patch", "PATCH", () => "/assistants/echo", `{"config":{"configurable":${DEEP}}}`, 64],
    ["assistants search", "POST", () => "/assistants/search", `{"metadata":${DEEP}}`, 64],
    ["assistants count", "POST", () => "/assistants/count", `{"metadata":${DEEP}}`, 64],
    ["assistant versions", "POST", ({ assistant }) => `/assistants/${assistant}/versions`, `{"metadata":${DEEP}}`, 64],
    [
      "crons create payload",
      "POST",
      () => "/runs/crons",
      `{"assistant_id":"echo","schedule":"* * * * *","input":${DEEP}}`,
      48,
    ],
    ["crons search", "POST", () => "/runs/crons/search", `{"metadata":${DEEP}}`, 64],
    ["crons count", "POST", () => "/runs/crons/count", `{"metadata":${DEEP}}`, 64],
    ["store put value", "PUT", () => "/store/items", `{"namespace":["deep"],"key":"k","value":${DEEP}}`, 512],
    ["store search filter", "POST", () => "/store/items/search", `{"namespace_prefix":["deep"],"filter":${DEEP}}`, 64],
    [
      "tracing project extra",
      "POST",
      () => "/api/v1/sessions",
      `{"name":"deep-${crypto.randomUUID()}","extra":${DEEP}}`,
      64,
    ],
    ["tracing run inputs", "POST", () => "/api/v1/runs", tracedRun(`"inputs":${DEEP}`), 512],
    ["tracing batch outputs", "POST", () => "/api/v1/runs/batch", `{"post":[${tracedRun(`"outputs":${DEEP}`)}]}`, 512],
  ];

  it.each(cases)("%s: 422 naming the limit", async (_name, method, path, body, limit) => {
    const ids = { thread: await newThread(), assistant: await newAssistant() };
    const response = await send(method, path(ids), body);
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain(`nesting deeper than ${limit} levels`);
  });

  it("a 30,000-level body is refused; 100,000 levels are measured without overflowing the stack", async () => {
    const response = await send(
      "POST",
      "/threads/search",
      `{"metadata":{"a":${"[".repeat(30_000)}${"]".repeat(30_000)}}}`,
    );
    expect(response.status).toBe(422);
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown;
    expect(exceedsDepth(deep, 512)).toBe(true);
    expect(exceedsDepth(deep, 100_000)).toBe(false);
    expect(exceedsDepth({ a: [] }, 2)).toBe(false);
    expect(exceedsDepth({ a: [[]] }, 2)).toBe(true);
  });

  it("tracing multipart: a too-deep split field is refused", async () => {
    const response = await call("/api/v1/runs/multipart", {
      method: "POST",
      ...multipart(tracedRun('"session_name":"deep"'), DEEP),
    });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: string }).detail).toContain("nesting deeper than 512 levels");
  });

  it("accepts nesting at the limits, and a run's state stays readable", async () => {
    const thread = await newThread();
    const metadata = JSON.parse(deepObject(64)) as Record<string, unknown>;
    expect((await call(`/threads/${thread}`, { method: "PATCH", json: { metadata } })).status).toBe(200);
    expect((await json<unknown[]>(await post("/threads/search", { metadata }))).length).toBe(1);
    const assistant = await json<{ assistant_id: string }>(
      await post("/assistants", {
        graph_id: "echo",
        context: JSON.parse(deepObject(64)),
        config: { configurable: JSON.parse(deepObject(63)) },
      }),
    );
    // input > messages > message > content > block > 43 levels: 48 in all, the deepest a message may nest.
    const input = (levels: number) => ({
      messages: [{ role: "human", content: [{ type: "text", text: "hi", data: JSON.parse(deepObject(levels)) }] }],
    });
    expect(
      (await post(`/threads/${thread}/runs/wait`, { assistant_id: assistant.assistant_id, input: input(44) })).status,
    ).toBe(422);
    const run = await post(`/threads/${thread}/runs/wait`, { assistant_id: assistant.assistant_id, input: input(43) });
    expect(run.status).toBe(200);
    expect((await call(`/threads/${thread}/state`)).status).toBe(200);
    expect((await post(`/threads/${thread}/history`, {})).status).toBe(200);
    expect(
      (
        await call("/store/items", {
          method: "PUT",
          json: { namespace: ["deep"], key: "k", value: JSON.parse(deepObject(512)) },
        })
      ).status,
    ).toBe(204);
    expect((await call("/store/items?namespace=deep&key=k")).status).toBe(200);
  });

  it("A2A: a message whose data nests too deep is an invalid-params error, not a 500", async () => {
    const rpc = {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: { messageId: "m", role: "user", parts: [{ kind: "data", data: JSON.parse(deepObject(200)) }] },
      },
    };
    const response = await post("/a2a/echo", rpc);
    expect(response.status).toBe(200);
    const answer = await json<{ error?: { code: number; message: string } }>(response);
    expect(answer.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("nesting deeper than 48 levels"),
    });
  });

  it("runs/query: a filter nested too deep is a 400 naming the limit; /validate reports it", async () => {
    const query = await post("/api/v1/runs/query", { filter: deepFilter(2000) });
    expect(query.status).toBe(400);
    expect(((await query.json()) as { detail: string }).detail).toContain("nested at most 64 levels");
    const validate = await json<{ valid: boolean; errors: { field: string; message: string }[] }>(
      await post("/api/v1/runs/query/validate", { trace_filter: deepFilter(2000) }),
    );
    expect(validate.valid).toBe(false);
    expect(validate.errors[0]).toMatchObject({
      field: "trace_filter",
      message: expect.stringContaining("nested at most 64 levels"),
    });
    const deepHas = await post("/api/v1/runs/query", { filter: `has(metadata, '${deepObject(100)}')` });
    expect(deepHas.status).toBe(400);
    expect((await post("/api/v1/runs/query", { filter: deepFilter(60) })).status).toBe(200);
  });
});

describe("NUL characters in filter keys", () => {
  const NUL = { "a\u0000b": 1 };
  const cases: [string, string, () => Promise<string>, (thread: string) => unknown][] = [
    ["threads search metadata", "/threads/search", async () => "", () => ({ metadata: NUL })],
    ["threads search values", "/threads/search", async () => "", () => ({ values: { nested: NUL } })],
    ["threads count", "/threads/count", async () => "", () => ({ metadata: NUL })],
    ["thread history", "/threads/{thread}/history", newThread, () => ({ metadata: NUL })],
    ["assistants search", "/assistants/search", async () => "", () => ({ metadata: NUL })],
    ["assistants count", "/assistants/count", async () => "", () => ({ metadata: NUL })],
    ["assistant versions", "/assistants/echo/versions", async () => "", () => ({ metadata: NUL })],
    ["crons search", "/runs/crons/search", async () => "", () => ({ metadata: NUL })],
    ["crons count", "/runs/crons/count", async () => "", () => ({ metadata: NUL })],
    ["store search", "/store/items/search", async () => "", () => ({ namespace_prefix: ["nul"], filter: NUL })],
  ];

  it.each(cases)("%s: 422 naming the key", async (_name, path, thread, body) => {
    const id = await thread();
    const response = await post(path.replace("{thread}", id), body(id));
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain("a\\\\u0000b");
  });

  it("other unusual keys are ordinary filter keys", async () => {
    const thread = await newThread();
    const metadata = { 'quo"te': 1, "back\\slash": "x", "new\nline": true, "dot.ted": { "[0]": null } };
    expect((await call(`/threads/${thread}`, { method: "PATCH", json: { metadata } })).status).toBe(200);
    const found = await json<{ thread_id: string }[]>(await post("/threads/search", { metadata }));
    expect(found.map((t) => t.thread_id)).toEqual([thread]);
    expect((await post(`/threads/${thread}/history`, { metadata: { "new\nline": true } })).status).toBe(200);
  });

  it("tracing filters: has/exists with a NUL key are filter errors", async () => {
    for (const filter of [`exists(metadata, "a\\u0000b")`, `has(metadata, '{"a\\u0000b": 1}')`]) {
      expect((await post("/api/v1/runs/query", { filter })).status).toBe(400);
      expect((await json<{ valid: boolean }>(await post("/api/v1/runs/query/validate", { filter }))).valid).toBe(false);
    }
  });
});

describe("identifier and name lengths", () => {
  const long = (n: number) => "x".repeat(n);
  const cases: [string, string, string, () => unknown][] = [
    ["graph_id", "POST", "/assistants", () => ({ graph_id: long(257) })],
    ["assistant name", "POST", "/assistants", () => ({ graph_id: "echo", name: long(1025) })],
    ["assistant description", "POST", "/assistants", () => ({ graph_id: "echo", description: long(10_001) })],
    ["assistant id in a run", "POST", "/runs", () => ({ assistant_id: long(257) })],
    ["store key", "PUT", "/store/items", () => ({ namespace: ["a"], key: long(1025), value: {} })],
    ["store namespace label", "PUT", "/store/items", () => ({ namespace: [long(257)], key: "k", value: {} })],
    [
      "store namespace size",
      "PUT",
      "/store/items",
      () => ({ namespace: Array.from({ length: 33 }, (_, i) => `l${i}`), key: "k", value: {} }),
    ],
    [
      "store search prefix size",
      "POST",
      "/store/items/search",
      () => ({ namespace_prefix: Array.from({ length: 10_000 }, () => "l") }),
    ],
    ["tracing project name", "POST", "/api/v1/sessions", () => ({ name: long(1025) })],
    [
      "tracing project description",
      "POST",
      "/api/v1/sessions",
      () => ({ name: `p-${crypto.randomUUID()}`, description: long(10_001) }),
    ],
    [
      "tracing run name",
      "POST",
      "/api/v1/runs",
      () => ({ id: crypto.randomUUID(), name: long(1025), run_type: "chain", start_time: "2024-01-01T00:00:00Z" }),
    ],
    [
      "export destination display_name",
      "POST",
      "/api/v1/bulk-exports/destinations",
      () => ({ display_name: long(256), config: { bucket_name: "bucket", region: "us-east-1" } }),
    ],
    [
      "export destination prefix",
      "POST",
      "/api/v1/bulk-exports/destinations",
      () => ({ display_name: "d", config: { bucket_name: "bucket", region: "us-east-1", prefix: long(2049) } }),
    ],
  ];

  it.each(cases)("%s: 422", async (_name, method, path, body) => {
    const response = await call(path, { method, json: body() });
    expect(response.status).toBe(422);
    expect(((await response.json()) as { detail: unknown }).detail).toBeTruthy();
  });

  it("an assistant id path parameter over 256 characters is a 422", async () => {
    const response = await call(`/assistants/${long(257)}`);
    expect(response.status).toBe(422);
  });

  it("a store get with an oversized key or namespace is a 422", async () => {
    expect((await call(`/store/items?namespace=a&key=${long(1025)}`)).status).toBe(422);
    expect((await call(`/store/items?namespace=${Array.from({ length: 33 }, () => "l").join(".")}&key=k`)).status).toBe(
      422,
    );
  });

  it("values at the limits are accepted", async () => {
    const assistant = await post("/assistants", { graph_id: "echo", name: long(1024), description: long(10_000) });
    expect(assistant.status).toBe(200);
    const namespace = Array.from({ length: 32 }, () => long(256).slice(0, 200));
    expect(
      (await call("/store/items", { method: "PUT", json: { namespace, key: long(1024), value: {} } })).status,
    ).toBe(204);
  });
});

describe("URL length", () => {
  it("a URL over 16 KiB is a JSON 414 naming the limit", async () => {
    const response = await call(`/threads/search?pad=${"x".repeat(17 * 1024)}`);
    expect(response.status).toBe(414);
    expect(((await response.json()) as { detail: string }).detail).toContain("the limit is 16384 bytes");
  });
});

describe("concurrent assistant patches", () => {
  it("every one of 10 parallel patches becomes its own version", async () => {
    const id = await newAssistant();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(`/assistants/${id}`, { method: "PATCH", json: { metadata: { [`k${i}`]: i } } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const versions = (await Promise.all(responses.map((r) => json<{ version: number }>(r)))).map((a) => a.version);
    expect([...versions].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const current = await json<{ version: number; metadata: Record<string, unknown> }>(await call(`/assistants/${id}`));
    expect(current.version).toBe(11);
    // Each patch merged into the latest metadata: none of the keys is lost.
    for (let i = 0; i < 10; i++) expect(current.metadata[`k${i}`]).toBe(i);
    const listed = await json<{ version: number }[]>(await post(`/assistants/${id}/versions`, { limit: 100 }));
    expect(listed.map((v) => v.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});
