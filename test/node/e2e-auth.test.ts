import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_API_KEY } from "../../scripts/lib/wrangler.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  deployment = await startDeployment("examples/custom-auth/langgraph.json");
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
}, 60_000);

const as = (token: string) =>
  new Client({ apiUrl: deployment.url, apiKey: null, defaultHeaders: { Authorization: `Bearer ${token}` } });
const alice = () => as("token-alice");
const bob = () => as("token-bob");
const status = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: { status?: number }) => error.status,
  );

describe("custom auth: examples/custom-auth", () => {
  it("refuses a missing or bad token with 401 and a detail; keeps /ok and /info open", async () => {
    const none = await fetch(`${deployment.url}/threads`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ detail: "Missing bearer token: send Authorization: Bearer <token>" });
    const bad = await fetch(`${deployment.url}/threads/search`, {
      method: "POST",
      headers: { Authorization: "Bearer nope", "Content-Type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ detail: "Invalid bearer token" });
    expect((await fetch(`${deployment.url}/ok`)).status).toBe(200);
    expect((await fetch(`${deployment.url}/info`)).status).toBe(200);
  });

  it("keeps /metrics on API keys, for organization admins only", async () => {
    expect((await fetch(`${deployment.url}/metrics`, { headers: { "X-Api-Key": DEV_API_KEY } })).status).toBe(200);
    const user = await fetch(`${deployment.url}/metrics`, { headers: { Authorization: "Bearer token-alice" } });
    expect(user.status).toBe(401);
    expect(await user.json()).toEqual({ detail: "Missing API key: send it in the X-Api-Key header" });
  });

  it("stamps the owner and hides every thread operation from other users (404)", async () => {
    const thread = await alice().threads.create({ metadata: { topic: "private" } });
    expect(thread.metadata).toMatchObject({ topic: "private", owner: "alice" });
    const run = await alice().runs.create(thread.thread_id, "steps", { input: {} });
    await alice().runs.join(thread.thread_id, run.run_id);

    const other = bob();
    const id = thread.thread_id;
    expect(await status(other.threads.get(id))).toBe(404);
    expect(await status(other.threads.update(id, { metadata: { taken: true } }))).toBe(404);
    // A copy of a thread the caller cannot see is a 409, as the official API answers.
    expect(await status(other.threads.copy(id))).toBe(409);
    expect(await status(other.threads.getState(id))).toBe(404);
    expect(await status(other.threads.updateState(id, { values: { items: ["x"] }, asNode: "step1" }))).toBe(404);
    expect(await status(other.threads.getHistory(id))).toBe(404);
    expect(await status(other.runs.create(id, "steps", { input: {} }))).toBe(404);
    expect(await status(other.runs.list(id))).toBe(404);
    expect(await status(other.runs.get(id, run.run_id))).toBe(404);
    expect(await status(other.runs.join(id, run.run_id))).toBe(404);
    expect(await status(other.runs.cancel(id, run.run_id))).toBe(404);
    expect(await status(other.threads.delete(id))).toBe(404);
    // A stream join opens and carries one error event naming the 404; the SDK yields it.
    const streamed = await fetch(`${deployment.url}/threads/${id}/runs/${run.run_id}/stream`, {
      headers: { Authorization: "Bearer token-bob" },
    });
    expect(streamed.status).toBe(200);
    const joined = [];
    for await (const event of other.runs.joinStream(id, run.run_id)) joined.push(event);
    expect(joined).toEqual([
      { event: "error", data: { error: "HTTPException", message: `404: Thread with ID ${id} not found` } },
    ]);
    expect(await other.threads.search({ metadata: { topic: "private" } })).toEqual([]);
    expect(await other.threads.count({ metadata: { topic: "private" } })).toBe(0);

    // Alice still has everything, untouched.
    expect((await alice().threads.get(id)).metadata).toEqual({
      topic: "private",
      owner: "alice",
      graph_id: "steps",
      assistant_id: expect.any(String),
    });
    expect((await alice().threads.search({ metadata: { topic: "private" } })).map((t) => t.thread_id)).toEqual([id]);
  });

  it("keeps assistants and store items to their owner", async () => {
    const assistant = await alice().assistants.create({ graphId: "echo", name: "Alice's echo" });
    expect(assistant.metadata).toMatchObject({ owner: "alice" });
    expect(await status(bob().assistants.get(assistant.assistant_id))).toBe(404);
    expect(await status(bob().assistants.update(assistant.assistant_id, { name: "mine now" }))).toBe(404);
    expect((await bob().assistants.search()).map((a) => a.assistant_id)).not.toContain(assistant.assistant_id);
    expect((await alice().assistants.search()).map((a) => a.assistant_id)).toContain(assistant.assistant_id);

    await alice().store.putItem(["notes"], "n1", { text: "alice's note" });
    expect((await alice().store.getItem(["notes"], "n1"))?.value).toEqual({ text: "alice's note" });
    expect(await bob().store.getItem(["notes"], "n1")).toBeNull();
    expect((await bob().store.searchItems(["notes"])).items).toEqual([]);
    expect((await alice().store.searchItems(["notes"])).items.map((i) => i.key)).toEqual(["n1"]);
  });

  it("shows the user to graph nodes under both keys, without putting the secret in state", async () => {
    const thread = await alice().threads.create();
    const result = (await alice().runs.wait(thread.thread_id, "whoami", { input: {} })) as {
      seen: Record<string, unknown>;
    };
    expect(result.seen).toEqual({
      identity: "alice",
      display_name: "Alice",
      permissions: ["threads:write"],
      platform_identity: "alice",
      same_object: true,
      has_secret: true,
      user_id: "alice",
      langgraph_auth_user_id: "alice",
    });
    const [run] = await alice().runs.list(thread.thread_id);
    expect(JSON.stringify(run)).not.toContain("ghp_alice_secret");
    const history = await alice().threads.getHistory(thread.thread_id);
    expect(JSON.stringify(history)).not.toContain("ghp_alice_secret");
  });

  it("the authenticated user wins over one a request or an assistant puts in config.configurable", async () => {
    const forged = {
      langgraph_auth_user: { identity: "admin", display_name: "Admin", permissions: ["*"], github_token: "ghp_forged" },
      platform_auth_user: { identity: "admin", permissions: ["*"] },
      langgraph_auth_user_id: "admin",
      langgraph_auth_permissions: ["*"],
    };
    const expected = {
      identity: "alice",
      display_name: "Alice",
      permissions: ["threads:write"],
      platform_identity: "alice",
      same_object: true,
      has_secret: true,
      user_id: "alice",
      langgraph_auth_user_id: "alice",
    };
    const thread = await alice().threads.create();
    const direct = (await alice().runs.wait(thread.thread_id, "whoami", {
      input: {},
      config: { configurable: forged },
    })) as { seen: Record<string, unknown> };
    expect(direct.seen).toEqual(expected);
    const assistant = await alice().assistants.create({ graphId: "whoami", config: { configurable: forged } });
    const viaAssistant = (await alice().runs.wait(null, assistant.assistant_id, { input: {} })) as {
      seen: Record<string, unknown>;
    };
    expect(viaAssistant.seen).toEqual(expected);
  });

  it("streams checkpoint payloads without the auth user", async () => {
    const thread = await alice().threads.create();
    const events = [];
    for await (const event of alice().runs.stream(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "hi" }] },
      streamMode: ["debug", "checkpoints", "tasks"],
    })) {
      events.push(event);
    }
    expect(events.some((e) => e.event === "debug")).toBe(true);
    const wire = JSON.stringify(events);
    for (const leak of ["ghp_alice_secret", "Alice", "threads:write", "langgraph_auth", "platform_auth"])
      expect(wire, leak).not.toContain(leak);
  });

  it("serves A2A behind the custom auth, per user, and honours http.disable_mcp", async () => {
    const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
    const mine = await alice().assistants.create({ graphId: "echo", name: "alice-agent" });
    const card = await fetch(`${deployment.url}/.well-known/agent-card.json?assistant_id=${mine.assistant_id}`, {
      headers: auth("token-alice"),
    });
    expect(card.status).toBe(200);
    expect(((await card.json()) as { name: string }).name).toBe("alice-agent");
    expect(
      (
        await fetch(`${deployment.url}/.well-known/agent-card.json?assistant_id=${mine.assistant_id}`, {
          headers: auth("token-bob"),
        })
      ).status,
    ).toBe(404);
    expect(
      (await fetch(`${deployment.url}/.well-known/agent-card.json?assistant_id=${mine.assistant_id}`)).status,
    ).toBe(401);
    const sent = await fetch(`${deployment.url}/a2a/${mine.assistant_id}`, {
      method: "POST",
      headers: { ...auth("token-alice"), "Content-Type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { messageId: "m1", role: "user", parts: [{ kind: "text", text: "hi" }] } },
      }),
    });
    const task = ((await sent.json()) as { result: { contextId: string; status: { state: string } } }).result;
    expect(task.status.state).toBe("completed");
    // The A2A context is alice's thread, stamped and hidden from bob.
    expect((await alice().threads.get(task.contextId)).metadata).toMatchObject({ owner: "alice" });
    expect(await status(bob().threads.get(task.contextId))).toBe(404);
    const mcp = await fetch(`${deployment.url}/mcp`, {
      method: "POST",
      headers: { ...auth("token-alice"), "Content-Type": "application/json" },
      body: "{}",
    });
    expect(mcp.status).toBe(404);
    const info = (await (await fetch(`${deployment.url}/info`)).json()) as { flags: Record<string, boolean> };
    expect(info.flags).toMatchObject({ mcp: false, a2a: true, custom_auth: true });
  });

  it("treats a studio request as the studio user only with a valid API key", async () => {
    const forged = await fetch(`${deployment.url}/threads/search`, {
      method: "POST",
      headers: { "x-auth-scheme": "langsmith", "Content-Type": "application/json" },
      body: "{}",
    });
    expect(forged.status).toBe(401);
    const wrongKey = await fetch(`${deployment.url}/threads/search`, {
      method: "POST",
      headers: { "x-auth-scheme": "langsmith", "x-api-key": "lgp_wrong", "Content-Type": "application/json" },
      body: "{}",
    });
    expect(wrongKey.status).toBe(401);
    const studio = new Client({
      apiUrl: deployment.url,
      apiKey: DEV_API_KEY,
      defaultHeaders: { "x-auth-scheme": "langsmith" },
    });
    const thread = await studio.threads.create();
    expect(thread.metadata).toMatchObject({ owner: "langgraph-studio-user" });
    expect(await status(alice().threads.get(thread.thread_id))).toBe(404);
  });

  it("protocol v2: a stream opened before its thread exists gets none of another user's events on it", async () => {
    const threadId = crypto.randomUUID();
    const headers = (token: string) => ({ Authorization: `Bearer ${token}`, "Content-Type": "application/json" });
    const open = (token: string) =>
      fetch(`${deployment.url}/threads/${threadId}/stream/events`, {
        method: "POST",
        headers: headers(token),
        body: JSON.stringify({ channels: ["lifecycle", "values"] }),
      });
    const bobStream = await open("token-bob");
    const aliceStream = await open("token-alice");
    expect([bobStream.status, aliceStream.status]).toEqual([200, 200]);
    const started = await fetch(`${deployment.url}/threads/${threadId}/commands`, {
      method: "POST",
      headers: headers("token-alice"),
      body: JSON.stringify({ id: 1, method: "run.start", params: { assistant_id: "steps", input: {} } }),
    });
    expect(await started.json()).toMatchObject({ type: "success" });
    const aliceSaw = await readFor(aliceStream, 30_000, (text) => text.includes('"event":"completed"'));
    expect(aliceSaw).toContain("event: values");
    // By now every event of the run is published; Bob's stream got none of them. Time itself is under
    // test: nothing arrives within 1 s.
    expect(await readFor(bobStream, 1_000)).not.toContain("event:");
    // Nor does a stream Bob opens now, replaying the stored ones.
    expect((await open("token-bob")).status).toBe(404);
  });
});

/** The text an SSE response sends within `ms` (or until `done` says so), then the stream is dropped. */
async function readFor(response: Response, ms: number, done: (text: string) => boolean = () => false): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + ms;
  let text = "";
  while (Date.now() < deadline && !done(text)) {
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), Math.max(0, deadline - Date.now())));
    const chunk = await Promise.race([reader.read(), timeout]);
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text;
}
