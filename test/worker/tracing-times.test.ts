// Run times at the edges: what ingest takes it stores, reads back and exports exactly, in both Parquet
// formats; what a format cannot hold is refused with a 422 naming the field, never written as another time.
import { env } from "cloudflare:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm/esm";
import { describe, expect, it } from "vitest";
import { RUN_TIME_RANGE } from "../../src/core/limits.ts";
import { exportRecordBatch, storedTimeMicros, storedTimeMillis } from "../../src/export/columns.ts";
import { toStoredTime } from "../../src/tracing/times.ts";
import { tickExports } from "./export-tick.ts";
import { call, completedExport, json } from "./helpers.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", json: body });

/** A root run whose dotted_order carries its start time, as the SDKs write it. */
function runAt(
  start: string,
  extra: Record<string, unknown> = {},
): { id: string; start_time: string; dotted_order: string; end_time?: unknown; [field: string]: unknown } {
  const id = crypto.randomUUID();
  const stored = toStoredTime(start) ?? start;
  return {
    id,
    name: "edge",
    run_type: "chain",
    start_time: start,
    trace_id: id,
    dotted_order: `${stored.replace(/[-:.]/g, "")}${id}`,
    ...extra,
  };
}

/** Microseconds since 1970 of a stored time, exactly. */
const micros = (stored: string) => storedTimeMicros(stored) as bigint;

async function refused(run: Record<string, unknown>, detail: RegExp): Promise<void> {
  const response = await post("/api/v1/runs", run);
  const body = await json<{ detail: string }>(response);
  expect(response.status, body.detail).toBe(422);
  expect(body.detail).toMatch(detail);
  expect((await call(`/api/v1/runs/${run.id}`)).status).toBe(404);
}

describe("run times at the edges", () => {
  it("refuses times outside RUN_TIME_RANGE, impossible offsets and an end before the start, naming the field", async () => {
    await refused(runAt("0000-01-01T00:00:00Z"), /^start_time: 0000-01-01T00:00:00.000000Z is outside .*1678-01-01/);
    await refused(runAt("9999-12-31T23:59:59.999999Z"), /^start_time: 9999-12-31T23:59:59.999999Z is outside/);
    await refused(runAt("1677-12-31T23:59:59.999999Z"), /^start_time: .* is outside/);
    await refused(runAt("2262-01-01T00:00:00Z"), /^start_time: .* is outside/);
    await refused(runAt("2026-11-22T10:00:00Z", { end_time: 1e15 }), /^end_time: .* is outside/);
    await refused(runAt("2026-11-22T10:00:00+25:00"), /^start_time: not an ISO-8601 time/);
    await refused(runAt("2026-11-22T10:00:00+05:60"), /^start_time: not an ISO-8601 time/);
    await refused(
      runAt("2026-11-22T10:00:00.001000Z", { end_time: "2026-11-22T10:00:00.000999Z" }),
      /^end_time: 2026-11-22T10:00:00.000999Z is before start_time 2026-11-22T10:00:00.001000Z/,
    );
    const early = runAt("2026-11-22T10:00:00Z");
    await refused(
      { ...early, dotted_order: `00000101T000000000000Z${early.id}` },
      /dotted_order segment 1: .* is outside/,
    );
    await refused(
      { ...early, dotted_order: `20261399T000000000000Z${early.id}` },
      /dotted_order segment 1: not an ISO-8601/,
    );
    await refused(
      runAt("2026-11-22T10:00:00Z", { events: [{ name: "new_token", time: "0001-01-01T00:00:00Z" }] }),
      /^events\.0\.time: .* is outside/,
    );
  });

  it("takes the JS SDK's run shorter than a millisecond: a counter-padded start, an end in whole milliseconds", async () => {
    const run = runAt("2026-11-22T10:00:00.123005Z", { end_time: Date.parse("2026-11-22T10:00:00.123Z") });
    expect((await post("/api/v1/runs", run)).status).toBe(202);
    expect(await json(await call(`/api/v1/runs/${run.id}`))).toMatchObject({
      start_time: "2026-11-22T10:00:00.123005Z",
      end_time: "2026-11-22T10:00:00.123000Z",
      latency: 0,
    });
  });

  it("refuses an end before the start in a patch that carries both", async () => {
    const run = runAt("2026-11-22T11:00:00Z", { session_name: `times-${crypto.randomUUID()}` });
    expect((await post("/api/v1/runs", run)).status).toBe(202);
    const response = await call(`/api/v1/runs/${run.id}`, {
      method: "PATCH",
      json: { start_time: run.start_time, end_time: "2026-11-22T10:59:59Z" },
    });
    expect(response.status).toBe(422);
    expect((await json<{ detail: string }>(response)).detail).toMatch(/^end_time: .* is before start_time/);
    // A patch with only its end: the shard compares it with the stored start, and changes nothing.
    const alone = await call(`/api/v1/runs/${run.id}`, { method: "PATCH", json: { end_time: "2026-11-22T10:59:59Z" } });
    expect(alone.status).toBe(422);
    expect((await json<{ detail: string }>(alone)).detail).toBe(
      "end_time: 2026-11-22T10:59:59.000000Z is before start_time 2026-11-22T11:00:00.000000Z",
    );
    const inBatch = await post("/api/v1/runs/batch", { patch: [{ id: run.id, end_time: "2026-11-22T10:00:00Z" }] });
    expect(inBatch.status).toBe(422);
    expect((await json<{ detail: string }>(inBatch)).detail).toMatch(/^patch .*: end_time: .* is before start_time/);
    expect(await json<{ end_time: string | null }>(await call(`/api/v1/runs/${run.id}`))).toMatchObject({
      end_time: null,
    });
    expect(
      (await call(`/api/v1/runs/${run.id}`, { method: "PATCH", json: { end_time: "2026-11-22T11:00:00Z" } })).status,
    ).toBe(202);
  });

  it("stores the times as given at every year 0000–9999 (no rounding past 2255, no 1900 for years 0–99)", () => {
    for (const time of [
      "0000-01-01T00:00:00.000000Z",
      "0099-12-31T23:59:59.999999Z",
      "1677-09-21T00:12:43.145225Z",
      "2261-12-31T23:59:59.999999Z",
      "9999-12-31T23:59:59.999999Z",
    ])
      expect(toStoredTime(time)).toBe(time);
    expect(toStoredTime("9999-12-31T23:59:59.999999-00:01")).toBeUndefined();
    expect(toStoredTime(253_402_300_799_999.5)).toBe("9999-12-31T23:59:59.999500Z");
    // The export's readers of stored text: exact, and years 0–99 are not 1900–1999.
    expect(storedTimeMillis("0000-01-01T00:00:00.000Z")).toBe(-62_167_219_200_000);
    expect(micros("9999-12-31T23:59:59.999999Z")).toBe(253_402_300_799_999_999n);
  });

  it("refuses to export as v1 a stored time its nanoseconds cannot hold, and writes it exactly as v2_beta", () => {
    const page = (time: string) => ({
      rows: 1,
      columns: { id: { strings: JSON.stringify(["run-1"]) }, start_time: { strings: JSON.stringify([time]) } },
    });
    // Rows stored before RUN_TIME_RANGE was enforced.
    for (const time of ["0000-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z"]) {
      expect(() => exportRecordBatch(page(time), ["id", "start_time"], "v1")).toThrow(
        /start_time of row 0, .*, is outside what format_version v1 holds/,
      );
      const batch = exportRecordBatch(page(time), ["id", "start_time"], "v2_beta");
      expect(batch.getChild("start_time")!.data[0].values[0]).toBe(micros(time));
    }
  });

  it("reads back and exports the first and last accepted microsecond exactly, in both formats", async () => {
    const destination = await json<{ id: string }>(
      await post("/api/v1/bulk-exports/destinations", {
        display_name: "edge lake",
        config: { bucket_name: "exports", prefix: "edges", r2_binding: "EXPORT_TEST_BUCKET" },
      }),
    );
    const project = await json<{ id: string }>(
      await post("/api/v1/sessions", { name: `edges-${crypto.randomUUID()}` }),
    );
    const first = RUN_TIME_RANGE.from;
    const last = "2261-12-31T23:59:59.999999Z";
    const runs = [
      runAt(first, { end_time: "1678-01-01T00:00:00.000001Z", session_id: project.id }),
      runAt("2261-12-31T23:59:59.999998Z", { end_time: last, session_id: project.id }),
    ];
    expect(await json(await post("/api/v1/runs/batch", { post: runs }))).toEqual({ accepted: 2, errors: [] });
    for (const run of runs) {
      const stored = await json<{ start_time: string; end_time: string; dotted_order: string }>(
        await call(`/api/v1/runs/${run.id}`),
      );
      expect(stored).toMatchObject({ start_time: toStoredTime(run.start_time), end_time: run.end_time });
      expect(stored.dotted_order).toBe(run.dotted_order);
    }
    const queried = await json<{ runs: { start_time: string }[] }>(
      await post("/api/v1/runs/query", { session: [project.id], order: "asc" }),
    );
    expect(queried.runs.map((run) => run.start_time)).toEqual([first, "2261-12-31T23:59:59.999998Z"]);

    for (const [run, window] of [
      [runs[0], ["1678-01-01T00:00:00Z", "1678-01-02T00:00:00Z"]],
      [runs[1], ["2261-12-31T00:00:00Z", "2262-01-01T00:00:00Z"]],
    ] as const) {
      for (const format_version of ["v1", "v2_beta"] as const) {
        const exported = await json<{ id: string }>(
          await post("/api/v1/bulk-exports", {
            bulk_export_destination_id: destination.id,
            session_id: project.id,
            start_time: window[0],
            end_time: window[1],
            format_version,
            export_fields: ["id", "start_time", "end_time"],
          }),
        );
        await tickExports(env, new Date(Date.parse(window[1]) + 3_600_000));
        const { tenant_id: tenant } = await completedExport(exported.id);
        const listed = await env.EXPORT_TEST_BUCKET.list({
          prefix: `workspaces/${tenant}/edges/export_id=${exported.id}/`,
        });
        const key = listed.objects.map((o) => o.key).find((k) => k.endsWith(".parquet"))!;
        const bytes = new Uint8Array(await (await env.EXPORT_TEST_BUCKET.get(key))!.arrayBuffer());
        const table = tableFromIPC(readParquet(bytes).intoIPCStream());
        const scale = format_version === "v1" ? 1000n : 1n;
        const value = (name: string) => (table.getChild(name)!.data[0].values as BigInt64Array)[0];
        expect(value("start_time")).toBe(micros(toStoredTime(run.start_time) as string) * scale);
        expect(value("end_time")).toBe(micros(run.end_time as string) * scale);
      }
    }
  });
});
