// Protocol v2's pure rules: graph events → thread events, and the channel/namespace/depth/since filter.
import { describe, expect, it } from "vitest";
import {
  channelOf,
  eventDrafts,
  isPrefixOf,
  matchesFilter,
  resumeValue,
  subscriptionProblem,
} from "../../src/threads/protocol/normalize.ts";

const graphEvent = (method: string, data: unknown, namespace: string[] = [], node?: string) => ({
  method,
  params: { namespace, data, ...(node ? { node } : {}), timestamp: 1 },
});

const event = (method: string, namespace: string[], data: unknown = {}, seq = 1) => ({
  seq,
  method,
  params: { namespace, data },
});

describe("eventDrafts", () => {
  it("drops the graph's root lifecycle and keeps subgraph lifecycle", () => {
    const asked = new Set<string>();
    expect(eventDrafts(graphEvent("lifecycle", { event: "started" }), asked)).toEqual([]);
    expect(eventDrafts(graphEvent("lifecycle", { event: "started", graph_name: "sub" }, ["sub:1"]), asked)).toEqual([
      { method: "lifecycle", namespace: ["sub:1"], data: { event: "started", graph_name: "sub" }, timestamp: 1 },
    ]);
  });

  it("turns interrupts into one input.requested each, from updates or values", () => {
    const asked = new Set<string>();
    const interrupts = [{ id: "i1", value: { question: "ok?" } }];
    const fromUpdates = eventDrafts(graphEvent("updates", { node: "__interrupt__", values: interrupts }), asked);
    expect(fromUpdates).toEqual([
      {
        method: "input.requested",
        namespace: [],
        data: { interrupt_id: "i1", payload: { question: "ok?" } },
        timestamp: 1,
      },
    ]);
    // The same interrupt in a values event is not announced again, and values without state are dropped.
    expect(eventDrafts(graphEvent("values", { __interrupt__: interrupts }), asked)).toEqual([]);
    expect(eventDrafts(graphEvent("values", { a: 1, __interrupt__: interrupts }), asked)).toEqual([
      { method: "values", namespace: [], data: { a: 1 }, timestamp: 1 },
    ]);
  });

  it("keeps an update's node and values, and names custom data", () => {
    const asked = new Set<string>();
    expect(eventDrafts(graphEvent("updates", { node: "step1", values: { items: ["x"] } }), asked)).toEqual([
      { method: "updates", namespace: [], node: "step1", data: { items: ["x"] }, timestamp: 1 },
    ]);
    expect(eventDrafts(graphEvent("custom", 42), asked)[0].data).toEqual({ payload: 42 });
    expect(eventDrafts(graphEvent("custom:progress", { pct: 5 }), asked)[0]).toMatchObject({
      method: "custom",
      data: { name: "progress", payload: { pct: 5 } },
    });
    expect(eventDrafts(graphEvent("debug", {}), asked)).toEqual([]);
  });
});

describe("matchesFilter", () => {
  it("selects by channel; custom covers named custom channels; input is input.requested", () => {
    expect(matchesFilter({ channels: ["values"] }, event("values", []))).toBe(true);
    expect(matchesFilter({ channels: ["values"] }, event("updates", []))).toBe(false);
    expect(matchesFilter({ channels: ["input"] }, event("input.requested", []))).toBe(true);
    const named = event("custom", [], { name: "progress", payload: 1 });
    expect(channelOf(named)).toBe("custom:progress");
    expect(matchesFilter({ channels: ["custom"] }, named)).toBe(true);
    expect(matchesFilter({ channels: ["custom:progress"] }, named)).toBe(true);
    expect(matchesFilter({ channels: ["custom:other"] }, named)).toBe(false);
  });

  it("selects by namespace prefix (a bare node name matches its task ids) and depth", () => {
    const deep = event("values", ["agent:1f0", "tools:9a"]);
    expect(isPrefixOf(["agent"], ["agent:1f0"])).toBe(true);
    expect(isPrefixOf(["agent:2"], ["agent:1f0"])).toBe(false);
    expect(matchesFilter({ channels: ["values"], namespaces: [["agent"]] }, deep)).toBe(true);
    expect(matchesFilter({ channels: ["values"], namespaces: [["agent"]], depth: 0 }, deep)).toBe(false);
    expect(matchesFilter({ channels: ["values"], namespaces: [["agent"]], depth: 1 }, deep)).toBe(true);
    expect(matchesFilter({ channels: ["values"], namespaces: [[]], depth: 0 }, event("values", []))).toBe(true);
    expect(matchesFilter({ channels: ["values"], namespaces: [["other"]] }, deep)).toBe(false);
  });

  it("skips events up to since", () => {
    expect(matchesFilter({ channels: ["values"], since: 4 }, event("values", [], {}, 4))).toBe(false);
    expect(matchesFilter({ channels: ["values"], since: 4 }, event("values", [], {}, 5))).toBe(true);
  });
});

describe("commands' pure parts", () => {
  it("resumes one pending interrupt with its answer, several with a map by id", () => {
    expect(resumeValue([{ interrupt_id: "a", response: "yes" }], 1)).toBe("yes");
    expect(resumeValue([{ interrupt_id: "a", response: "yes" }], 2)).toEqual({ a: "yes" });
    expect(
      resumeValue(
        [
          { interrupt_id: "a", response: 1 },
          { interrupt_id: "b", response: 2 },
        ],
        2,
      ),
    ).toEqual({ a: 1, b: 2 });
  });

  it("checks subscription params", () => {
    expect(
      subscriptionProblem({ channels: ["values", "custom:x"], namespaces: [["a"]], depth: 1, since: 0 }),
    ).toBeNull();
    expect(subscriptionProblem({})).toContain("channels");
    expect(subscriptionProblem({ channels: ["bogus"] })).toContain("bogus");
    expect(subscriptionProblem({ channels: ["values"], namespaces: ["a"] })).toContain("namespaces");
    expect(subscriptionProblem({ channels: ["values"], depth: -1 })).toContain("depth");
  });
});
