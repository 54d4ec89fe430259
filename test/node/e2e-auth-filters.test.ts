// Authorization filters on every route that takes one: a deployment whose handlers return filters for
// every resource, the store included (test/node/fixtures/filter-auth/). Alice owns everything made
// here; bob must find none of it: a 404 (409 for a copy or an existing id), excluded from searches.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gate } from "../fixtures/gate.ts";
import { until } from "../fixtures/until.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  deployment = await startDeployment("test/node/fixtures/filter-auth/langgraph.json");
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
}, 60_000);

type Answer = { status: number; body: unknown; text: string };

async function as(
  user: "alice" | "bob",
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${deployment.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer token-${user}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // SSE or empty bodies stay text.
  }
  return { status: response.status, body: parsed, text };
}

const ok = async (answer: Promise<Answer>) => {
  const { status, body } = await answer;
  expect(status, JSON.stringify(body)).toBe(200);
  return body as Record<string, unknown>;
};

/** Alice's resources, made once. */
let thread: string;
let run: string;
let assistant: string;
let cron: string;
let task: string;
const topic = crypto.randomUUID();

beforeAll(async () => {
  thread = (await ok(as("alice", "POST", "/threads", { metadata: { topic } }))).thread_id as string;
  run = (await ok(as("alice", "POST", `/threads/${thread}/runs`, { assistant_id: "steps", input: {} })))
    .run_id as string;
  await ok(as("alice", "GET", `/threads/${thread}/runs/${run}/join`));
  assistant = (
    await ok(as("alice", "POST", "/assistants", { graph_id: "echo", name: `alice-${topic}`, metadata: { topic } }))
  ).assistant_id as string;
  await ok(as("alice", "PATCH", `/assistants/${assistant}`, { name: `alice-${topic}-v2` }));
  cron = (
    await ok(
      as("alice", "POST", "/runs/crons", { assistant_id: assistant, schedule: "0 0 1 1 *", metadata: { topic } }),
    )
  ).cron_id as string;
  expect(
    (
      await as("alice", "PUT", "/store/items", {
        namespace: ["alice", "secret-project"],
        key: "plan",
        value: { text: "world domination" },
      })
    ).status,
  ).toBe(204);
  const sent = await ok(
    as("alice", "POST", `/a2a/${assistant}`, {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { messageId: "m1", role: "user", parts: [{ kind: "text", text: "hi" }] } },
    }),
  );
  task = (sent.result as { id: string }).id;
}, 60_000);

/** A thread of bob's own, made once. */
let bobs: Promise<string> | undefined;
const bobsThread = () => (bobs ??= ok(as("bob", "POST", "/threads", {})).then((thread) => thread.thread_id as string));

describe("authorization filters hide alice's resources from bob on every route", () => {
  // [what, request as bob, expected status]
  const hidden: [string, () => Promise<Answer>, number][] = [
    ["GET thread", () => as("bob", "GET", `/threads/${thread}`), 404],
    ["PATCH thread", () => as("bob", "PATCH", `/threads/${thread}`, { metadata: { taken: true } }), 404],
    ["copy thread (409, as for a missing thread)", () => as("bob", "POST", `/threads/${thread}/copy`, {}), 409],
    [
      "create with alice's id, if_exists do_nothing (409)",
      () => as("bob", "POST", "/threads", { thread_id: thread, if_exists: "do_nothing" }),
      409,
    ],
    ["GET state", () => as("bob", "GET", `/threads/${thread}/state`), 404],
    [
      "POST state",
      () => as("bob", "POST", `/threads/${thread}/state`, { values: { items: ["x"] }, as_node: "step1" }),
      404,
    ],
    ["GET history", () => as("bob", "GET", `/threads/${thread}/history`), 404],
    ["POST history", () => as("bob", "POST", `/threads/${thread}/history`, {}), 404],
    ["list runs", () => as("bob", "GET", `/threads/${thread}/runs`), 404],
    ["create run", () => as("bob", "POST", `/threads/${thread}/runs`, { assistant_id: "steps", input: {} }), 404],
    ["GET run", () => as("bob", "GET", `/threads/${thread}/runs/${run}`), 404],
    ["join run", () => as("bob", "GET", `/threads/${thread}/runs/${run}/join`), 404],
    ["thread stream", () => as("bob", "GET", `/threads/${thread}/stream`), 404],
    ["cancel run", () => as("bob", "POST", `/threads/${thread}/runs/${run}/cancel`), 404],
    ["cancel runs of the thread", () => as("bob", "POST", "/runs/cancel", { thread_id: thread, run_ids: [run] }), 404],
    ["DELETE run", () => as("bob", "DELETE", `/threads/${thread}/runs/${run}`), 404],
    ["DELETE thread", () => as("bob", "DELETE", `/threads/${thread}`), 404],
    ["GET assistant", () => as("bob", "GET", `/assistants/${assistant}`), 404],
    ["PATCH assistant", () => as("bob", "PATCH", `/assistants/${assistant}`, { name: "mine now" }), 404],
    [
      "create with alice's id, if_exists do_nothing (409)",
      () => as("bob", "POST", "/assistants", { assistant_id: assistant, graph_id: "echo", if_exists: "do_nothing" }),
      409,
    ],
    ["assistant versions", () => as("bob", "POST", `/assistants/${assistant}/versions`, {}), 404],
    ["assistant latest", () => as("bob", "POST", `/assistants/${assistant}/latest`, { version: 1 }), 404],
    ["assistant graph", () => as("bob", "GET", `/assistants/${assistant}/graph`), 404],
    ["assistant schemas", () => as("bob", "GET", `/assistants/${assistant}/schemas`), 404],
    ["assistant subgraphs", () => as("bob", "GET", `/assistants/${assistant}/subgraphs`), 404],
    ["DELETE assistant", () => as("bob", "DELETE", `/assistants/${assistant}`), 404],
    ["GET cron", () => as("bob", "GET", `/runs/crons/${cron}`), 404],
    ["PATCH cron", () => as("bob", "PATCH", `/runs/crons/${cron}`, { enabled: false }), 404],
    ["DELETE cron", () => as("bob", "DELETE", `/runs/crons/${cron}`), 404],
    ["GET store item", () => as("bob", "GET", "/store/items?namespace=alice.secret-project&key=plan"), 404],
    [
      "PUT over a store item",
      () =>
        as("bob", "PUT", "/store/items", {
          namespace: ["alice", "secret-project"],
          key: "plan",
          value: { text: "mine" },
        }),
      404,
    ],
    [
      "DELETE store item",
      () => as("bob", "DELETE", "/store/items", { namespace: ["alice", "secret-project"], key: "plan" }),
      404,
    ],
    ["A2A agent card", () => as("bob", "GET", `/.well-known/agent-card.json?assistant_id=${assistant}`), 404],
    [
      "A2A message",
      () =>
        as("bob", "POST", `/a2a/${assistant}`, {
          jsonrpc: "2.0",
          id: 1,
          method: "message/send",
          params: { message: { messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] } },
        }),
      404,
    ],
    // Running or scheduling alice's assistant, even on bob's own thread or without one.
    [
      "run alice's assistant on bob's thread",
      async () => as("bob", "POST", `/threads/${await bobsThread()}/runs/wait`, { assistant_id: assistant, input: {} }),
      404,
    ],
    [
      "stream alice's assistant on bob's thread",
      async () =>
        as("bob", "POST", `/threads/${await bobsThread()}/runs/stream`, { assistant_id: assistant, input: {} }),
      404,
    ],
    [
      "stateless run of alice's assistant",
      () => as("bob", "POST", "/runs/wait", { assistant_id: assistant, input: {} }),
      404,
    ],
    [
      "background stateless run of alice's assistant",
      () => as("bob", "POST", "/runs", { assistant_id: assistant, input: {} }),
      404,
    ],
    [
      "batch with alice's assistant",
      () => as("bob", "POST", "/runs/batch", [{ assistant_id: assistant, input: {} }]),
      404,
    ],
    [
      "cron on alice's assistant",
      () => as("bob", "POST", "/runs/crons", { assistant_id: assistant, schedule: "0 0 1 1 *" }),
      404,
    ],
    [
      "thread cron on alice's assistant",
      async () =>
        as("bob", "POST", `/threads/${await bobsThread()}/runs/crons`, {
          assistant_id: assistant,
          schedule: "0 0 1 1 *",
        }),
      404,
    ],
  ];

  it.each(hidden)("%s", async (_what, request, status) => {
    const answer = await request();
    expect(answer.status, answer.text).toBe(status);
  });

  it("excludes them from searches, counts, listings and prunes", async () => {
    expect(await ok(as("bob", "POST", "/threads/search", { metadata: { topic } }))).toEqual([]);
    expect((await as("bob", "POST", "/threads/count", { metadata: { topic } })).body).toBe(0);
    expect(await ok(as("bob", "POST", "/threads/prune", { thread_ids: [thread] }))).toEqual({ pruned_count: 0 });
    expect(await ok(as("bob", "POST", "/assistants/search", { metadata: { topic } }))).toEqual([]);
    expect((await as("bob", "POST", "/assistants/count", { metadata: { topic } })).body).toBe(0);
    expect(await ok(as("bob", "POST", "/runs/crons/search", {}))).toEqual([]);
    expect((await as("bob", "POST", "/runs/crons/count", {})).body).toBe(0);
    expect(await ok(as("bob", "POST", "/store/items/search", { namespace_prefix: ["alice"] }))).toEqual({ items: [] });
    // The reported leak: bob listed alice's namespaces.
    expect(await ok(as("bob", "POST", "/store/namespaces", {}))).toEqual({ namespaces: [] });
    expect(await ok(as("bob", "POST", "/store/namespaces", { prefix: ["alice"] }))).toEqual({ namespaces: [] });
    const own = (await ok(as("bob", "POST", "/assistants", { graph_id: "echo", name: "bob's echo" })))
      .assistant_id as string;
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const found = await ok(as("bob", "POST", `/a2a/${own}`, { jsonrpc: "2.0", id: 2, method, params: { id: task } }));
      expect((found.error as { code: number }).code).toBe(-32001);
    }
    const tools = await as(
      "bob",
      "POST",
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      { Accept: "application/json, text/event-stream" },
    );
    expect(tools.status, tools.text).toBe(200);
    expect(tools.text).not.toContain(`alice-${topic}`);
  });

  it("a join of a stream bob may not see opens and carries one error event naming the 404", async () => {
    const answer = await as("bob", "GET", `/threads/${thread}/runs/${run}/stream`);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(
      `event: error\ndata: ${JSON.stringify({ error: "HTTPException", message: `404: Thread with ID ${thread} not found` })}\n\n`,
    );
    const stateless = await as("bob", "GET", `/runs/${run}/stream`);
    expect(stateless.status).toBe(200);
    expect(stateless.text).toContain('"message":"404: Run not found"');
  });

  it("bob's status-only cancel leaves alice's runs alone", async () => {
    // Alice's run is held at a gate until bob's cancel is done.
    const held = gate();
    const slow = await ok(
      as("alice", "POST", `/threads/${thread}/runs`, { assistant_id: "steps", input: {}, config: held.config }),
    );
    const runOfAlice = () => ok(as("alice", "GET", `/threads/${thread}/runs/${slow.run_id}`));
    await until(runOfAlice, (r) => r.status === "running");
    await until(
      () => ok(as("alice", "POST", "/threads/search", { ids: [thread], status: "busy" })),
      (busy) => (busy as unknown as unknown[]).length > 0,
    );
    expect((await as("bob", "POST", "/runs/cancel", { status: "all" })).status).toBe(204);
    expect((await runOfAlice()).status).toBe("running");
    expect((await as("alice", "PUT", "/store/items", held.opening)).status).toBe(204);
    expect(
      ((await ok(as("alice", "GET", `/threads/${thread}/runs/${slow.run_id}/join`))).items as string[]).slice(-4),
    ).toEqual(["step1", "step2", "step3", "review"]);
    expect((await ok(as("alice", "GET", `/threads/${thread}/runs/${slow.run_id}`))).status).toBe("success");
    // Alice's store keeps only what the tests below expect (no run of this thread follows).
    const { namespace, key } = held.opening;
    expect((await as("alice", "DELETE", "/store/items", { namespace, key })).status).toBe(204);
  });

  it("deleting an assistant with delete_threads deletes only threads the threads:delete filter allows", async () => {
    const shared = (await ok(as("alice", "POST", "/assistants", { graph_id: "echo", name: "shared" })))
      .assistant_id as string;
    const input = { messages: [{ role: "user", content: "hi" }] };
    const alicesThread = (await ok(as("alice", "POST", "/threads", {}))).thread_id as string;
    await ok(as("alice", "POST", `/threads/${alicesThread}/runs/wait`, { assistant_id: shared, input }));
    // Bob may not run alice's assistant; a thread of his that names it stands for one he ran it on.
    const bobsThread = (await ok(as("bob", "POST", "/threads", { metadata: { assistant_id: shared } })))
      .thread_id as string;
    expect((await as("alice", "DELETE", `/assistants/${shared}?delete_threads=true`)).status).toBe(200);
    expect((await as("alice", "GET", `/threads/${alicesThread}`)).status).toBe(404);
    expect((await ok(as("bob", "GET", `/threads/${bobsThread}`))).metadata).toMatchObject({
      owner: "bob",
      assistant_id: shared,
    });
  });

  it("bob still runs the deployment's graphs and his own assistants; a run of alice's names no assistant", async () => {
    const thread = await bobsThread();
    expect(
      (await ok(as("bob", "POST", `/threads/${thread}/runs/wait`, { assistant_id: "steps", input: {} }))).items,
    ).toEqual(["step1", "step2", "step3", "review"]);
    const own = (await ok(as("bob", "POST", "/assistants", { graph_id: "steps", name: "bob's steps" })))
      .assistant_id as string;
    expect((await ok(as("bob", "POST", "/runs/wait", { assistant_id: own, input: {} }))).items).toEqual([
      "step1",
      "step2",
      "step3",
      "review",
    ]);
    const hidden = await as("bob", "POST", "/runs/wait", { assistant_id: assistant, input: {} });
    const missing = crypto.randomUUID();
    const unknown = await as("bob", "POST", "/runs/wait", { assistant_id: missing, input: {} });
    expect(hidden.body).toEqual({ detail: (unknown.body as { detail: string }).detail.replace(missing, assistant) });
    // Nothing of the refused runs was stored on bob's thread.
    expect(((await ok(as("bob", "GET", `/threads/${thread}/runs`))) as unknown as unknown[]).length).toBe(1);
  });

  it("leaves alice everything, untouched", async () => {
    expect((await ok(as("alice", "GET", `/threads/${thread}`))).metadata).toMatchObject({ topic, owner: "alice" });
    expect(
      (
        (await ok(as("alice", "POST", "/threads/search", { metadata: { topic } }))) as unknown as {
          thread_id: string;
        }[]
      ).map((t) => t.thread_id),
    ).toEqual([thread]);
    expect((await ok(as("alice", "GET", `/assistants/${assistant}`))).name).toBe(`alice-${topic}-v2`);
    expect((await ok(as("alice", "GET", `/runs/crons/${cron}`))).enabled).toBe(true);
    expect((await ok(as("alice", "GET", "/store/items?namespace=alice.secret-project&key=plan"))).value).toEqual({
      text: "world domination",
      owner: "alice",
    });
    expect(await ok(as("alice", "POST", "/store/namespaces", {}))).toEqual({
      namespaces: [["alice", "secret-project"]],
    });
    expect((await ok(as("alice", "POST", `/threads/${thread}/copy`, {}))).metadata).toMatchObject({
      topic,
      owner: "alice",
    });
  });
});
