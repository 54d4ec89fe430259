// The TraceShardDO over RPC in workerd: the same ShardRuns as the Node tests, on Durable Object SQLite.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { shardColumns } from "../../src/export/columns.ts";
import { parseFilter } from "../../src/tracing/filter/check.ts";
import { compileFilter } from "../../src/tracing/filter/compile.ts";
import { RunPatchSchema, RunPostSchema } from "../../src/tracing/schemas.ts";
import type { StoredTracedRun } from "../../src/tracing/shard-runs.ts";
import { traceShardName } from "../../src/tracing/trace-shard-do.ts";

const SESSION = "00000000-0000-4000-8000-00000000000a";

describe("TraceShardDO", () => {
  it("names one shard per workspace, project and split (the day for a day's first shard)", () => {
    expect(traceShardName("ws", "p", "2026-11-20")).toBe("ws/p/2026-11-20");
    expect(traceShardName("ws", "p", "2026-11-21/2.3")).toBe("ws/p/2026-11-21/2.3");
  });

  it("stores, patches and queries runs through RPC", async () => {
    const shard = env.TRACE_SHARD.getByName(traceShardName("ws", SESSION, "2026-11-20"));
    const root = crypto.randomUUID();
    const child = crypto.randomUUID();
    const rootOrder = `20261120T100000000000Z${root}`;
    const posts = [
      RunPostSchema.parse({
        id: root,
        trace_id: root,
        dotted_order: rootOrder,
        name: "agent",
        run_type: "chain",
        start_time: "2026-11-20T10:00:00Z",
        extra: { metadata: { thread_id: "t1" } },
      }),
      RunPostSchema.parse({
        id: child,
        trace_id: root,
        parent_run_id: root,
        dotted_order: `${rootOrder}.20261120T100001000000Z${child}`,
        name: "model",
        run_type: "llm",
        start_time: "2026-11-20T10:00:01Z",
      }),
    ];
    const patches = [
      RunPatchSchema.parse({
        id: child,
        end_time: Date.UTC(2026, 10, 20, 10, 0, 3),
        outputs: { usage_metadata: { input_tokens: 4, output_tokens: 6, total_tokens: 10 } },
      }),
    ];
    await shard.ingest(SESSION, posts, patches);
    const runs = async (query: Omit<Parameters<typeof shard.query>[0], "maxBytes">) =>
      (JSON.parse(await shard.query({ ...query, maxBytes: 1 << 20 })) as { runs: StoredTracedRun[] }).runs;
    expect(JSON.parse((await shard.get(child))!)).toMatchObject({
      status: "success",
      latency: 2,
      total_tokens: 10,
      parent_run_ids: [root],
      session_id: SESSION,
    });
    const llm = compileFilter(parseFilter('and(eq(run_type, "llm"), gt(latency, "1s"))'));
    expect((await runs({ limit: 10, filters: [llm] })).map((run) => run.id)).toEqual([child]);
    expect((await runs({ limit: 10, is_root: true })).map((run) => run.thread_id)).toEqual(["t1"]);
    expect(await shard.get(crypto.randomUUID())).toBeNull();
  });

  it("hands an export page over in fewer rows when a column would exceed SQLite's value limit, down to one row read as it is", async () => {
    const shard = env.TRACE_SHARD.getByName(traceShardName("ws", SESSION, "2026-11-19"));
    // Control characters take six bytes each in JSON: one 1 MiB error becomes a 6 MiB JSON string,
    // so a page of two is over Durable Object SQLite's limit and one is read without an aggregate.
    const error = "\u0001".repeat(1024 * 1024);
    const posts = [0, 1, 2].map((i) => {
      const id = crypto.randomUUID();
      return RunPostSchema.parse({
        id,
        trace_id: id,
        dotted_order: `20261119T10000${i}000000Z${id}`,
        name: `r${i}`,
        run_type: "tool",
        start_time: `2026-11-19T10:00:0${i}Z`,
        error,
        tags: ["t"],
        outputs: { usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3, total_cost: 0.1 + 0.2 } },
      });
    });
    for (const post of posts) await shard.ingest(SESSION, [post], []);
    const query = {
      start: "2026-11-19T00:00:00.000Z",
      end: "2026-11-20T00:00:00.000Z",
      limit: 10,
      maxBytes: 8 * 2 ** 20,
      columns: shardColumns(["id", "error", "start_time", "tags", "total_cost"]),
      listsAsArrays: true,
    };
    const seen: string[] = [];
    let after: { start_time: string; id: string } | undefined;
    for (;;) {
      const page = await shard.exportPage({ ...query, after });
      if (!page.rows) break;
      expect(page.rows).toBe(1);
      const column = page.columns.error as { strings: string };
      expect(JSON.parse(column.strings)).toEqual([error]);
      expect(page.columns.start_time).toEqual({
        strings: JSON.stringify([`2026-11-19T10:00:0${seen.length}.000000Z`]),
      });
      expect(page.columns.tags).toEqual({ values: '[["t"]]' });
      expect(JSON.parse((page.columns.total_cost as { values: string }).values)).toEqual([0.1 + 0.2]);
      seen.push(...(JSON.parse((page.columns.id as { strings: string }).strings) as string[]));
      after = page.last ?? undefined;
    }
    expect(seen).toEqual(posts.map((post) => post.id));
    // Small rows still come many to a page.
    const small = await shard.exportPage({ ...query, columns: shardColumns(["id", "start_time"]) });
    expect([small.rows, small.more]).toEqual([3, false]);
  });
});
