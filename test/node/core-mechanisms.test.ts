import { describe, expect, it } from "vitest";
import { mapInBatches } from "../../src/core/batches.ts";
import { shownDuration, withDeadline } from "../../src/core/deadline.ts";
import { isIsoShaped, parseIsoTime, utcMillis } from "../../src/core/iso-time.ts";
import { isObject, isPlainObject } from "../../src/core/json.ts";
import { backoff } from "../../src/core/retry.ts";
import { sseFrame } from "../../src/core/sse.ts";
import { ROW_CHUNK_BYTES, splitBytes } from "../../src/db/chunks.ts";
import type { SqlValue } from "../../src/db/sql.ts";
import { insertRows, MAX_BOUND_PARAMS, placeholders, rowsPerStatement } from "../../src/db/sql-batch.ts";
import { nodeSql } from "./node-sqlite.ts";

describe("isObject and isPlainObject", () => {
  it("takes objects, not null, arrays or primitives; plain objects only by their prototype", () => {
    for (const value of [null, undefined, [], [1], "x", 1, true]) {
      expect(isObject(value), JSON.stringify(value)).toBe(false);
      expect(isPlainObject(value), JSON.stringify(value)).toBe(false);
    }
    for (const value of [{}, { a: 1 }, Object.create(null)]) {
      expect(isObject(value)).toBe(true);
      expect(isPlainObject(value)).toBe(true);
    }
    for (const value of [new Date(0), new Map(), new (class Thing {})()]) {
      expect(isObject(value)).toBe(true);
      expect(isPlainObject(value)).toBe(false);
    }
  });
});

describe("backoff", () => {
  it("doubles from the base per step, up to the cap", () => {
    expect([0, 1, 2, 3].map((step) => backoff(step, { base: 500 }))).toEqual([500, 1000, 2000, 4000]);
    expect([0, 5, 6, 7, 2000].map((step) => backoff(step, { base: 5, cap: 300 }))).toEqual([5, 160, 300, 300, 300]);
    // A step below 0 (a retry counter that starts at 0 and is read before it grows) waits the base.
    expect(backoff(-1, { base: 5000, cap: 300_000 })).toBe(5000);
  });

  it("with equal jitter, waits between half the delay and the delay", () => {
    const waits = Array.from({ length: 200 }, () => backoff(3, { base: 200, jitter: "equal" }));
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(800);
      expect(wait).toBeLessThanOrEqual(1600);
    }
    expect(new Set(waits).size).toBeGreaterThan(1);
  });
});

describe("mapInBatches", () => {
  it("runs so many calls at a time, one group after the other, and keeps the items' order", async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapInBatches([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], 6, async (n) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return n * 10;
    });
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130]);
    expect(most).toBe(6);
    expect(await mapInBatches([], 6, async (n: number) => n)).toEqual([]);
  });
});

describe("SQLite statements within the bound-parameter limit (db/sql-batch.ts)", () => {
  it("writes placeholders and counts rows per statement", () => {
    expect(placeholders(3)).toBe("?, ?, ?");
    expect(placeholders(0)).toBe("");
    expect(rowsPerStatement(18)).toBe(5);
    expect(rowsPerStatement(100)).toBe(1);
    expect(rowsPerStatement(300)).toBe(1);
  });

  it("splits a multi-row INSERT so that no statement binds more than 100 values", () => {
    const sql = nodeSql();
    sql.run("CREATE TABLE t (a INTEGER, b TEXT, c TEXT)");
    const bound: number[] = [];
    const spy = {
      ...sql,
      run: (query: string, ...params: SqlValue[]) => {
        bound.push(params.length);
        sql.run(query, ...params);
      },
    };
    const rows = Array.from({ length: 250 }, (_, i) => [i, `b${i}`, null]);
    insertRows(spy, "INSERT", "t", ["a", "b", "c"], rows);
    expect(Math.max(...bound)).toBeLessThanOrEqual(MAX_BOUND_PARAMS);
    expect(bound).toEqual([99, 99, 99, 99, 99, 99, 99, 57]);
    expect(sql.all("SELECT COUNT(*) AS n FROM t")[0].n).toBe(250);
  });
});

describe("values larger than a row (db/chunks.ts)", () => {
  it("cuts bytes into 1 MiB views, at least one piece, and they join back", () => {
    expect(ROW_CHUNK_BYTES).toBe(1024 * 1024);
    expect(splitBytes(new Uint8Array())).toEqual([new Uint8Array()]);
    const bytes = Uint8Array.from({ length: 2 * ROW_CHUNK_BYTES + 5 }, (_, i) => i % 251);
    const parts = splitBytes(bytes);
    expect(parts.map((part) => part.byteLength)).toEqual([ROW_CHUNK_BYTES, ROW_CHUNK_BYTES, 5]);
    expect(parts.every((part) => part.buffer === bytes.buffer)).toBe(true);
    expect(Buffer.concat(parts).equals(Buffer.from(bytes))).toBe(true);
    expect(splitBytes(bytes.subarray(0, ROW_CHUNK_BYTES))).toHaveLength(1);
  });
});

describe("ISO-8601 times (core/iso-time.ts)", () => {
  const base = Date.UTC(2026, 10, 20, 10, 0, 0);
  it("keeps up to nine fraction digits apart from the milliseconds, in any zone form", () => {
    expect(parseIsoTime("2026-11-20T10:00:00Z")).toEqual({ millis: base, nanos: 0 });
    expect(parseIsoTime("2026-11-20T10:00:00.123456789Z")).toEqual({ millis: base + 123, nanos: 456_789 });
    expect(parseIsoTime("2026-11-20 10:00:00.000001")).toEqual({ millis: base, nanos: 1_000 });
    for (const text of [
      "2026-11-20T11:00:00.5+01:00",
      "2026-11-20t11:00:00,5+01",
      " 2026-11-20T09:00:00.5-0100 ",
      "2026-11-20T10:00:00.5z",
    ])
      expect(parseIsoTime(text), text).toEqual({ millis: base + 500, nanos: 0 });
  });

  it("refuses what is not a real time, and says when it has the shape of one", () => {
    for (const text of ["2026-02-30T10:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T10:00:00+25:00"]) {
      expect(parseIsoTime(text), text).toBeUndefined();
      expect(isIsoShaped(text), text).toBe(true);
    }
    for (const text of ["2026-11-20", "yesterday", "2026-11-20T10:00:00.1234567890Z"]) {
      expect(parseIsoTime(text), text).toBeUndefined();
      expect(isIsoShaped(text), text).toBe(false);
    }
  });

  it("reads years 0 to 99 as themselves", () => {
    expect(new Date(utcMillis(50, 3, 1, 0, 0, 0, 0)).getUTCFullYear()).toBe(50);
    expect(parseIsoTime("0050-03-01T00:00:00Z")?.millis).toBe(utcMillis(50, 3, 1, 0, 0, 0, 0));
    expect(utcMillis(2026, 11, 20, 10, 0, 0, 7)).toBe(base + 7);
  });
});

describe("sseFrame", () => {
  it("frames a named event with an id, and a bare data event as A2A sends it", () => {
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    expect(text(sseFrame("values", '{"a":1}', 3))).toBe('event: values\ndata: {"a":1}\nid: 3\n\n');
    expect(text(sseFrame("end", "null"))).toBe("event: end\ndata: null\n\n");
    expect(text(sseFrame(undefined, '{"jsonrpc":"2.0"}'))).toBe('data: {"jsonrpc":"2.0"}\n\n');
  });
});

describe("withDeadline (core/deadline.ts)", () => {
  it("answers the call's result in time, and clears its timer", async () => {
    expect(
      await withDeadline(
        1_000,
        () => new Error("late"),
        async () => 42,
      ),
    ).toBe(42);
  });

  it("fails with onExpiry's error once the time passes, aborting the call's signal", async () => {
    let aborted = false;
    const hung = (signal: AbortSignal) =>
      new Promise<never>(() => signal.addEventListener("abort", () => (aborted = true)));
    await expect(withDeadline(20, () => new Error(`no answer within ${shownDuration(20)}`), hung)).rejects.toThrow(
      "no answer within 20 ms",
    );
    expect(aborted).toBe(true);
    expect(shownDuration(30_000)).toBe("30 s");
  });
});
