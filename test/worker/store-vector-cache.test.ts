// The store partition's search from kept sketches (workspace/vector-cache.ts, ranked-scan.ts) in the
// real Durable Object: the page is the exact one whatever the cache holds, a rewritten vector row is
// never scored from what was kept of its old content, and a search reads only its page's contenders.
import { env, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rankBySimilarity } from "../../src/core/similarity.ts";
import { sketchVector } from "../../src/core/vector-sketch.ts";
import { storeItems } from "../../src/db/schema.ts";
import { deleteItem, putItem, searchItemsBySimilarity } from "../../src/store/store.ts";
import { replaceItemVectors } from "../../src/store/vectors.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { partitionName } from "../../src/workspace/partition.ts";
import { sqlDatabase } from "../../src/workspace/sql.ts";
import { VectorCache } from "../../src/workspace/vector-cache.ts";
import { seededRandom } from "../fixtures/random.ts";
import { observingRanks } from "./helpers.ts";

const workspace = () => `ws-${crypto.randomUUID()}`;
const storeObject = (workspaceId: string) => env.WORKSPACE.getByName(partitionName({ workspaceId, kind: "store" }));

const DIMS = 48;

/** Vectors around a few centres, so that many scores crowd near the page's edge, as real embeddings do. */
function clustered(next: () => number, centres: number[][], spread: number): Float32Array {
  const centre = centres[Math.floor(next() * centres.length)];
  return Float32Array.from(centre, (x) => x + (next() - 0.5) * spread);
}

const vector = (values: number[]) => Float32Array.from({ length: DIMS }, (_, i) => values[i] ?? 0);

const search = (
  bindings: typeof env,
  workspaceId: string,
  query: Float32Array | number[],
  page: { offset?: number; limit?: number; prefix?: string[]; filter?: Record<string, unknown> } = {},
) =>
  searchItemsBySimilarity(bindings, workspaceId, {
    namespacePrefix: page.prefix ?? ["docs"],
    vector: [...query],
    offset: page.offset ?? 0,
    limit: page.limit ?? 10,
    filter: page.filter,
  });

const vectorRowId = (workspaceId: string, key: string) =>
  runInDurableObject(
    storeObject(workspaceId),
    (_instance, state) =>
      state.storage.sql.exec<{ id: number }>("SELECT rowid AS id FROM store_vectors WHERE key = ?", key).one().id,
  );

describe("a search from kept sketches", () => {
  // Spread 0.05: a cluster's scores all lie within the sketches' bound of each other, so every one is a
  // contender (the bound's worst case); 0.3: as embeddings spread, most fall below the bar.
  it.each([0.05, 0.3])(
    "answers the exact page, cold and warm, for pages, ties, several vectors an item and a filter (spread %s)",
    async (spread) => {
      const workspaceId = workspace();
      const next = seededRandom(7);
      const centres = Array.from({ length: 4 }, () => Array.from({ length: DIMS }, () => next() - 0.5));
      const items: { key: string; vectors: Float32Array[]; group: number }[] = [];
      for (let n = 0; n < 240; n++) {
        const count = 1 + Math.floor(next() * 3);
        const vectors = Array.from({ length: count }, () => clustered(next, centres, spread));
        // Exact ties: every tenth item repeats an earlier one's vectors.
        if (n % 10 === 9) vectors.splice(0, vectors.length, ...items[n - 5].vectors);
        items.push({ key: `k${String(n).padStart(3, "0")}`, vectors, group: n % 3 });
      }
      await Promise.all(
        items.map((item) =>
          putItem(env, workspaceId, {
            namespace: ["docs", `g${item.group}`],
            key: item.key,
            value: { group: item.group },
            ttlMinutes: null,
            vectors: item.vectors.map((v, i) => ({ field: `f${i}`, vector: v })),
          }),
        ),
      );
      // The reference: every vector scored exactly, items in (namespace, key) order, as the scan reads them.
      const ordered = [...items].sort((a, b) => a.group - b.group || (a.key < b.key ? -1 : 1));
      const expected = (query: Float32Array, offset: number, limit: number, group?: number) =>
        rankBySimilarity(
          ordered
            .filter((item) => group === undefined || item.group === group)
            .map((item) => ({ item, vectors: item.vectors })),
          query,
          { offset, limit },
        ).map(({ item, score }) => [item.key, score]);
      const { bindings, ranks } = observingRanks(env);
      const queries = [
        ...centres.map((centre) => Float32Array.from(centre)),
        items[19].vectors[0],
        clustered(next, centres, spread),
      ];
      for (const round of ["cold", "warm"]) {
        for (const query of queries)
          for (const [offset, limit] of [
            [0, 10],
            [5, 3],
            [0, 1],
            [37, 20],
          ]) {
            const found = await search(bindings, workspaceId, query, { offset, limit });
            expect(
              found.map((i) => [i.key, i.score]),
              `${round} page ${offset}+${limit}`,
            ).toEqual(expected(query, offset, limit));
          }
        // With a filter, the items are read with the vectors' ids (the scan's other form).
        const filtered = await search(bindings, workspaceId, queries[0], { filter: { group: 1 } });
        expect(filtered.map((i) => [i.key, i.score])).toEqual(expected(queries[0], 0, 10, 1));
      }
      // Once kept, a page reads a share of the 460 vectors (the first search read every one), and a page of
      // one item a small share, when the scores spread.
      const vectors = items.reduce((sum, item) => sum + item.vectors.length, 0);
      expect(ranks[0].page.vectorsRead).toBe(vectors);
      if (spread < 0.3) return;
      const warm = ranks.slice(-(queries.length * 4 + 1), -1).map(({ page }) => page);
      const read = warm.reduce((sum, page) => sum + page.vectorsRead, 0);
      expect(read).toBeLessThan((warm.length * vectors) / 4);
      const pagesOfOne = warm.filter((_, at) => at % 4 === 2);
      for (const page of pagesOfOne) expect(page.vectorsRead).toBeLessThan(vectors / 8);
    },
  );

  it("a re-put that gives the new vector its old row's id is scored from the new vector", async () => {
    const workspaceId = workspace();
    const put = (key: string, values: number[]) =>
      putItem(env, workspaceId, {
        namespace: ["docs"],
        key,
        value: {},
        ttlMinutes: null,
        vectors: [{ field: "text", vector: vector(values) }],
      });
    for (let n = 0; n < 12; n++) await put(`other${n}`, [0, 1, n / 10]);
    await put("moving", [1, 0]);
    const before = await vectorRowId(workspaceId, "moving");
    expect((await search(env, workspaceId, vector([1, 0])))[0]).toMatchObject({ key: "moving", score: 1 });
    expect((await search(env, workspaceId, vector([1, 0])))[0]).toMatchObject({ key: "moving", score: 1 });

    // SQLite gives the new row the deleted row's id (it was the largest): what was kept of it must go.
    await put("moving", [0, 0, 1]);
    expect(await vectorRowId(workspaceId, "moving")).toBe(before);
    // Were the old sketch (0 against this query) kept, the item would fall below the page's bar.
    expect((await search(env, workspaceId, vector([0, 0, 1])))[0]).toMatchObject({ key: "moving", score: 1 });
    const found = await search(env, workspaceId, vector([1, 0]), { limit: 13 });
    expect(found.find((i) => i.key === "moving")?.score).toBe(0);
  });

  it("a deleted item's vector id taken by another item's vector scores and names the new item", async () => {
    const workspaceId = workspace();
    const put = (key: string, values: number[]) =>
      putItem(env, workspaceId, {
        namespace: ["docs"],
        key,
        value: { key },
        ttlMinutes: null,
        vectors: [{ field: "text", vector: vector(values) }],
      });
    await put("a", [1, 0]);
    for (let n = 1; n <= 5; n++) await put(`d${n}`, [1, n / 10]);
    await put("b", [0, 1]);
    const idOfB = await vectorRowId(workspaceId, "b");
    await search(env, workspaceId, vector([1, 0]));
    await deleteItem(env, workspaceId, ["docs"], "b");
    await put("c", [1, 0]);
    expect(await vectorRowId(workspaceId, "c")).toBe(idOfB);
    // Were b's sketch (0 against this query) kept for c's row, c would miss the page it leads with a.
    const found = await search(env, workspaceId, vector([1, 0]), { limit: 3 });
    expect(found.map((i) => [i.key, i.value, i.score])).toEqual([
      ["a", { key: "a" }, 1],
      ["c", { key: "c" }, 1],
      ["d1", { key: "d1" }, expect.closeTo(1 / Math.hypot(1, 0.1), 6)],
    ]);
  });

  it("leaves out an expired item the sweep has not reached, reading the vectors alone", async () => {
    const workspaceId = workspace();
    for (const [key, ttlMinutes] of [
      ["stays", null],
      ["expires", 5],
      ["later", 5],
    ] as const)
      await putItem(env, workspaceId, {
        namespace: ["docs", "x"],
        key,
        value: {},
        ttlMinutes,
        vectors: [{ field: "text", vector: vector([1, key.length]) }],
      });
    for (let n = 0; n < 10; n++)
      await putItem(env, workspaceId, {
        namespace: ["docs", "y"],
        key: `filler${n}`,
        value: {},
        ttlMinutes: null,
        vectors: [{ field: "text", vector: vector([0, 0, 1]) }],
      });
    await workspaceDatabase(env, { workspaceId, kind: "store" })
      .update(storeItems)
      .set({ expiresAt: "2000-01-01T00:00:00.000Z" })
      .where(eq(storeItems.key, "expires"))
      .run();
    const keys = (await search(env, workspaceId, vector([1, 5]), { limit: 5 })).map((i) => i.key);
    expect(keys.slice(0, 2).sort()).toEqual(["later", "stays"]);
    expect(keys).not.toContain("expires");
  });

  it("reads a put's own statements: its insert answers the ids, so only those are forgotten", () => {
    const cache = new VectorCache();
    const sketch = () => ({ sketch: sketchVector(new Float32Array(4).fill(1), 2), item: 1 });
    cache.beginSearch();
    for (const id of [7, 8, 9]) cache.set(id, sketch());
    const db = sqlDatabase(() => []);
    const statements = replaceItemVectors(db, "m.u1", "k", [
      { field: "text", vector: new Float32Array(4).fill(1) },
      { field: "tags[0]", vector: new Float32Array(4).fill(2) },
    ]).map((statement) => (statement as unknown as { toSQL(): { sql: string } }).toSQL().sql);
    expect(statements).toHaveLength(2);
    cache.written(statements[0], [["vectorize-id"]]);
    cache.written(statements[1], [[8], [10]]);
    expect([7, 8, 9].map((id) => cache.get(id) !== undefined)).toEqual([true, false, true]);
  });
});
