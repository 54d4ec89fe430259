import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Client as LangGraphClient } from "@langchain/langgraph-sdk";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { beforeAll, describe, expect, it } from "vitest";
import { gate } from "../fixtures/gate.ts";
import { sharedServer } from "./helpers.ts";

const server = sharedServer();

const withKey: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set("X-Api-Key", server.apiKey);
  return fetch(input, { ...init, headers });
};

/** The official A2A client for an assistant, in the SDK's native v1.0 or its v0.3 compatibility mode. */
async function a2aClient(assistantId: string, legacy = false) {
  const compat = legacy ? { legacyCompat: { enabled: true } } : {};
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey, ...compat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey, ...compat }),
  });
  return factory.createFromUrl(server.url, `/.well-known/agent-card.json?assistant_id=${assistantId}`);
}

/** A user message in the SDK's request shape: text, or data (merged into the graph's input). */
const message = (text: string | Record<string, unknown>, contextId = "", returnImmediately = false) =>
  ({
    tenant: "",
    message: {
      messageId: crypto.randomUUID(),
      contextId,
      taskId: "",
      role: 1,
      parts: [
        {
          content: typeof text === "string" ? { $case: "text", value: text } : { $case: "data", value: text },
          metadata: undefined,
          filename: "",
          mediaType: "",
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: returnImmediately
      ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
      : undefined,
    metadata: undefined,
  }) as never;

type Task = {
  id: string;
  contextId: string;
  status: { state: number };
  artifacts: { parts: { content: { value: string } }[] }[];
};
const COMPLETED = 3;
const CANCELED = 5;
const artifactText = (task: Task) => task.artifacts[0]?.parts[0]?.content.value;

describe("A2A with the official @a2a-js/sdk client", () => {
  it("serves the echo assistant's card", async () => {
    const card = (await (
      await withKey(`${server.url}/.well-known/agent-card.json?assistant_id=echo`)
    ).json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: "echo",
      capabilities: { streaming: true },
      defaultInputModes: expect.arrayContaining(["text/plain"]),
    });
    expect(card.supportedInterfaces).toEqual([
      { url: expect.stringMatching(/\/a2a\/[0-9a-f-]{36}$/), protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    ]);
    expect((card.skills as { id: string }[])[0].id).toBe("echo");
    expect((await withKey(`${server.url}/.well-known/agent-card.json?assistant_id=nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/.well-known/agent-card.json?assistant_id=echo`)).status).toBe(401);
  });

  for (const legacy of [false, true]) {
    const dialect = legacy ? "v0.3" : "v1.0";

    it(`sends a message to echo and gets a completed task with the echo (${dialect})`, async () => {
      const client = await a2aClient("echo", legacy);
      const task = (await client.sendMessage(message("hello over a2a"))) as unknown as Task;
      expect(task.status.state).toBe(COMPLETED);
      expect(artifactText(task)).toBe("hello over a2a");
      const fetched = (await client.getTask({
        tenant: "",
        id: task.id,
        historyLength: undefined,
      } as never)) as unknown as Task;
      expect(fetched).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: COMPLETED } });
    });

    it(`continues a conversation in the same context: the thread holds both turns (${dialect})`, async () => {
      const client = await a2aClient("echo", legacy);
      const first = (await client.sendMessage(message("first turn"))) as unknown as Task;
      const second = (await client.sendMessage(message("second turn", first.contextId))) as unknown as Task;
      expect(second.contextId).toBe(first.contextId);
      expect(artifactText(second)).toBe("second turn");
      const state = await new LangGraphClient({ apiUrl: server.url, apiKey: server.apiKey }).threads.getState<{
        messages: { content: string }[];
      }>(first.contextId);
      expect(state.values.messages.map((m) => m.content)).toEqual([
        "first turn",
        "first turn",
        "second turn",
        "second turn",
      ]);
    });

    it(`streams a message on agent: status updates end in completed (${dialect})`, async () => {
      const client = await a2aClient("agent", legacy);
      const events: {
        payload: {
          $case: string;
          value: { status?: { state: number }; artifact?: { parts: { content: { value: string } }[] } };
        };
      }[] = [];
      for await (const event of client.sendMessageStream(message("what is parquet?"))) events.push(event as never);
      const kinds = events.map((e) => e.payload.$case);
      expect(kinds[0]).toBe("task");
      expect(kinds).toContain("statusUpdate");
      const artifact = events.find((e) => e.payload.$case === "artifactUpdate")!.payload.value.artifact!;
      expect(artifact.parts[0].content.value).toBe(
        "Here is what I found: Parquet is a columnar file format designed for analytics.",
      );
      expect(events.at(-1)!.payload.value.status!.state).toBe(COMPLETED);
    });

    it(`cancels a running task on a slow steps run (${dialect})`, async () => {
      // An assistant of steps whose runs wait at a gate never opened: the task is busy until cancelled.
      const langGraph = new LangGraphClient({ apiUrl: server.url, apiKey: server.apiKey });
      const held = await langGraph.assistants.create({
        graphId: "steps",
        config: gate().config,
      });
      const client = await a2aClient(held.assistant_id, legacy);
      const slow = (await client.sendMessage(message({ items: [] }, "", true))) as unknown as Task;
      expect(slow.status.state).not.toBe(COMPLETED);
      const canceled = (await client.cancelTask({
        tenant: "",
        id: slow.id,
        metadata: undefined,
      } as never)) as unknown as Task;
      expect(canceled.status.state).toBe(CANCELED);
      await expect(client.cancelTask({ tenant: "", id: slow.id, metadata: undefined } as never)).rejects.toThrow();
      // MCP below lists one tool per assistant: the deployment's only.
      await langGraph.assistants.delete(held.assistant_id);
    });
  }

  it("answers bad JSON-RPC with the standard error codes", async () => {
    const card = (await (await withKey(`${server.url}/.well-known/agent-card.json?assistant_id=echo`)).json()) as {
      url: string;
    };
    const rpc = async (body: string) =>
      (await (
        await withKey(card.url, { method: "POST", headers: { "Content-Type": "application/json" }, body })
      ).json()) as { error?: { code: number } };
    expect((await rpc("{not json")).error?.code).toBe(-32700);
    expect((await rpc('{"hello": 1}')).error?.code).toBe(-32600);
    expect((await rpc('{"jsonrpc": "2.0", "id": 1, "method": "tasks/dance", "params": {}}')).error?.code).toBe(-32601);
    expect(
      (await rpc('{"jsonrpc": "2.0", "id": 2, "method": "message/send", "params": {"message": {"parts": []}}}')).error
        ?.code,
    ).toBe(-32602);
    expect(
      (await rpc(`{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "${crypto.randomUUID()}"}}`))
        .error?.code,
    ).toBe(-32001);
    const done = (await rpc(
      '{"jsonrpc": "2.0", "id": 4, "method": "message/send", "params": {"message": {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]}}}',
    )) as { result?: { id: string } };
    expect(
      (await rpc(`{"jsonrpc": "2.0", "id": 5, "method": "tasks/cancel", "params": {"id": "${done.result!.id}"}}`)).error
        ?.code,
    ).toBe(-32002);
  });
});

describe("MCP with the official @modelcontextprotocol/sdk client", () => {
  // A workspace of its own: other files on the shared server create assistants in the default one, and
  // MCP lists one tool per assistant of the caller's workspace.
  let workspaceKey: string;
  beforeAll(async () => {
    const admin = { "X-Api-Key": server.apiKey, "Content-Type": "application/json" };
    const workspace = await fetch(`${server.url}/api/v1/workspaces`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ display_name: `mcp-${crypto.randomUUID()}` }),
    });
    const { id } = (await workspace.json()) as { id: string };
    const key = await fetch(`${server.url}/api/v1/api-key`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ workspace_id: id, description: "mcp tests" }),
    });
    workspaceKey = ((await key.json()) as { key: string }).key;
  });

  async function connect() {
    const client = new McpClient({ name: "e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { "X-Api-Key": workspaceKey } },
      }),
    );
    return client;
  }

  it("initializes and lists one tool per assistant with its input schema", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "agent",
      "approval",
      "echo",
      "factory",
      "memory",
      "nested",
      "steps",
      "weather",
    ]);
    const agent = tools.find((t) => t.name === "agent")!;
    expect(agent.description).toContain("tool-calling agent");
    expect(agent.inputSchema).toMatchObject({ type: "object", properties: { messages: { type: "array" } } });
    await client.close();
  });

  it("calls echo and gets the echo back; errors are isError results", async () => {
    const client = await connect();
    const result = await client.callTool({
      name: "echo",
      arguments: { messages: [{ role: "user", content: "hello over mcp" }] },
    });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: "text", text: "hello over mcp" }]);
    const failed = await client.callTool({ name: "steps", arguments: { delay_ms: "not a number" } });
    expect(failed.isError ?? false).toBe(false);
    const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
    await client.close();
  });

  it("answers GET and DELETE with 405, malformed JSON with a parse error, and requires auth", async () => {
    expect((await withKey(`${server.url}/mcp`)).status).toBe(405);
    expect((await withKey(`${server.url}/mcp`, { method: "DELETE" })).status).toBe(405);
    const malformed = await withKey(`${server.url}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{oops",
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    expect(
      (
        await fetch(`${server.url}/mcp`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: "{}",
        })
      ).status,
    ).toBe(401);
  });
});
