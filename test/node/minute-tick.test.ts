// The `npm start` minute tick on a fake clock: which minute and which crons it fires, once each.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cronsDueAt, localBaseUrl, type MinuteTicker, startMinuteTicker } from "../../scripts/lib/minute-tick.ts";

const at = (iso: string) => Date.parse(iso);
let ticker: MinuteTicker | undefined;
let calls: URL[];
let failNext: boolean;
const logged: string[] = [];

const fakeFetch = (async (input: string | URL | Request) => {
  calls.push(new URL(String(input)));
  if (failNext) {
    failNext = false;
    throw new Error("connect ECONNREFUSED");
  }
  return new Response("ok");
}) as typeof fetch;

const fired = () =>
  calls.map((url) => `${new Date(Number(url.searchParams.get("time"))).toISOString()} ${url.searchParams.get("cron")}`);

beforeEach(() => {
  vi.useFakeTimers();
  calls = [];
  failNext = false;
  logged.length = 0;
});

afterEach(() => {
  ticker?.stop();
  vi.useRealTimers();
});

describe("the npm start minute tick", () => {
  it("fires each minute boundary once, with that minute as the scheduled time and the crons due then", async () => {
    vi.setSystemTime(at("2026-11-24T12:03:30.000Z"));
    ticker = startMinuteTicker({
      baseUrl: "http://127.0.0.1:8787",
      crons: ["* * * * *", "*/5 * * * *"],
      fetch: fakeFetch,
      log: (m) => logged.push(m),
    });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired()).toEqual(["2026-11-24T12:04:00.000Z * * * * *"]);
    expect(calls[0].pathname).toBe("/cdn-cgi/local/scheduled");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fired().slice(1)).toEqual(["2026-11-24T12:05:00.000Z * * * * *", "2026-11-24T12:05:00.000Z */5 * * * *"]);
    ticker.stop();
    await vi.advanceTimersByTimeAsync(180_000);
    expect(calls).toHaveLength(3);
  });

  it("logs a failed tick and fires the next minute as usual", async () => {
    vi.setSystemTime(at("2026-11-24T12:00:59.000Z"));
    ticker = startMinuteTicker({
      baseUrl: "http://127.0.0.1:8787",
      crons: ["* * * * *"],
      fetch: fakeFetch,
      log: (m) => logged.push(m),
    });
    failNext = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(logged).toEqual([expect.stringContaining('2026-11-24T12:01:00.000Z "* * * * *": connect ECONNREFUSED')]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fired()).toEqual(["2026-11-24T12:01:00.000Z * * * * *", "2026-11-24T12:02:00.000Z * * * * *"]);
  });

  it("fires only the minute it lands in after the clock jumps (a suspended machine), not the missed ones", async () => {
    vi.setSystemTime(at("2026-11-24T12:00:10.000Z"));
    ticker = startMinuteTicker({
      baseUrl: "http://127.0.0.1:8787",
      crons: ["* * * * *"],
      fetch: fakeFetch,
      log: (m) => logged.push(m),
    });
    // The wall clock moves four minutes while the timer (due at 12:01:00) waits: it fires at 12:05:10.
    vi.setSystemTime(at("2026-11-24T12:04:20.000Z"));
    await vi.advanceTimersByTimeAsync(50_000);
    expect(fired()).toEqual(["2026-11-24T12:05:00.000Z * * * * *"]);
    await vi.advanceTimersByTimeAsync(50_000);
    expect(fired()).toEqual(["2026-11-24T12:05:00.000Z * * * * *", "2026-11-24T12:06:00.000Z * * * * *"]);
  });

  it("evaluates crons in UTC and names the local host for wildcard addresses", () => {
    expect(cronsDueAt(["0 9 * * *", "* * * * *", "not a cron"], at("2026-11-24T09:00:00.000Z"))).toEqual([
      "0 9 * * *",
      "* * * * *",
    ]);
    expect(cronsDueAt(["0 9 * * *"], at("2026-11-24T09:01:00.000Z"))).toEqual([]);
    expect(localBaseUrl("0.0.0.0", 8787)).toBe("http://127.0.0.1:8787");
    expect(localBaseUrl("::", "9000")).toBe("http://[::1]:9000");
    expect(localBaseUrl("127.0.0.1", 8787)).toBe("http://127.0.0.1:8787");
  });
});
