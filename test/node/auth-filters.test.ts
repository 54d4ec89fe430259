import { describe, expect, it } from "vitest";
import { filterAsContainment, matchesFilter } from "../../src/core/auth-filter.ts";

describe("authorization filters", () => {
  it("match plain values and $eq exactly, and require the key", () => {
    expect(matchesFilter({ owner: "a", n: 1 }, { owner: "a" })).toBe(true);
    expect(matchesFilter({ owner: "a" }, { owner: { $eq: "a" } })).toBe(true);
    expect(matchesFilter({ owner: "b" }, { owner: "a" })).toBe(false);
    expect(matchesFilter({ n: 1 }, { n: "1" })).toBe(false);
    expect(matchesFilter({}, { owner: "a" })).toBe(false);
    expect(matchesFilter({ owner: "a", team: "x" }, { owner: "a", team: "y" })).toBe(false);
    expect(matchesFilter({ anything: 1 }, undefined)).toBe(true);
  });

  it("match $contains against arrays only, one value or all of several", () => {
    expect(matchesFilter({ users: ["a", "b"] }, { users: { $contains: "a" } })).toBe(true);
    expect(matchesFilter({ users: ["a", "b"] }, { users: { $contains: ["a", "b"] } })).toBe(true);
    expect(matchesFilter({ users: ["a"] }, { users: { $contains: ["a", "b"] } })).toBe(false);
    expect(matchesFilter({ users: "a" }, { users: { $contains: "a" } })).toBe(false);
  });

  it("become metadata containment for searches", () => {
    expect(filterAsContainment({ owner: "a", users: { $contains: "b" }, team: { $eq: "x" } })).toEqual({
      owner: "a",
      users: ["b"],
      team: "x",
    });
    expect(filterAsContainment(undefined)).toBeUndefined();
  });
});
