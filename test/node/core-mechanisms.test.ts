import { describe, expect, it } from "vitest";
import { isObject, isPlainObject } from "../../src/core/json.ts";
import { backoff } from "../../src/core/retry.ts";

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
