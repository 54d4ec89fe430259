// Protocol v2 (thread-centric streaming) end to end: commands, the SSE event stream with replay,
// the hibernatable WebSocket, interrupts answered by input.respond, error envelopes, bad bodies
// and another workspace's thread.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { sharedServer } from "./helpers.ts";
import { type Envelope, type ProtocolEvent, protocolClient, rootLifecycle } from "./protocol-v2-client.ts";

describe("protocol v2", () => {
  const server = sharedServer();
  const url = server.url;
  const { headers, command, openEvents, openSocket, close } = protocolClient(() => server);

  afterAll(close);

  it("streams a run started by command over SSE: lifecycle, values, updates with increasing seq", async () => {
    const threadId = randomUUID();
    // The stream opens before the thread exists: run.start creates it.
    const stream = await openEvents(threadId, { channels: ["values", "updates", "messages", "lifecycle"] });
    const started = await command(threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "echo", input: { messages: [{ type: "human", content: "hello protocol" }] } },
    });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ type: "success", id: 1, meta: { thread_id: threadId } });
    expect(started.body.result?.run_id).toEqual(expect.any(String));

    const events = await stream.inbox.waitFor((all) => rootLifecycle(all).includes("completed"));
    stream.close();
    expect(rootLifecycle(events)).toEqual(["running", "completed"]);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const event of events) {
      expect(event.type).toBe("event");
      expect(event.event_id).toBe(String(event.seq));
      expect(event.frame).toEqual({ event: event.method, id: String(event.seq) });
      expect(event.params.timestamp).toEqual(expect.any(Number));
    }
    const methods = new Set(events.map((e) => e.method));
    for (const method of ["lifecycle", "values", "updates"]) expect(methods).toContain(method);
    for (const method of methods) expect(["lifecycle", "values", "updates", "messages"]).toContain(method);
    const lastValues = events.filter((e) => e.method === "values").at(-1)!;
    const messages = lastValues.params.data.messages as { type: string; content: string }[];
    expect(messages.at(-1)).toMatchObject({ type: "ai" });
    expect(JSON.stringify(messages)).toContain("hello protocol");
    const update = events.find((e) => e.method === "updates")!;
    expect(update.params.node).toEqual(expect.any(String));

    // state.get reads the thread; keys narrow the values.
    const state = await command(threadId, { id: 2, method: "state.get", params: { keys: ["messages"] } });
    expect(state.body.type).toBe("success");
    expect(Object.keys(state.body.result?.values as object)).toEqual(["messages"]);
    expect(state.body.result).toMatchObject({ checkpoint: { id: expect.any(String) } });
    const tree = await command(threadId, { id: 3, method: "agent.getTree" });
    expect(tree.body.result?.tree).toMatchObject({ namespace: [], status: "completed", graph_name: "echo" });
  });

  it("streams the messages channel of a model's tokens", async () => {
    const threadId = randomUUID();
    const stream = await openEvents(threadId, { channels: ["messages", "lifecycle"] });
    await command(threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "agent", input: { messages: [{ type: "human", content: "what are workers?" }] } },
    });
    const events = await stream.inbox.waitFor((all) => rootLifecycle(all).includes("completed"));
    stream.close();
    const messages = events.filter((e) => e.method === "messages");
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.map((e) => e.params.data.event)).toContain("message-start");
  });

  it("surfaces an interrupt as input.requested and resumes it with input.respond; since replays", async () => {
    const threadId = randomUUID();
    const stream = await openEvents(threadId, { channels: ["lifecycle", "input", "values"] });
    await command(threadId, {
      id: 1,
      method: "run.start",
      params: { assistant_id: "steps", input: { items: [], ask_human: true } },
    });
    const first = await stream.inbox.waitFor((all) => rootLifecycle(all).includes("interrupted"));
    const asked = first.filter((e) => e.method === "input.requested");
    expect(asked).toHaveLength(1);
    expect(asked[0].frame.event).toBe("input.requested");
    const interruptId = asked[0].params.data.interrupt_id as string;
    expect(asked[0].params.data.payload).toMatchObject({ question: "approve?" });

    // Unknown interrupt, then a different assistant: error envelopes with HTTP 200.
    const wrong = await command(threadId, {
      id: 2,
      method: "input.respond",
      params: { interrupt_id: "not-an-interrupt", response: "yes" },
    });
    expect(wrong.status).toBe(200);
    expect(wrong.body).toMatchObject({ type: "error", id: 2, error: "no_such_interrupt" });
    const other = await command(threadId, { id: 3, method: "run.start", params: { assistant_id: "echo", input: {} } });
    expect(other.body).toMatchObject({ type: "error", id: 3, error: "invalid_argument" });
    expect(other.body.message).toContain("bound to assistant");

    const respond = await command(threadId, {
      id: 4,
      method: "input.respond",
      params: { interrupt_id: interruptId, response: "approved" },
    });
    expect(respond.body).toMatchObject({ type: "success", id: 4, result: {} });
    const all = await stream.inbox.waitFor((items) => rootLifecycle(items).includes("completed"));
    stream.close();
    expect(rootLifecycle(all)).toEqual(["running", "interrupted", "running", "completed"]);
    const final = all.filter((e) => e.method === "values").at(-1)!;
    expect(final.params.data).toMatchObject({ answer: "approved", items: ["step1", "step2", "step3", "review"] });
    // Nothing is pending any more.
    const again = await command(threadId, {
      id: 5,
      method: "input.respond",
      params: { interrupt_id: interruptId, response: "again" },
    });
    expect(again.body).toMatchObject({ type: "error", error: "no_such_interrupt" });

    // A new stream replays the stored events after `since`, with the same numbering.
    const cut = asked[0].seq;
    const replay = await openEvents(threadId, { channels: ["lifecycle", "input", "values"], since: cut });
    const replayed = await replay.inbox.waitFor((items) => rootLifecycle(items).includes("completed"));
    replay.close();
    expect(replayed.map((e) => e.seq)).toEqual(all.filter((e) => e.seq > cut).map((e) => e.seq));
    // Without since, everything stored comes back, filtered by channel.
    const lifecycleOnly = await openEvents(threadId, { channels: ["lifecycle"] });
    const lifecycle = await lifecycleOnly.inbox.waitFor((items) => items.length >= 4);
    lifecycleOnly.close();
    expect(lifecycle.every((e) => e.method === "lifecycle")).toBe(true);
    expect(rootLifecycle(lifecycle)).toEqual(["running", "interrupted", "running", "completed"]);
  });

  it("answers commands and events over a WebSocket, with subscriptions that last across runs", async () => {
    const threadId = randomUUID();
    const socket = await openSocket(threadId);
    const subscribed = await socket.send("subscription.subscribe", { channels: ["lifecycle", "values"] });
    expect(subscribed).toMatchObject({ type: "success", result: { replayed_events: 0 } });
    const subscriptionId = subscribed.result?.subscription_id as string;

    const started = await socket.send("run.start", { assistant_id: "steps", input: { items: [] } });
    expect(started).toMatchObject({ type: "success", meta: { thread_id: threadId } });
    const events = () => socket.inbox.items.filter((m): m is ProtocolEvent => m.type === "event");
    await socket.inbox.waitFor(() => rootLifecycle(events()).includes("completed"));
    expect(events().some((e) => e.method === "values")).toBe(true);
    expect(events().some((e) => e.method === "updates")).toBe(false);

    // A second run reaches the same subscription.
    await socket.send("run.start", { assistant_id: "steps", input: { items: [] } });
    await socket.inbox.waitFor(() => rootLifecycle(events()).filter((s) => s === "completed").length === 2);

    const state = await socket.send("state.get");
    expect(state).toMatchObject({ type: "success" });
    expect((state.result as { values: { items: string[] } }).values.items).toHaveLength(8);
    expect(await socket.send("nope")).toMatchObject({ type: "error", error: "unknown_command" });
    expect(await socket.send("subscription.reconnect")).toMatchObject({ type: "error", error: "not_supported" });
    expect(await socket.send("subscription.subscribe", { channels: ["bogus"] })).toMatchObject({
      type: "error",
      error: "invalid_argument",
    });

    // Unsubscribed: the next run's events no longer arrive.
    expect(await socket.send("subscription.unsubscribe", { subscription_id: subscriptionId })).toMatchObject({
      type: "success",
    });
    expect(await socket.send("subscription.unsubscribe", { subscription_id: subscriptionId })).toMatchObject({
      type: "error",
      error: "no_such_subscription",
    });
    const before = events().length;
    const third = await socket.send("run.start", { assistant_id: "steps", input: { items: [] } });
    const watcher = await openEvents(threadId, { channels: ["lifecycle"], since: third.meta!.applied_through_seq });
    await watcher.inbox.waitFor((items) => rootLifecycle(items).includes("completed"));
    watcher.close();
    expect(events().length).toBe(before);

    // A subscription with `since` replays the stored events first.
    const replaying = await socket.send("subscription.subscribe", { channels: ["lifecycle"], since: 0 });
    const at = socket.inbox.items.indexOf(replaying) + 1;
    await socket.inbox.waitFor((items) => items.length >= at + 6);
    const replayed = socket.inbox.items.slice(at);
    expect(rootLifecycle(replayed.filter((m): m is ProtocolEvent => m.type === "event"))).toEqual([
      "running",
      "completed",
      "running",
      "completed",
      "running",
      "completed",
    ]);
    expect(replaying.result?.replayed_events).toBe(6);

    // Malformed messages get an error envelope without an id.
    socket.ws.send("not json");
    socket.ws.send(JSON.stringify({ id: -1, method: "state.get" }));
    await socket.inbox.waitFor(
      (all) => all.filter((m) => m.type === "error" && m.id === null && m.error === "invalid_argument").length === 2,
    );
  });

  it("refuses a WebSocket command past the HTTP route's limits, as HTTP does, with its id", async () => {
    const threadId = randomUUID();
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = { deep };
    const overLimit = [
      { id: 7, method: "x".repeat(257) },
      { id: 8, method: "" },
      { id: 9, method: "state.get", params: { deep } },
      { id: Number.MAX_SAFE_INTEGER + 1, method: "state.get" },
    ];
    // Over HTTP: 422 with a detail.
    for (const body of overLimit)
      expect((await command(threadId, body)).status, JSON.stringify(body).slice(0, 40)).toBe(422);
    // Over the socket: an invalid_argument envelope with the command's id, naming the field.
    const socket = await openSocket(threadId);
    for (const body of overLimit) socket.ws.send(JSON.stringify(body));
    const refused = await socket.inbox.waitFor((all) => all.filter((m) => m.type === "error").length === 4);
    expect(refused.map((m) => m.type !== "event" && [m.id, m.error])).toEqual(
      overLimit.map((body) => [body.id, "invalid_argument"]),
    );
    expect((refused[0] as Envelope).message).toContain("method");
    expect((refused[2] as Envelope).message).toContain("params");
  });

  it("refuses bad bodies and non-upgrade requests with a 4xx and detail", async () => {
    const threadId = randomUUID();
    for (const body of [
      "not json",
      { method: "state.get" },
      { id: -1, method: "x" },
      { id: 1.5, method: "x" },
      { id: 1 },
    ]) {
      const response = await command(threadId, body);
      expect(response.status).toBe(422);
      expect(response.body.detail).toBeDefined();
    }
    for (const filter of [
      {},
      { channels: ["values"], extra: 1 },
      { channels: ["nope"] },
      { channels: ["values"], since: -1 },
    ]) {
      const response = await fetch(`${url}/threads/${threadId}/stream/events`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(filter),
      });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { detail: unknown }).detail).toBeDefined();
    }
    const plain = await fetch(`${url}/threads/${threadId}/stream/events`, { headers: headers() });
    expect(plain.status).toBe(426);
    const noKey = await fetch(`${url}/threads/${threadId}/commands`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: 1, method: "state.get" }),
    });
    expect(noKey.status).toBe(401);
    // A wrong key on the upgrade: refused before any socket opens.
    await expect(openSocket(threadId, "lgp_not_a_key")).rejects.toThrow("socket failed to open");
    // Errors of a command on a missing thread.
    expect((await command(threadId, { id: 1, method: "state.get" })).status).toBe(404);
    expect(
      (await command(threadId, { id: 2, method: "input.respond", params: { interrupt_id: "x" } })).body,
    ).toMatchObject({ type: "error", error: "no_such_run" });
    expect((await command(threadId, { id: 3, method: "run.start", params: {} })).body).toMatchObject({
      type: "error",
      error: "invalid_argument",
    });
    expect(
      (await command(threadId, { id: 4, method: "run.start", params: { assistant_id: "no-such-graph" } })).body,
    ).toMatchObject({ type: "error", error: "invalid_argument" });
  });

  it("keeps another workspace's thread out of reach", async () => {
    const workspace = await fetch(`${url}/api/v1/workspaces`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ display_name: `protocol-${randomUUID()}` }),
    });
    const { id: workspaceId } = (await workspace.json()) as { id: string };
    const keyResponse = await fetch(`${url}/api/v1/api-key`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ workspace_id: workspaceId, description: "protocol tenant" }),
    });
    const { key: otherKey } = (await keyResponse.json()) as { key: string };

    const threadId = randomUUID();
    const stream = await openEvents(threadId, { channels: ["lifecycle"] });
    await command(threadId, { id: 1, method: "run.start", params: { assistant_id: "steps", input: { items: [] } } });
    await stream.inbox.waitFor((all) => rootLifecycle(all).includes("completed"));
    stream.close();

    // The other workspace sees no such thread, and none of its events.
    expect((await command(threadId, { id: 1, method: "state.get" }, otherKey)).status).toBe(404);
    expect((await command(threadId, { id: 2, method: "agent.getTree" }, otherKey)).body.result?.tree).toMatchObject({
      status: "started",
    });
    const spy = await openEvents(threadId, { channels: ["lifecycle", "values", "updates"] }, otherKey);
    const socket = await openSocket(threadId, otherKey);
    const subscribed = await socket.send("subscription.subscribe", { channels: ["lifecycle", "values"] });
    expect(subscribed.result?.replayed_events).toBe(0);
    // Time itself is under test: nothing reaches the other workspace's readers within 1.5 s.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    spy.close();
    expect(spy.inbox.items).toEqual([]);
  });

  it("closes a socket whose API key was revoked after it opened, at its next command", async () => {
    const admin = { "X-Api-Key": server.apiKey, "Content-Type": "application/json" };
    const created = await fetch(`${url}/api/v1/api-key`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ description: "socket key" }),
    });
    expect(created.status).toBe(200);
    const key = (await created.json()) as { id: string; key: string };
    const threadId = randomUUID();
    const socket = await openSocket(threadId, key.key);
    expect(await socket.send("subscription.subscribe", { channels: ["lifecycle"] })).toMatchObject({
      type: "success",
    });
    const revoked = await fetch(`${url}/api/v1/api-key/${key.id}`, { method: "DELETE", headers: admin });
    expect(revoked.status).toBe(200);
    const closed = new Promise<number>((resolve) =>
      socket.ws.addEventListener("close", (event) => resolve(event.code)),
    );
    expect(await socket.send("run.start", { assistant_id: "echo", input: {} })).toMatchObject({
      type: "error",
      error: "permission_denied",
      message: "API key has been revoked; this socket is closed.",
    });
    expect(await closed).toBe(1008);
  });
});
