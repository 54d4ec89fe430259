import { describe, expect, it } from "vitest";
import { isObject, isPlainObject } from "../../src/core/json.ts";

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
