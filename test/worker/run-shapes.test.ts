// What runs put on the wire and in storage: checkpoint payloads in streams, the thread config of
// factory graphs, and run inputs and states larger than a storage row.
import { describe, expect, it } from "vitest";
import type { ThreadJson } from "../../src/thread/types.ts";
import { call, json } from "./helpers.ts";
import { parseSse, type SseEvent } from "./sse.ts";

const post = (path: string, body: unknown, headers?: Record<string, string>) => call(path, { method: "POST", json: body, headers });
const human = (content: string) => ({ messages: [{ role: "user", content }] });

async function newThread(): Promise<string> {
  return (await json<ThreadJson>(await post("/threads", {}))).thread_id;
}

async function stream(path: string, body: Record<string, unknown>, headers?: Record<string, string>): Promise<SseEvent[]> {
  const response = await post(path, body, headers);
  expect(response.status, await response.clone().text()).toBe(200);
  return parseSse(await response.text());
}

interface CheckpointAddress {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}
type DebugRecord = { type: string; payload: Record<string, unknown> };

describe("checkpoint payloads in streams", () => {
  const headers = { "User-Agent": "time-travel-client/7.1", "X-Customer-Secret": "header-value-not-for-events" };

  it("debug checkpoint records name checkpoints by address and echo nothing of the run's configurable", async () => {
    const threadId = await newThread();
    const events = await stream(
      `/threads/${threadId}/runs/stream`,
      { assistant_id: "echo", input: human("hi"), stream_mode: ["debug", "checkpoints", "tasks"], config: { configurable: { client_setting: "mine" } } },
      headers,
    );
    const records = events.filter((e) => e.event === "debug").map((e) => e.data as DebugRecord);
    const checkpoints = records.filter((r) => r.type === "checkpoint").map((r) => r.payload);
    expect(checkpoints.length).toBeGreaterThanOrEqual(3); // input, after __start__, after respond

    const address = { thread_id: threadId, checkpoint_ns: "", checkpoint_id: expect.any(String), checkpoint_map: null };
    for (const payload of checkpoints) {
      expect(Object.keys(payload).sort()).toEqual(["checkpoint", "metadata", "next", "parent_checkpoint", "tasks", "values"]);
      expect(payload.checkpoint).toEqual(address);
    }
    // Each checkpoint's parent is the one before it; the run's first has none on a new thread.
    expect(checkpoints[0].parent_checkpoint).toBeNull();
    for (let i = 1; i < checkpoints.length; i++) {
      expect(checkpoints[i].parent_checkpoint).toEqual((checkpoints[i - 1].checkpoint as CheckpointAddress));
    }
    // The ids are the thread's checkpoints: time travel can fork from them.
    const last = checkpoints.at(-1)!.checkpoint as CheckpointAddress;
    const state = await json<{ checkpoint: CheckpointAddress }>(await call(`/threads/${threadId}/state`));
    expect(state.checkpoint).toEqual(last);

    // `checkpoints` events keep `config` (the SDK's type has it), reduced to the same address.
    const streamed = events.filter((e) => e.event === "checkpoints").map((e) => e.data as Record<string, unknown>);
    expect(streamed.length).toBe(checkpoints.length);
    for (const [i, payload] of streamed.entries()) {
      expect(payload.checkpoint).toEqual(checkpoints[i].checkpoint);
      expect(payload.config).toEqual({ configurable: checkpoints[i].checkpoint });
      expect(payload.parent_config).toEqual(checkpoints[i].parent_checkpoint && { configurable: checkpoints[i].parent_checkpoint });
    }

    const wire = JSON.stringify(events);
    for (const leak of ["time-travel-client", "header-value-not-for-events", "user-agent", "x-customer-secret", "langgraph_auth", "platform_auth", "client_setting"]) {
      expect(wire, leak).not.toContain(leak);
    }
  });

  it("a subgraph task of a debug checkpoint carries the subgraph's checkpoint, not a config", async () => {
    const threadId = await newThread();
    const events = await stream(`/threads/${threadId}/runs/stream`, { assistant_id: "nested", input: {}, stream_mode: ["debug"] });
    const tasks = events
      .filter((e) => e.event === "debug" && (e.data as DebugRecord).type === "checkpoint")
      .flatMap((e) => (e.data as DebugRecord).payload.tasks as Record<string, unknown>[]);
    const child = tasks.find((task) => task.name === "child")!;
    expect(child.checkpoint).toEqual({ thread_id: threadId, checkpoint_ns: `child:${child.id as string}`, checkpoint_id: null, checkpoint_map: null });
    expect(child).not.toHaveProperty("state");
  });
});
