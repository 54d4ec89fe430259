// The optional Vectorize backend of the store's semantic index, against a stand-in binding (Vectorize
// has no local simulator): kept in step with the partition on put, replace, delete and expiry; asked
// only when a search's scope passes the exact scan's size; its candidates scored exactly in the partition.
import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isDomainError } from "../../src/core/errors.ts";
import { VECTORIZE_INDEXED_BYTES, VECTORIZE_MAX_TOP_K } from "../../src/core/limits.ts";
import { storeItems } from "../../src/db/schema.ts";
import type { StoreManifest } from "../../src/deployment/manifest.ts";
import { WorkspaceStore } from "../../src/store/graph-store.ts";
import { deleteStoreItem, putStoreItem } from "../../src/store/service.ts";
import {
  getItem,
  putItem,
  type SimilaritySearch,
  type StoreBindings,
  searchItemsBySimilarity,
  sweepExpiredItems,
} from "../../src/store/store.ts";
import { indexedPath, type StoreVectorIndex, vectorId, vectorizeFilter } from "../../src/store/vectorize.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { partitionName } from "../../src/workspace/partition.ts";
import { DIMS, hashEmbed } from "../fixtures/semantic.ts";
import { observingRanks } from "./helpers.ts";

type Metadata = Record<string, VectorizeVectorMetadata>;
type Call =
  | { op: "upsert"; ids: string[] }
  | { op: "deleteByIds"; ids: string[] }
  | { op: "query"; options: VectorizeQueryOptions | undefined };

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
};

type Comparable = string | number | boolean | null;
const OPS: Record<string, (value: Comparable, bound: Comparable) => boolean> = {
  $eq: (v, b) => v === b,
  $ne: (v, b) => v !== b,
  $gt: (v, b) => v !== null && b !== null && v > b,
  $gte: (v, b) => v !== null && b !== null && v >= b,
  $lt: (v, b) => v !== null && b !== null && v < b,
  $lte: (v, b) => v !== null && b !== null && v <= b,
};

/** Vectorize in memory: upsert, deleteByIds and a filtered cosine query, recording every call. */
class StandInVectorize implements StoreVectorIndex {
  readonly vectors = new Map<string, { values: number[]; metadata: Metadata }>();
  readonly calls: Call[] = [];
  failing = false;

  async upsert(vectors: VectorizeVector[]): Promise<VectorizeAsyncMutation> {
    this.calls.push({ op: "upsert", ids: vectors.map((v) => v.id) });
    if (this.failing) throw new Error("VECTOR_UPSERT_ERROR (code = 40001): stand-in outage");
    for (const v of vectors) this.vectors.set(v.id, { values: Array.from(v.values), metadata: v.metadata ?? {} });
    return { mutationId: crypto.randomUUID() };
  }

  async deleteByIds(ids: string[]): Promise<VectorizeAsyncMutation> {
    this.calls.push({ op: "deleteByIds", ids });
    if (this.failing) throw new Error("stand-in outage");
    for (const id of ids) this.vectors.delete(id);
    return { mutationId: crypto.randomUUID() };
  }

  async query(vector: VectorFloatArray | number[], options?: VectorizeQueryOptions): Promise<VectorizeMatches> {
    this.calls.push({ op: "query", options });
    if (this.failing) throw new Error("stand-in outage");
    const passes = (metadata: Metadata) =>
      Object.entries(options?.filter ?? {}).every(([field, condition]) => {
        const value = (metadata[field] ?? null) as Comparable;
        if (condition === null || typeof condition !== "object") return value === condition;
        return Object.entries(condition).every(([op, bound]) => OPS[op](value, bound as Comparable));
      });
    const matches = [...this.vectors]
      .filter(([, v]) => passes(v.metadata))
      .map(([id, v]) => ({ id, score: cosine(vector, v.values) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, options?.topK ?? 5);
    return { matches, count: matches.length };
  }

  ops(op: Call["op"]) {
    return this.calls.filter((call) => call.op === op);
  }
}

const settings: StoreManifest = {
  index: {
    embed: {
      kind: "function",
      module: { embed: (texts: string[]) => texts.map(hashEmbed) },
      exportName: "embed",
      source: "./embed.ts:embed",
    },
    dims: DIMS,
    fields: ["text", "tags[*]"],
  },
  ttl: null,
};

const workspace = () => `ws-${crypto.randomUUID()}`;
const withVectorize = () => {
  const index = new StandInVectorize();
  return { index, bindings: { ...env, STORE_VECTORIZE: index } };
};
const anyone = async () => undefined;
const storeObject = (workspaceId: string) => env.WORKSPACE.getByName(partitionName({ workspaceId, kind: "store" }));
const vectorizeIds = (workspaceId: string) =>
  runInDurableObject(storeObject(workspaceId), (_instance, state) =>
    state.storage.sql
      .exec<{ key: string; field: string; vectorize_id: string | null }>(
        "SELECT key, field, vectorize_id FROM store_vectors ORDER BY key, field",
      )
      .toArray(),
  );
const idOf = (workspaceId: string, namespace: string, key: string, field: string) =>
  vectorId(workspaceId, namespace, key, field);

describe("the store's Vectorize index, kept beside the partition", () => {
  it("ids are the SHA-256 of workspace, namespace, key and field: 64 hex characters", async () => {
    const id = await vectorId("w", "a.b", "k", "text");
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(await vectorId("w", "a.b", "k", "text")).toBe(id);
    expect(await vectorId("w", "a.b", "k", "tags[*].0")).not.toBe(id);
    expect(await vectorId("w", "a", "b\nk", "text")).not.toBe(await vectorId("w", "a", "b", "k\ntext"));
    expect(await vectorId("w", "x".repeat(5000), "k".repeat(1000), "text")).toHaveLength(64);
  });

  it("path metadata is whole labels within the indexed bytes, and a prefix is a range of it", () => {
    expect(indexedPath(["a", "b"])).toBe("a.b.");
    expect(indexedPath([])).toBe("");
    const long = "c".repeat(VECTORIZE_INDEXED_BYTES - 3);
    expect(indexedPath(["ab", long])).toBe(`ab.${long}`.length < VECTORIZE_INDEXED_BYTES ? `ab.${long}.` : "ab.");
    expect(indexedPath(["ab", `${long}x`, "d"])).toBe("ab.");
    expect(indexedPath(["x".repeat(VECTORIZE_INDEXED_BYTES)])).toBe("");
    expect(vectorizeFilter("w", ["a", "b"])).toEqual({ workspace: { $eq: "w" }, path: { $gte: "a.b.", $lt: "a.b/" } });
    expect(vectorizeFilter("w", [])).toEqual({ workspace: { $eq: "w" } });
    expect(vectorizeFilter("w", ["x".repeat(VECTORIZE_INDEXED_BYTES)])).toEqual({ workspace: { $eq: "w" } });
  });

  it("a put upserts the item's vectors; a replace, index false, a delete and an expiry delete the ids it no longer has", async () => {
    const workspaceId = workspace();
    const { index, bindings } = withVectorize();
    const store = new WorkspaceStore(bindings, workspaceId, settings);
    await store.put(["m", "n"], "a", { text: "tea", tags: ["x", "y"] });
    const [text, tag0, tag1] = await Promise.all(
      ["text", "tags[*].0", "tags[*].1"].map((field) => idOf(workspaceId, "m.n", "a", field)),
    );
    expect([...index.vectors.keys()].sort()).toEqual([text, tag0, tag1].sort());
    expect(index.vectors.get(text)).toEqual({
      values: hashEmbed("tea"),
      metadata: { workspace: workspaceId, path: "m.n." },
    });
    expect(index.vectors.get(tag1)?.values).toEqual(hashEmbed("y"));
    // One upsert call for the item's three vectors; nothing to delete on a first put.
    expect(index.calls).toEqual([{ op: "upsert", ids: [text, tag0, tag1] }]);
    // The partition keeps each vector's id.
    expect(await vectorizeIds(workspaceId)).toEqual([
      { key: "a", field: "tags[*].0", vectorize_id: tag0 },
      { key: "a", field: "tags[*].1", vectorize_id: tag1 },
      { key: "a", field: "text", vectorize_id: text },
    ]);

    // Replaced: the fields it no longer has are deleted there, the one it keeps upserted.
    index.calls.length = 0;
    await store.put(["m", "n"], "a", { text: "coffee", tags: ["z"] });
    const replaced = await vectorizeIds(workspaceId);
    const tag = replaced.find((row) => row.field.startsWith("tags"))!;
    expect(tag.vectorize_id).toBe(await idOf(workspaceId, "m.n", "a", tag.field));
    expect(index.calls).toEqual([
      { op: "upsert", ids: [text, tag.vectorize_id] },
      { op: "deleteByIds", ids: [tag0, tag1].filter((id) => id !== tag.vectorize_id) },
    ]);
    expect([...index.vectors.keys()].sort()).toEqual([text, tag.vectorize_id].sort());
    expect(index.vectors.get(text)?.values).toEqual(hashEmbed("coffee"));
    expect(index.vectors.get(tag.vectorize_id!)?.values).toEqual(hashEmbed("z"));

    // index: false leaves the item no vector, here or there.
    await store.put(["m", "n"], "a", { text: "tea" }, false);
    expect(index.vectors.size).toBe(0);
    expect(await vectorizeIds(workspaceId)).toEqual([]);

    // The API's put and delete.
    await putStoreItem(
      bindings,
      workspaceId,
      { namespace: ["m"], key: "b", value: { text: "milk" } },
      anyone,
      settings,
    );
    const milk = await idOf(workspaceId, "m", "b", "text");
    expect(index.vectors.get(milk)?.metadata).toEqual({ workspace: workspaceId, path: "m." });
    await deleteStoreItem(bindings, workspaceId, { namespace: ["m"], key: "b" }, anyone);
    expect(index.ops("deleteByIds").at(-1)).toEqual({ op: "deleteByIds", ids: [milk] });
    expect(index.vectors.size).toBe(0);

    // A graph's delete (a put of null).
    await store.put(["m"], "c", { text: "juice" });
    expect(index.vectors.size).toBe(1);
    await store.delete(["m"], "c");
    expect(index.vectors.size).toBe(0);

    // An expired item's ids go when the partition's sweep deletes it.
    await putItem(bindings, workspaceId, {
      namespace: ["m"],
      key: "old",
      value: { text: "tea" },
      ttlMinutes: 1,
      vectors: [{ field: "text", vector: Float32Array.from(hashEmbed("tea")) }],
    });
    await store.put(["m"], "live", { text: "water" });
    const db = workspaceDatabase(env, { workspaceId, kind: "store" });
    await db.update(storeItems).set({ expiresAt: "2000-01-01T00:00:00.000Z" }).where(eq(storeItems.key, "old")).run();
    const old = await idOf(workspaceId, "m", "old", "text");
    expect(index.vectors.has(old)).toBe(true);
    await sweepExpiredItems(db, Date.now(), { env: bindings, workspaceId });
    expect(index.ops("deleteByIds").at(-1)).toEqual({ op: "deleteByIds", ids: [old] });
    expect([...index.vectors.keys()]).toEqual([await idOf(workspaceId, "m", "live", "text")]);
    expect((await vectorizeIds(workspaceId)).map((r) => r.key)).toEqual(["live"]);
  });

  it("a sweep run deletes at most maxIds Vectorize ids; the items past them wait for the next run, at once", async () => {
    const workspaceId = workspace();
    const { index, bindings } = withVectorize();
    const db = workspaceDatabase(env, { workspaceId, kind: "store" });
    for (const key of ["e1", "e2", "e3"])
      await putItem(bindings, workspaceId, {
        namespace: ["s"],
        key,
        value: { text: key },
        ttlMinutes: 1,
        vectors: ["a", "b"].map((field) => ({ field, vector: Float32Array.from(hashEmbed(`${key} ${field}`)) })),
      });
    // e0 was put without the binding: no Vectorize id, nothing to forget.
    await putItem(env, workspaceId, {
      namespace: ["s"],
      key: "e0",
      value: {},
      ttlMinutes: 1,
      vectors: [{ field: "a", vector: Float32Array.from(hashEmbed("x")) }],
    });
    for (const [key, at] of [
      ["e0", "2000-01-01T00:00:00.000Z"],
      ["e1", "2000-01-02T00:00:00.000Z"],
      ["e2", "2000-01-03T00:00:00.000Z"],
      ["e3", "2000-01-04T00:00:00.000Z"],
    ])
      await db.update(storeItems).set({ expiresAt: at }).where(eq(storeItems.key, key)).run();
    expect(index.vectors.size).toBe(6);
    const sweep = () => sweepExpiredItems(db, Date.now(), { env: bindings, workspaceId, maxIds: 3 });
    const keys = async () => (await vectorizeIds(workspaceId)).map((r) => r.key);
    // e0 (no id) and e1 (2 ids) fit in 3; e2 would make 4. The next run is due at once (e2's past expiry).
    expect(await sweep()).toBe(Date.parse("2000-01-03T00:00:00.000Z"));
    expect(index.ops("deleteByIds").at(-1)).toEqual({
      op: "deleteByIds",
      ids: [expect.any(String), expect.any(String)],
    });
    expect(index.vectors.size).toBe(4);
    expect(await keys()).toEqual(["e2", "e2", "e3", "e3"]);
    expect(await sweep()).toBe(Date.parse("2000-01-04T00:00:00.000Z"));
    expect(await sweep()).toBeNull();
    expect(index.vectors.size).toBe(0);
    expect(await keys()).toEqual([]);
  });

  it("without the binding, nothing is sent and no id is kept", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, settings);
    await store.put(["m"], "a", { text: "tea" });
    expect(await vectorizeIds(workspaceId)).toEqual([{ key: "a", field: "text", vectorize_id: null }]);
  });

  it("a Vectorize failure after the write keeps the item, its vectors and the exact scan's answer", async () => {
    const workspaceId = workspace();
    const { index, bindings } = withVectorize();
    index.failing = true;
    await putStoreItem(bindings, workspaceId, { namespace: ["f"], key: "k", value: { text: "tea" } }, anyone, settings);
    expect(index.ops("upsert")).toHaveLength(1);
    expect(index.vectors.size).toBe(0);
    expect((await getItem(env, workspaceId, ["f"], "k"))?.value).toEqual({ text: "tea" });
    expect((await vectorizeIds(workspaceId)).map((r) => r.field)).toEqual(["text"]);
    const found = await searchItemsBySimilarity(bindings, workspaceId, {
      namespacePrefix: ["f"],
      vector: hashEmbed("tea"),
      offset: 0,
      limit: 10,
    });
    expect(found.map((i) => [i.key, i.score])).toEqual([["k", 1]]);
    expect(index.ops("query")).toHaveLength(0);
    // A delete while Vectorize fails still deletes the item.
    await deleteStoreItem(bindings, workspaceId, { namespace: ["f"], key: "k" }, anyone);
    expect(await getItem(env, workspaceId, ["f"], "k")).toBeNull();
  });
});

describe("a search past MAX_SCAN_VECTORS", () => {
  /** Items in two owners' namespaces, and one elsewhere, in this workspace; and a neighbour's with the same paths. */
  async function seeded() {
    const workspaceId = workspace();
    const { index, bindings } = withVectorize();
    const store = new WorkspaceStore(bindings, workspaceId, settings);
    for (let i = 0; i < 8; i++) {
      const owner = i % 2 ? "bob" : "alice";
      await store.put(["notes", owner], `n${i}`, { text: `tea ${"cake ".repeat(i)}`, owner, tags: [`t${i % 3}`] });
    }
    await store.put(["other"], "o", { text: "tea", owner: "alice" });
    await new WorkspaceStore(bindings, workspace(), settings).put(["notes", "alice"], "n0", {
      text: "tea",
      owner: "alice",
    });
    return { workspaceId, index, bindings };
  }
  const search = (bindings: StoreBindings, workspaceId: string, more: Partial<SimilaritySearch> = {}) =>
    searchItemsBySimilarity(bindings, workspaceId, {
      namespacePrefix: ["notes"],
      vector: hashEmbed("tea"),
      offset: 0,
      limit: 10,
      ...more,
    });
  const summary = (items: { key: string; score?: number }[]) => items.map((i) => [i.key, i.score]);

  it("within the scan's size, Vectorize is not asked", async () => {
    const { workspaceId, index, bindings } = await seeded();
    const items = await search(bindings, workspaceId);
    expect(items).toHaveLength(8);
    expect(index.ops("query")).toEqual([]);
  });

  it("goes to Vectorize, and answers its candidates ranked and scored as the exact scan does", async () => {
    const { workspaceId, index, bindings } = await seeded();
    const exact = await search(bindings, workspaceId);
    const approximate = await search(bindings, workspaceId, { maxScanVectors: 5 });
    expect(index.ops("query")).toEqual([
      {
        op: "query",
        options: {
          topK: VECTORIZE_MAX_TOP_K,
          filter: { workspace: { $eq: workspaceId }, path: { $gte: "notes.", $lt: "notes/" } },
          returnMetadata: "none",
          returnValues: false,
        },
      },
    ]);
    expect(summary(approximate)).toEqual(summary(exact));
    expect(approximate.map((i) => i.value)).toEqual(exact.map((i) => i.value));
    expect(approximate[0]).toMatchObject({ key: "n0", namespace: ["notes", "alice"], score: 1 });
    // Scores descend; the item elsewhere and the neighbour's are not there.
    const scores = approximate.map((i) => i.score!);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(approximate.map((i) => i.key)).not.toContain("o");

    // Past the scan's size the partition counts the scope (keys only) in the same call and reads no
    // vector; the candidates Vectorize gives are then ranked. Within it, one call scans.
    const { bindings: counting, ranks } = observingRanks(bindings);
    const calls = () =>
      ranks.map(({ scan, page }) => ({ sql: scan.candidates.sql, scanned: page.scanned, tooMany: page.tooMany }));
    await search(counting, workspaceId, { maxScanVectors: 5 });
    expect(calls().map((c) => [c.scanned, c.tooMany, c.sql.includes("vectorize_id")])).toEqual([
      [0, true, false],
      [expect.any(Number), undefined, true],
    ]);
    ranks.length = 0;
    await search(counting, workspaceId, { maxScanVectors: 100 });
    expect(calls()).toHaveLength(1);
    expect(calls()[0].sql).not.toContain("vectorize_id");

    // The empty prefix: no path condition; the item elsewhere is found too.
    const everywhere = await search(bindings, workspaceId, { namespacePrefix: [], maxScanVectors: 5 });
    expect(index.ops("query").at(-1)).toMatchObject({ options: { filter: { workspace: { $eq: workspaceId } } } });
    expect(everywhere.map((i) => i.key).sort()).toEqual(["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "o"]);
  });

  it("applies the value filter and the handler's filter to the candidates, then the page", async () => {
    const { workspaceId, bindings } = await seeded();
    const both = async (more: Partial<SimilaritySearch>) => {
      const exact = await search(bindings, workspaceId, more);
      const approximate = await search(bindings, workspaceId, { ...more, maxScanVectors: 5 });
      expect(summary(approximate)).toEqual(summary(exact));
      return approximate.map((i) => i.key).sort();
    };
    expect(await both({ filter: { owner: "alice" } })).toEqual(["n0", "n2", "n4", "n6"]);
    expect(await both({ authFilter: { owner: "bob" } })).toEqual(["n1", "n3", "n5", "n7"]);
    expect(await both({ authFilter: { owner: "bob" }, offset: 1, limit: 2 })).toHaveLength(2);
    expect(await both({ filter: { owner: "alice" }, authFilter: { key: "n4" } })).toEqual(["n4"]);
    expect(await both({ authFilter: { namespace: ["notes", "alice"] }, limit: 2 })).toHaveLength(2);
    expect(await both({ authFilter: { owner: "mallory" } })).toEqual([]);
  });

  it("finds the items of a namespace longer than Vectorize indexes, through the widened range", async () => {
    const workspaceId = workspace();
    const { index, bindings } = withVectorize();
    const store = new WorkspaceStore(bindings, workspaceId, settings);
    const long = "l".repeat(VECTORIZE_INDEXED_BYTES);
    await store.put(["ab", long, "x"], "in", { text: "tea" });
    await store.put(["ab", "short"], "beside", { text: "tea" });
    await store.put(["ab", long, "y"], "in2", { text: "tea cake" });
    const items = await search(bindings, workspaceId, { namespacePrefix: ["ab", long], maxScanVectors: 1 });
    expect(index.ops("query").at(-1)).toMatchObject({ options: { filter: { path: { $gte: "ab.", $lt: "ab/" } } } });
    expect(summary(items).map(([key]) => key)).toEqual(["in", "in2"]);
  });

  it("refuses a page past Vectorize's matches, and answers a Vectorize outage with a 503", async () => {
    const { workspaceId, index, bindings } = await seeded();
    const error = await search(bindings, workspaceId, {
      maxScanVectors: 5,
      offset: VECTORIZE_MAX_TOP_K - 5,
      limit: 10,
    }).catch((e: unknown) => e);
    expect(isDomainError(error, "invalid"), String(error)).toBe(true);
    expect((error as Error).message).toContain(`offset + limit is at most ${VECTORIZE_MAX_TOP_K}`);
    index.failing = true;
    const outage = await search(bindings, workspaceId, { maxScanVectors: 5 }).catch((e: unknown) => e);
    expect(isDomainError(outage, "unavailable"), String(outage)).toBe(true);
    expect((outage as Error).message).toContain("STORE_VECTORIZE");
  });

  it("without the binding is refused with a 422 naming the limit and what to narrow", async () => {
    const { workspaceId } = await seeded();
    const error = await search(env, workspaceId, { maxScanVectors: 8 }).catch((e: unknown) => e);
    expect(isDomainError(error, "invalid"), String(error)).toBe(true);
    expect((error as Error).message).toBe(
      "namespace_prefix: this search would score more than 8 vectors (MAX_SCAN_VECTORS), the most a search scores exactly; narrow namespace_prefix or filter, or give the Worker a Vectorize index (a STORE_VECTORIZE binding)",
    );
    // Narrowed under the limit by the filter (rows the value filter passes are what count), it is answered.
    const narrowed = await search(env, workspaceId, { maxScanVectors: 8, filter: { owner: "bob" }, limit: 2 });
    expect(narrowed.map((i) => i.value.owner)).toEqual(["bob", "bob"]);
  });
});
