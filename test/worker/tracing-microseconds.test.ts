// Run times keep their microseconds end to end: ingestion, storage, the API, filters and both export formats.
import { env } from "cloudflare:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm/esm";
import { describe, expect, it } from "vitest";
import { formatMicros, toStoredTime } from "../../src/tracing/times.ts";
import { tickExports } from "./export-tick.ts";
import { call, completedExport, json } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

/** A run as the SDKs post it, starting at `start` (six fraction digits) with the same time in its dotted_order. */
function microRun(start: string, end: string | number, extra: Record<string, unknown> = {}) {
  const id = crypto.randomUUID();
  const stamp = `${(toStoredTime(start) as string).replace(/[-:.]/g, "")}${id}`;
  return {
    id,
    name: "micro",
    run_type: "tool",
    start_time: start,
    end_time: end,
    trace_id: id,
    dotted_order: stamp,
    ...extra,
  };
}

type Run = { id: string; start_time: string; end_time: string | null; latency: number | null };

describe("microsecond times", () => {
  it("keeps an SDK's microseconds in the run, its latency, query bounds and filters", async () => {
    const project = `micro-${crypto.randomUUID()}`;
    // Python sends an offset, JS a Z and its end_time as epoch milliseconds.
    const fast = microRun("2026-11-21T10:00:00.123456Z", "2026-11-21T10:00:00.123789Z", { session_name: project });
    const python = microRun("2026-11-21T12:00:00.000001+02:00", "2026-11-21T12:00:00.000999+02:00", {
      session_name: project,
    });
    const js = microRun("2026-11-21T10:00:01.500001Z", Date.parse("2026-11-21T10:00:02.250Z"), {
      session_name: project,
    });
    expect(await json(await post("/api/v1/runs/batch", { post: [fast, python, js] }))).toEqual({
      accepted: 3,
      errors: [],
    });

    const stored = await json<Run>(await call(`/api/v1/runs/${fast.id}`));
    expect(stored).toMatchObject({
      start_time: "2026-11-21T10:00:00.123456Z",
      end_time: "2026-11-21T10:00:00.123789Z",
    });
    // 333 µs, not 0.
    expect(stored.latency).toBeCloseTo(0.000333, 9);
    expect(await json<Run>(await call(`/api/v1/runs/${python.id}`))).toMatchObject({
      start_time: "2026-11-21T10:00:00.000001Z",
      end_time: "2026-11-21T10:00:00.000999Z",
      latency: 0.000998,
    });
    expect(await json<Run>(await call(`/api/v1/runs/${js.id}`))).toMatchObject({
      start_time: "2026-11-21T10:00:01.500001Z",
      end_time: "2026-11-21T10:00:02.250000Z",
    });

    const { id: session } = (await json<{ id: string }[]>(await call(`/api/v1/sessions?name=${project}`)))[0];
    const ids = async (body: Record<string, unknown>) =>
      (
        await json<{ runs: Run[] }>(await post("/api/v1/runs/query", { session: [session], order: "asc", ...body }))
      ).runs.map((r) => r.id);
    expect(await ids({})).toEqual([python.id, fast.id, js.id]);
    // Bounds one microsecond apart.
    expect(await ids({ start_time: "2026-11-21T10:00:00.123456Z" })).toEqual([fast.id, js.id]);
    expect(await ids({ start_time: "2026-11-21T10:00:00.123457Z" })).toEqual([js.id]);
    expect(await ids({ end_time: "2026-11-21T10:00:00.123455Z", start_time: "2026-11-21T09:00:00Z" })).toEqual([
      python.id,
    ]);
    expect(await ids({ filter: 'gt(start_time, "2026-11-21T10:00:00.123455Z")' })).toEqual([fast.id, js.id]);
    expect(await ids({ filter: 'gt(start_time, "2026-11-21T10:00:00.123456Z")' })).toEqual([js.id]);
    expect(await ids({ filter: "lt(latency, 0.0005)" })).toEqual([fast.id]);
  });

  it("writes the microseconds into both Parquet formats", async () => {
    const destination = await json<{ id: string }>(
      await post("/api/v1/bulk-exports/destinations", {
        display_name: "micro lake",
        config: { bucket_name: "exports", prefix: "micro", r2_binding: "EXPORT_TEST_BUCKET" },
      }),
    );
    const project = await json<{ id: string }>(
      await post("/api/v1/sessions", { name: `micro-export-${crypto.randomUUID()}` }),
    );
    const runs = [
      microRun("2026-08-15T10:00:00.000001Z", "2026-08-15T10:00:00.000501Z", { session_id: project.id }),
      microRun("2026-08-15T10:00:00.123456Z", "2026-08-15T10:00:01.654321Z", { session_id: project.id }),
    ];
    expect(await json(await post("/api/v1/runs/batch", { post: runs }))).toMatchObject({ accepted: 2 });
    const expected = runs.map((r) => [Date.parse(r.start_time) * 1000 + Number(r.start_time.slice(23, 26))]);
    expect(expected.map(([micros]) => formatMicros(micros))).toEqual(runs.map((r) => r.start_time));

    for (const format_version of ["v1", "v2_beta"] as const) {
      const exported = await json<{ id: string }>(
        await post("/api/v1/bulk-exports", {
          bulk_export_destination_id: destination.id,
          session_id: project.id,
          start_time: "2026-08-15T00:00:00Z",
          end_time: "2026-08-16T00:00:00Z",
          format_version,
          export_fields: ["id", "start_time", "end_time"],
        }),
      );
      await tickExports(env, new Date("2026-08-16T01:00:00Z"));
      const { tenant_id: tenant } = await completedExport(exported.id);
      const listed = await env.EXPORT_TEST_BUCKET.list({
        prefix: `workspaces/${tenant}/micro/export_id=${exported.id}/`,
      });
      const key = listed.objects.map((o) => o.key).find((k) => k.endsWith(".parquet"))!;
      const bytes = new Uint8Array(await (await env.EXPORT_TEST_BUCKET.get(key))!.arrayBuffer());
      const table = tableFromIPC(readParquet(bytes).intoIPCStream());
      const raw = (name: string) => [...(table.getChild(name)!.data[0].values as BigInt64Array)];
      // v1: nanoseconds (LangSmith's layout), v2_beta: microseconds; either way the last three µs digits survive.
      const scale = format_version === "v1" ? 1000n : 1n;
      expect(raw("start_time")).toEqual(expected.map(([micros]) => BigInt(micros) * scale));
      expect(raw("end_time")).toEqual(
        runs.map(
          (r) => BigInt(Date.parse(r.end_time as string) * 1000 + Number((r.end_time as string).slice(23, 26))) * scale,
        ),
      );
    }
  });
});
