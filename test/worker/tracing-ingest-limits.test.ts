// What one ingest request costs the platform: shard RPCs of bounded size, and few D1 queries however many parts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_ATTACHMENT_BYTES } from "../../src/core/limits.ts";
import { resetUsage, usageSnapshot } from "../../src/limits-guard/usage.ts";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { tracesDatabase } from "../../src/tracing/directory.ts";
import { Ingestor } from "../../src/tracing/ingest.ts";
import { readMultipartRuns } from "../../src/tracing/multipart.ts";
import type { TraceShardDO } from "../../src/tracing/trace-shard-do.ts";
import { RUN_LOCATOR_SHARDS } from "../../src/workspace/partition.ts";
import { call, json } from "./helpers.ts";

/** A root run as the SDKs post it, on a fixed day. */
function root(project: string, inputs: Record<string, unknown> = {}) {
  const id = crypto.randomUUID();
  return {
    id,
    name: "root",
    run_type: "chain",
    start_time: "2026-11-22T08:00:00.000000Z",
    dotted_order: `20261122T080000000000Z${id}`,
    trace_id: id,
    session_name: project,
    inputs,
  };
}

/** The shard namespace, recording the serialized size of every `ingest` RPC. */
function measuredShards(sizes: number[]): DurableObjectNamespace<TraceShardDO> {
  return {
    getByName(name: string) {
      const stub = env.TRACE_SHARD.getByName(name);
      return new Proxy(stub, {
        get(target, property) {
          if (property !== "ingest") return Reflect.get(target, property);
          return (...args: Parameters<TraceShardDO["ingest"]>) => {
            sizes.push(JSON.stringify(args).length);
            return target.ingest(...args);
          };
        },
      });
    },
  } as unknown as DurableObjectNamespace<TraceShardDO>;
}

/** D1, counting the statements prepared (each query and each statement of a batch is one). */
function countedDb(counter: { queries: number }): Pick<Env, "DB"> {
  return {
    DB: new Proxy(env.DB, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property !== "prepare" || typeof value !== "function")
          return typeof value === "function" ? value.bind(target) : value;
        return (query: string) => {
          counter.queries++;
          return target.prepare(query);
        };
      },
    }),
  };
}

describe("ingest limits", () => {
  it("sends one shard's runs in RPCs of at most maxRpcBytes, and stores them all", async () => {
    const project = `chunked-${crypto.randomUUID()}`;
    const runs = Array.from({ length: 12 }, (_, i) => root(project, { step: i, conversation: "x".repeat(20_000) }));
    const sizes: number[] = [];
    const ingestor = new Ingestor(
      tracesDatabase(env, DEFAULT_WORKSPACE_ID),
      measuredShards(sizes),
      DEFAULT_WORKSPACE_ID,
      {
        maxRunBytes: 192 * 1024,
        maxRpcBytes: 100_000,
        env,
      },
    );
    const patches = runs.map((run) => ({
      id: run.id,
      end_time: "2026-11-22T08:00:01.000000Z",
      outputs: { done: true },
    }));
    expect(await ingestor.ingest(runs, patches)).toEqual({ accepted: 24, errors: [] });
    // 12 posts of ~40 KB in RPCs of at most 100 KB (counted as 2 bytes per character): 6 RPCs, then 1 of patches.
    expect(sizes.length).toBe(7);
    expect(Math.max(...sizes) * 2).toBeLessThanOrEqual(100_000);
    for (const run of runs) {
      const stored = await json<{ status: string; inputs: { step: number } }>(await call(`/api/v1/runs/${run.id}`));
      expect(stored).toMatchObject({ status: "success", inputs: { step: run.inputs.step } });
    }
  });

  it("looks up the runs of patches and attachments that do not locate themselves in a few D1 queries", async () => {
    const project = `lookups-${crypto.randomUUID()}`;
    const runs = Array.from({ length: 300 }, () => root(project));
    expect(
      await new Ingestor(tracesDatabase(env, DEFAULT_WORKSPACE_ID), env.TRACE_SHARD, DEFAULT_WORKSPACE_ID, {
        maxRunBytes: 192 * 1024,
        env,
      }).ingest(runs, []),
    ).toMatchObject({ accepted: 300, errors: [] });

    // The SDK's patch parts carry neither session nor start time; attachments name only their run.
    const data = new FormData();
    for (const run of runs) {
      data.append(
        `patch.${run.id}`,
        new Blob([JSON.stringify({ id: run.id, end_time: "2026-11-22T08:00:02.000000Z" })], {
          type: "application/json",
        }),
      );
      data.append(`attachment.${run.id}.note`, new Blob([run.id], { type: "text/plain" }));
    }
    const unknown = crypto.randomUUID();
    data.append(
      `patch.${unknown}`,
      new Blob([JSON.stringify({ id: unknown, end_time: "2026-11-22T08:00:02.000000Z" })], {
        type: "application/json",
      }),
    );
    const encoded = new Response(data);
    const request = new Request("http://platform.test/api/v1/runs/multipart", {
      method: "POST",
      body: await encoded.arrayBuffer(),
      headers: { "Content-Type": encoded.headers.get("content-type")! },
    });
    const { patches, attachments } = await readMultipartRuns(request, 10 * 1024 * 1024);
    const counter = { queries: 0 };
    const counted = Object.assign({}, env, countedDb(counter));
    resetUsage();
    const result = await new Ingestor(
      tracesDatabase(counted, DEFAULT_WORKSPACE_ID),
      env.TRACE_SHARD,
      DEFAULT_WORKSPACE_ID,
      {
        maxRunBytes: 192 * 1024,
        env: counted,
      },
    ).ingest([], patches, attachments);
    expect(result.accepted).toBe(600);
    expect(result.errors).toEqual([expect.objectContaining({ run_id: unknown, kind: "not_found" })]);
    // No D1 at all; the 301 ids are looked up with one call per locator shard they hash to.
    expect(counter.queries).toBe(0);
    expect(usageSnapshot().durableObjects["WorkspaceDO:runs"].calls).toBeLessThanOrEqual(RUN_LOCATOR_SHARDS);
    const stored = await json<{ status: string; attachments: unknown }>(await call(`/api/v1/runs/${runs[299].id}`));
    expect(stored.status).toBe("success");
  });

  it("refuses an attachment over MAX_ATTACHMENT_BYTES (one RPC carries it whole) when the body limit lets it in", async () => {
    const runId = crypto.randomUUID();
    const data = new FormData();
    data.append(`attachment.${runId}.big`, new Blob([new Uint8Array(MAX_ATTACHMENT_BYTES + 1)]));
    data.append(`attachment.${runId}.small`, new Blob([new Uint8Array(10)]));
    const encoded = new Response(data);
    const request = new Request("http://platform.test/api/v1/runs/multipart", {
      method: "POST",
      body: await encoded.arrayBuffer(),
      headers: { "Content-Type": encoded.headers.get("content-type")! },
    });
    // As with MAX_BODY_BYTES raised to 32 MiB.
    const { attachments, problems } = await readMultipartRuns(request, 32 * 1024 * 1024);
    expect(attachments.map((a) => a.name)).toEqual(["small"]);
    expect(problems).toEqual([
      {
        operation: "post",
        run_id: runId,
        kind: "too_large",
        detail: `attachment big is ${MAX_ATTACHMENT_BYTES + 1} bytes; the limit is ${MAX_ATTACHMENT_BYTES} (MAX_ATTACHMENT_BYTES)`,
      },
    ]);
  });

  it("refuses the runs of a request past its MAX_INGEST_SHARDS-th project-day, and stores the others", async () => {
    const project = `days-${crypto.randomUUID()}`;
    const runs = Array.from({ length: 101 }, (_, i) => {
      const run = root(project);
      const day = new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
      return {
        ...run,
        start_time: `${day}T08:00:00.000000Z`,
        dotted_order: `${day.replace(/-/g, "")}T080000000000Z${run.id}`,
      };
    });
    const response = await call("/api/v1/runs/batch", { method: "POST", json: { post: runs } });
    const body = await json<{ accepted: number; errors: { run_id: string; status: number; detail: string }[] }>(
      response,
    );
    expect(body.accepted).toBe(100);
    expect(body.errors).toEqual([
      expect.objectContaining({
        run_id: runs[100].id,
        status: 422,
        detail: expect.stringMatching(/at most 100 shards/),
      }),
    ]);
    expect((await call(`/api/v1/runs/${runs[100].id}`)).status).toBe(404);
    expect((await call(`/api/v1/runs/${runs[99].id}`)).status).toBe(200);
  });

  it("refuses the runs of a request past its MAX_INGEST_PROJECTS-th project, and stores the others", async () => {
    const prefix = `many-${crypto.randomUUID()}`;
    const runs = Array.from({ length: 21 }, (_, i) => root(`${prefix}-${i}`));
    const response = await call("/api/v1/runs/batch", { method: "POST", json: { post: runs } });
    expect(response.status).toBe(202);
    const body = await json<{ accepted: number; errors: { run_id: string; status: number; detail: string }[] }>(
      response,
    );
    expect(body.accepted).toBe(20);
    expect(body.errors).toEqual([
      expect.objectContaining({
        run_id: runs[20].id,
        status: 422,
        detail: expect.stringMatching(/at most 20 projects/),
      }),
    ]);
  });
});
