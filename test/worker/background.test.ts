import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runTick } from "../../src/background/cron.ts";
import { dispatchQueueBatch } from "../../src/background/queue.ts";
import worker from "../../src/index.ts";

describe("work queue dispatch", () => {
  it("acks handled messages, retries failures and drops messages no handler knows", async () => {
    const seen: unknown[] = [];
    const batch = createMessageBatch<unknown>("agent-platform-work", [
      { id: "ok", timestamp: new Date(), attempts: 1, body: { kind: "echo", n: 1 } },
      { id: "fails", timestamp: new Date(), attempts: 2, body: { kind: "explode" } },
      { id: "unknown", timestamp: new Date(), attempts: 1, body: { kind: "nobody-handles-this" } },
      { id: "shapeless", timestamp: new Date(), attempts: 1, body: "just a string" },
    ]);
    const ctx = createExecutionContext();
    await dispatchQueueBatch(batch, env, {
      echo: async (body) => void seen.push(body),
      explode: async () => {
        throw new Error("transient");
      },
    });
    const result = await getQueueResult(batch, ctx);
    expect(seen).toEqual([{ kind: "echo", n: 1 }]);
    expect(result.explicitAcks.sort()).toEqual(["ok", "shapeless", "unknown"]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["fails"]);
  });

  it("the Worker's queue handler consumes a batch", async () => {
    const batch = createMessageBatch<unknown>("agent-platform-work", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { kind: "unknown-kind" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["m1"]);
  });
});

describe("minute tick", () => {
  it("runs every job and reports the ones that failed without stopping the others", async () => {
    const ran: string[] = [];
    const failed = await runTick(env, new Date(), {
      first: async () => void ran.push("first"),
      broken: async () => {
        throw new Error("boom");
      },
      last: async (_env, at) => void ran.push(`last@${at.getUTCFullYear()}`),
    });
    expect(ran.sort()).toEqual(["first", `last@${new Date().getUTCFullYear()}`]);
    expect(failed).toEqual(["broken"]);
  });

  it("the Worker's scheduled handler completes", async () => {
    const controller = createScheduledController({ scheduledTime: new Date(), cron: "* * * * *" });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
  });
});
