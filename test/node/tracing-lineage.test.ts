// trace_id and dotted_order derived for runs posted without them (src/tracing/lineage.ts).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deriveLineage, dottedOrderSegment, type Lineage } from "../../src/tracing/lineage.ts";
import { type RunPost, RunPostSchema } from "../../src/tracing/schemas.ts";
import { toStoredTime } from "../../src/tracing/times.ts";

const run = (start: string, fields: Record<string, unknown> = {}): RunPost =>
  RunPostSchema.parse({ id: randomUUID(), name: "r", run_type: "chain", start_time: start, ...fields });

describe("dotted_order segments", () => {
  it("render the UTC start time as %Y%m%dT%H%M%S%fZ followed by the id", () => {
    const id = randomUUID();
    expect(dottedOrderSegment("2026-11-20T10:00:00.250Z", id)).toBe(`20261120T100000250000Z${id}`);
    expect(dottedOrderSegment("2026-11-20T10:00:00.123456Z", id)).toBe(`20261120T100000123456Z${id}`);
    expect(dottedOrderSegment("2026-11-20T10:00:00Z", id)).toBe(`20261120T100000000000Z${id}`);
    expect(dottedOrderSegment("2026-11-20T12:00:00+02:00", id)).toBe(`20261120T100000000000Z${id}`);
  });
});

describe("deriveLineage", () => {
  const none = async () => null;

  it("makes a root its own trace and chains children through the batch in any order", async () => {
    const root = run("2026-11-20T10:00:00Z");
    const child = run("2026-11-20T10:00:01Z", { parent_run_id: root.id });
    const leaf = run("2026-11-20T10:00:02Z", { parent_run_id: child.id });
    const derived = await deriveLineage([leaf, child, root], none);
    const rootOrder = `20261120T100000000000Z${root.id}`;
    expect(derived.get(root.id)).toEqual({ trace_id: root.id, dotted_order: rootOrder });
    expect(derived.get(leaf.id)).toEqual({
      trace_id: root.id,
      dotted_order: `${rootOrder}.20261120T100001000000Z${child.id}.20261120T100002000000Z${leaf.id}`,
    });
  });

  it("asks for each stored parent once, and leaves runs with a dotted_order or an unknown parent alone", async () => {
    const parent = randomUUID();
    const stored: Lineage = { trace_id: parent, dotted_order: `20261119T235959000000Z${parent}` };
    const asked: string[] = [];
    const lookup = async (id: string) => {
      asked.push(id);
      return id === parent ? stored : null;
    };
    const a = run("2026-11-20T00:00:01Z", { parent_run_id: parent });
    const b = run("2026-11-20T00:00:02Z", { parent_run_id: parent });
    const orphan = run("2026-11-20T00:00:03Z", { parent_run_id: randomUUID() });
    const given = run("2026-11-20T00:00:04Z");
    const withOrder = RunPostSchema.parse({ ...given, dotted_order: `20261120T000004000000Z${given.id}` });
    const derived = await deriveLineage([a, b, orphan, withOrder], lookup);
    expect(asked.sort()).toEqual([parent, orphan.parent_run_id].sort());
    expect(derived.get(a.id)).toEqual({
      trace_id: parent,
      dotted_order: `${stored.dotted_order}.20261120T000001000000Z${a.id}`,
    });
    expect(derived.has(b.id)).toBe(true);
    expect(derived.has(orphan.id)).toBe(false);
    expect(derived.has(withOrder.id)).toBe(false);
  });

  it("derives nothing for a parent cycle or a trace_id that contradicts the parent's", async () => {
    const x = run("2026-11-20T10:00:00Z");
    const y = run("2026-11-20T10:00:01Z", { parent_run_id: x.id });
    const cycle = await deriveLineage([{ ...x, parent_run_id: y.id }, y], none);
    expect(cycle.size).toBe(0);
    const root = run("2026-11-20T10:00:00Z");
    const wrong = run("2026-11-20T10:00:01Z", { parent_run_id: root.id, trace_id: randomUUID() });
    expect((await deriveLineage([root, wrong], none)).has(wrong.id)).toBe(false);
  });
});

describe("limits of derivation and of times (review findings)", () => {
  it("derives a chain at most 32 runs deep within one request, and looks up at most 100 outside parents", async () => {
    const chain: RunPost[] = [run("2026-11-20T10:00:00Z")];
    for (let i = 1; i < 40; i++) chain.push(run("2026-11-20T10:00:01Z", { parent_run_id: chain[i - 1].id }));
    const derived = await deriveLineage(chain, async () => null);
    expect(derived.get(chain[31].id)?.dotted_order.split(".")).toHaveLength(32);
    expect(derived.has(chain[39].id)).toBe(false);

    let lookups = 0;
    const orphans = Array.from({ length: 150 }, () => run("2026-11-20T10:00:00Z", { parent_run_id: randomUUID() }));
    await deriveLineage(orphans, async () => {
      lookups++;
      return null;
    });
    expect(lookups).toBe(100);
  });

  it("refuses times outside years 0000–9999 instead of failing, and keeps years 0000–0099", () => {
    expect(toStoredTime(1e20)).toBeUndefined();
    expect(toStoredTime(-1e17)).toBeUndefined();
    expect(toStoredTime("9999-12-31T23:59:59-23:59")).toBeUndefined();
    expect(toStoredTime("0050-01-01T00:00:00Z")).toBe("0050-01-01T00:00:00.000000Z");
    expect(toStoredTime("0000-01-01T00:00:00Z")).toBe("0000-01-01T00:00:00.000000Z");
    expect(RunPostSchema.safeParse({ id: randomUUID(), name: "r", run_type: "chain", start_time: 1e20 }).success).toBe(
      false,
    );
    expect(dottedOrderSegment("not a time", randomUUID())).toBeNull();
  });
});
