// The semantic index in the store partition's real Durable Object: vectors written in the item's
// transaction, scored inside the object, and the same order and scores as LangGraph's InMemoryStore.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isDomainError } from "../../src/core/errors.ts";
import {
  EMBED_BATCH_TEXTS,
  MAX_INDEX_PATHS,
  MAX_STORE_QUERY_LENGTH,
  MAX_VECTORS_PER_ITEM,
} from "../../src/core/limits.ts";
import { storeItems } from "../../src/db/schema.ts";
import type { StoreManifest } from "../../src/deployment/manifest.ts";
import { WorkspaceStore } from "../../src/store/graph-store.ts";
import { getStoreItem, putStoreItem, searchStoreItems } from "../../src/store/service.ts";
import { putItem, searchItemsBySimilarity } from "../../src/store/store.ts";
import { workspaceDatabase } from "../../src/workspace/database.ts";
import { partitionName } from "../../src/workspace/partition.ts";
import { DIMS, FIELDS, FunctionEmbeddings, hashEmbed, PUTS } from "../fixtures/semantic.ts";
import { expectReferenceRanking } from "../fixtures/semantic-parity.ts";
import { call } from "./helpers.ts";

/** A store index over `embed`, as the build writes `store.index` with a function; `calls` counts its calls. */
function indexed(fields = FIELDS, ttl: StoreManifest["ttl"] = null) {
  const calls: string[][] = [];
  const embed = (texts: string[]) => {
    calls.push(texts);
    return texts.map(hashEmbed);
  };
  const settings: StoreManifest = {
    index: {
      embed: { kind: "function", module: { embed }, exportName: "embed", source: "./embed.ts:embed" },
      dims: DIMS,
      fields,
    },
    ttl,
  };
  return { settings, calls };
}

const workspace = () => `ws-${crypto.randomUUID()}`;
const storeObject = (workspaceId: string) => env.WORKSPACE.getByName(partitionName({ workspaceId, kind: "store" }));
const vectorRows = (workspaceId: string) =>
  runInDurableObject(storeObject(workspaceId), (_instance, state) =>
    state.storage.sql
      .exec<{ key: string; field: string }>("SELECT key, field FROM store_vectors ORDER BY key, field")
      .toArray(),
  );

// Both sides get the items in (namespace, key) order: equal scores keep the candidates' order, which is
// put order in the reference and (namespace, key) order here.
const SORTED = [...PUTS].sort((a, b) =>
  a.namespace.join(".") === b.namespace.join(".")
    ? a.key < b.key
      ? -1
      : 1
    : a.namespace.join(".") < b.namespace.join(".")
      ? -1
      : 1,
);

describe("semantic store search in the store partition", () => {
  it("gives InMemoryStore's order and scores, through a graph's store", async () => {
    const reference = new InMemoryStore({
      index: { dims: DIMS, embeddings: new FunctionEmbeddings(hashEmbed), fields: FIELDS },
    });
    const ours = new WorkspaceStore(env, workspace(), indexed().settings);
    for (const put of SORTED) {
      await reference.put(put.namespace, put.key, put.value, put.index);
      await ours.put(put.namespace, put.key, put.value, put.index);
    }
    const scored = await expectReferenceRanking(reference, (q) =>
      ours.search(q.prefix, { query: q.query, filter: q.filter, offset: q.offset, limit: q.limit }),
    );
    expect(scored).toBeGreaterThan(20);
  });

  it("embeds a batch's puts in one call, and a query in one", async () => {
    const { settings, calls } = indexed(["text"]);
    const store = new WorkspaceStore(env, workspace(), settings);
    await store.batch([
      { namespace: ["m"], key: "a", value: { text: "green tea" } },
      { namespace: ["m"], key: "b", value: { text: "black coffee" } },
      { namespace: ["m"], key: "c", value: { text: "green tea" } },
    ]);
    expect(calls).toEqual([["green tea", "black coffee"]]);
    const found = await store.search(["m"], { query: "tea" });
    expect(calls).toHaveLength(2);
    expect(found.map((i) => i.key)).toEqual(["a", "c", "b"]);
    expect(found[0].score).toBeCloseTo(Math.SQRT1_2, 6);
    expect(found[2].score).toBe(0);
  });

  it("a re-put replaces the item's vectors; index false leaves none; a delete and an expiry take them", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, indexed(["text", "tags[*]"]).settings);
    await store.put(["m"], "a", { text: "tea", tags: ["x", "y"] });
    await store.put(["m"], "b", { text: "coffee" });
    expect(await vectorRows(workspaceId)).toEqual([
      { key: "a", field: "tags[*].0" },
      { key: "a", field: "tags[*].1" },
      { key: "a", field: "text" },
      { key: "b", field: "text" },
    ]);
    // Replaced: the old vectors do not linger (the reference keeps them; a stale vector would still match).
    await store.put(["m"], "a", { text: "coffee" });
    expect((await vectorRows(workspaceId)).filter((r) => r.key === "a")).toEqual([{ key: "a", field: "text" }]);
    expect((await store.search(["m"], { query: "x" }))[0].score).toBe(0);
    await store.put(["m"], "a", { text: "tea" }, false);
    expect((await vectorRows(workspaceId)).map((r) => r.key)).toEqual(["b"]);
    const ranked = await store.search(["m"], { query: "tea" });
    expect(ranked.map((i) => [i.key, i.score])).toEqual([
      ["b", 0],
      ["a", undefined],
    ]);
    await store.delete(["m"], "b");
    expect(await vectorRows(workspaceId)).toEqual([]);

    // An expired item's vectors go with it when the partition's alarm sweeps it.
    await putItem(env, workspaceId, {
      namespace: ["m"],
      key: "old",
      value: { text: "tea" },
      ttlMinutes: 1,
      vectors: [{ field: "text", vector: Float32Array.from(hashEmbed("tea")) }],
    });
    expect((await vectorRows(workspaceId)).map((r) => r.key)).toEqual(["old"]);
    await workspaceDatabase(env, { workspaceId, kind: "store" })
      .update(storeItems)
      .set({ expiresAt: "2000-01-01T00:00:00.000Z" })
      .where(eq(storeItems.key, "old"))
      .run();
    expect(await runDurableObjectAlarm(storeObject(workspaceId))).toBe(true);
    expect(await vectorRows(workspaceId)).toEqual([]);
  });

  it("applies an authorization filter to each candidate's value, namespace and key before the page", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, indexed(["text"]).settings);
    for (let i = 0; i < 6; i++)
      await store.put(["notes", i % 2 ? "bob" : "alice"], `n${i}`, {
        text: `tea ${"x ".repeat(i)}`,
        owner: i % 2 ? "bob" : "alice",
      });
    const search = (authFilter: Record<string, unknown>, offset = 0, limit = 10) =>
      searchItemsBySimilarity(env, workspaceId, {
        namespacePrefix: ["notes"],
        vector: hashEmbed("tea"),
        offset,
        limit,
        authFilter,
      });
    expect((await search({ owner: "alice" })).map((i) => i.key)).toEqual(["n0", "n2", "n4"]);
    // The page counts only what the filter lets through.
    expect((await search({ owner: "bob" }, 1, 1)).map((i) => i.key)).toEqual(["n3"]);
    expect((await search({ namespace: ["notes", "bob"] })).map((i) => i.key)).toEqual(["n1", "n3", "n5"]);
    expect((await search({ namespace: { $contains: "alice" } })).map((i) => i.key)).toEqual(["n0", "n2", "n4"]);
    expect((await search({ key: "n5" })).map((i) => i.key)).toEqual(["n5"]);
    expect(await search({ owner: "mallory" })).toEqual([]);
  });

  it("refreshes the TTL of the page's items only, when asked", async () => {
    const workspaceId = workspace();
    const db = workspaceDatabase(env, { workspaceId, kind: "store" });
    for (const key of ["a", "b"])
      await putItem(env, workspaceId, {
        namespace: ["t"],
        key,
        value: { text: key === "a" ? "tea" : "coffee" },
        ttlMinutes: 10,
        vectors: [{ field: "text", vector: Float32Array.from(hashEmbed(key === "a" ? "tea" : "coffee")) }],
      });
    const soon = new Date(Date.now() + 60_000).toISOString();
    await db.update(storeItems).set({ expiresAt: soon }).run();
    const expiries = async () =>
      Object.fromEntries(
        (await db.select({ key: storeItems.key, at: storeItems.expiresAt }).from(storeItems).all()).map((r) => [
          r.key,
          r.at,
        ]),
      );
    await searchItemsBySimilarity(env, workspaceId, {
      namespacePrefix: ["t"],
      vector: hashEmbed("tea"),
      offset: 0,
      limit: 1,
    });
    expect(await expiries()).toEqual({ a: soon, b: soon });
    await searchItemsBySimilarity(env, workspaceId, {
      namespacePrefix: ["t"],
      vector: hashEmbed("tea"),
      offset: 0,
      limit: 1,
      refreshTtl: true,
    });
    const after = await expiries();
    expect(after.b).toBe(soon);
    expect(Date.parse(after.a!) - Date.now()).toBeGreaterThan(9 * 60_000);
  });

  it("keeps workspaces apart", async () => {
    const mine = new WorkspaceStore(env, workspace(), indexed(["text"]).settings);
    const theirs = new WorkspaceStore(env, workspace(), indexed(["text"]).settings);
    await mine.put(["m"], "secret", { text: "tea" });
    expect(await theirs.search(["m"], { query: "tea" })).toEqual([]);
    expect(await theirs.search([], { query: "tea" })).toEqual([]);
  });
});

describe("the store API's service with langgraph.json store settings", () => {
  const anyone = async () => undefined;
  const row = (workspaceId: string, key: string) =>
    workspaceDatabase(env, { workspaceId, kind: "store" })
      .select({ ttl: storeItems.ttlMinutes, at: storeItems.expiresAt })
      .from(storeItems)
      .where(eq(storeItems.key, key))
      .get();

  it("store.ttl: default_ttl applies to puts without a ttl; an explicit ttl wins", async () => {
    const workspaceId = workspace();
    const settings: StoreManifest = {
      index: null,
      ttl: { refreshOnRead: true, defaultTtlMinutes: 30, sweepIntervalMinutes: null },
    };
    await putStoreItem(env, workspaceId, { namespace: ["t"], key: "default", value: {} }, anyone, settings);
    await putStoreItem(env, workspaceId, { namespace: ["t"], key: "own", value: {}, ttl: 5 }, anyone, settings);
    await putStoreItem(env, workspaceId, { namespace: ["t"], key: "none", value: {} }, anyone, {
      index: null,
      ttl: null,
    });
    expect((await row(workspaceId, "default"))?.ttl).toBe(30);
    const at = Date.parse((await row(workspaceId, "default"))!.at!);
    expect(at - Date.now()).toBeGreaterThan(29 * 60_000);
    expect((await row(workspaceId, "own"))?.ttl).toBe(5);
    expect(await row(workspaceId, "none")).toEqual({ ttl: null, at: null });
  });

  it("store.ttl.refresh_on_read decides what a get or search does when refresh_ttl is absent", async () => {
    const workspaceId = workspace();
    const db = workspaceDatabase(env, { workspaceId, kind: "store" });
    const never: StoreManifest = {
      index: null,
      ttl: { refreshOnRead: false, defaultTtlMinutes: 10, sweepIntervalMinutes: null },
    };
    const always: StoreManifest = {
      index: null,
      ttl: { refreshOnRead: true, defaultTtlMinutes: 10, sweepIntervalMinutes: null },
    };
    await putStoreItem(env, workspaceId, { namespace: ["r"], key: "k", value: {} }, anyone, never);
    const soon = new Date(Date.now() + 60_000).toISOString();
    const reset = () => db.update(storeItems).set({ expiresAt: soon }).run();
    const search = (settings: StoreManifest, refresh_ttl?: boolean) =>
      searchStoreItems(
        env,
        workspaceId,
        { namespace_prefix: ["r"], limit: 10, offset: 0, refresh_ttl },
        anyone,
        settings,
      );
    await reset();
    await getStoreItem(env, workspaceId, "r", "k", undefined, anyone, never);
    await search(never);
    expect((await row(workspaceId, "k"))?.at).toBe(soon);
    await getStoreItem(env, workspaceId, "r", "k", true, anyone, never);
    expect((await row(workspaceId, "k"))?.at).not.toBe(soon);
    await reset();
    await search(always);
    expect((await row(workspaceId, "k"))?.at).not.toBe(soon);
    await reset();
    await search(always, false);
    expect((await row(workspaceId, "k"))?.at).toBe(soon);
  });

  it("refuses a put whose index paths are malformed or match too many texts, storing nothing", async () => {
    const workspaceId = workspace();
    const { settings, calls } = indexed(["text"]);
    const refused = async (body: Parameters<typeof putStoreItem>[2]) => {
      const error = await putStoreItem(env, workspaceId, body, anyone, settings).catch((e: unknown) => e);
      expect(isDomainError(error, "invalid"), String(error)).toBe(true);
      return (error as Error).message;
    };
    expect(await refused({ namespace: ["p"], key: "bad", value: { a: 1 }, index: ["a[x]"] })).toContain(
      "index: the path",
    );
    const many = { items: Array.from({ length: MAX_VECTORS_PER_ITEM + 1 }, (_, i) => `t${i}`) };
    expect(await refused({ namespace: ["p"], key: "many", value: many, index: ["items[*]"] })).toContain(
      `at most ${MAX_VECTORS_PER_ITEM} vectors`,
    );
    expect(calls).toEqual([]);
    expect(await row(workspaceId, "bad")).toBeUndefined();
    expect(await row(workspaceId, "many")).toBeUndefined();
  });

  it("a provider's vector of the wrong length is refused naming both numbers, and the item keeps what it had", async () => {
    const workspaceId = workspace();
    const { settings } = indexed(["text"]);
    await putStoreItem(env, workspaceId, { namespace: ["d"], key: "k", value: { text: "tea" } }, anyone, settings);
    const short: StoreManifest = {
      ...settings,
      index: {
        ...settings.index!,
        embed: {
          kind: "function",
          module: { embed: (texts: string[]) => texts.map(() => [1, 2, 3]) },
          exportName: "embed",
          source: "./short.ts:embed",
        },
      },
    };
    const error = await putStoreItem(
      env,
      workspaceId,
      { namespace: ["d"], key: "k", value: { text: "coffee" } },
      anyone,
      short,
    ).catch((e: unknown) => e);
    expect(isDomainError(error, "invalid")).toBe(true);
    expect((error as Error).message).toMatch(/3 dimensions.*dims 64/);
    const kept = await searchStoreItems(
      env,
      workspaceId,
      { namespace_prefix: ["d"], query: "tea", limit: 10, offset: 0 },
      anyone,
      settings,
    );
    expect(kept.map((i) => [i.value.text, i.score])).toEqual([["tea", 1]]);
  });
});

describe("hostile input to the semantic fields", () => {
  const send = (method: string, path: string, body: unknown) => call(path, { method, json: body });
  const detail = async (response: Response) => JSON.stringify(await response.json());

  it("refuses a query past MAX_STORE_QUERY_LENGTH, a lone surrogate, and index paths that are not a list of strings", async () => {
    const ns = ["hostile", crypto.randomUUID()];
    const long = await send("POST", "/store/items/search", {
      namespace_prefix: ns,
      query: "q".repeat(MAX_STORE_QUERY_LENGTH + 1),
    });
    expect(long.status).toBe(422);
    expect(await detail(long)).toContain("query");
    const lone = await send("POST", "/store/items/search", { namespace_prefix: ns, query: "tea \ud800" });
    expect(lone.status).toBe(422);
    for (const index of [
      true,
      "text",
      [1],
      [""],
      [null],
      Array.from({ length: MAX_INDEX_PATHS + 1 }, (_, i) => `f${i}`),
    ]) {
      const response = await send("PUT", "/store/items", { namespace: ns, key: "k", value: { text: "tea" }, index });
      expect(response.status, JSON.stringify(index)).toBe(422);
      expect(await detail(response)).toContain("index");
    }
    // null in each optional field is accepted as absent.
    expect(
      (await send("PUT", "/store/items", { namespace: ns, key: "k", value: { text: "tea" }, index: null, ttl: null }))
        .status,
    ).toBe(204);
    const found = await send("POST", "/store/items/search", {
      namespace_prefix: ns,
      query: null,
      filter: null,
      refresh_ttl: null,
    });
    expect(((await found.json()) as { items: unknown[] }).items).toHaveLength(1);
  });
});

describe("candidates the scan must not misread", () => {
  it("an item with several vectors passes a handler's filter on its first row and scores its best vector", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, indexed(["tags[*]"]).settings);
    await store.put(["f"], "many", { tags: ["coffee", "water", "tea"], owner: "alice" });
    await store.put(["f"], "other", { tags: ["tea"], owner: "bob" });
    const found = await searchItemsBySimilarity(env, workspaceId, {
      namespacePrefix: ["f"],
      vector: hashEmbed("tea"),
      offset: 0,
      limit: 10,
      authFilter: { owner: "alice" },
    });
    expect(found.map((i) => [i.key, i.score])).toEqual([["many", 1]]);
  });

  it("a vector of another length (written before dims changed) is no vector: the item is listed without a score", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, indexed(["text"]).settings);
    await store.put(["d"], "old", { text: "tea" });
    await store.put(["d"], "new", { text: "tea" });
    await runInDurableObject(storeObject(workspaceId), (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE store_vectors SET vector = ? WHERE key = 'old'",
        new Float32Array(DIMS * 2).buffer,
      );
    });
    const found = await store.search(["d"], { query: "tea" });
    expect(found.map((i) => [i.key, i.score])).toEqual([
      ["new", 1],
      ["old", undefined],
    ]);
  });
});

describe("a graph step's store batch", () => {
  it("checks every put before writing anything: a bad one later leaves an earlier delete undone", async () => {
    const workspaceId = workspace();
    const { settings, calls } = indexed(["text"]);
    const store = new WorkspaceStore(env, workspaceId, settings);
    await store.put(["b"], "kept", { text: "tea" });
    const before = calls.length;
    await expect(
      store.batch([
        { namespace: ["b"], key: "kept", value: null },
        { namespace: ["b"], key: "new", value: { text: "coffee" } },
        { namespace: ["b", "bad.label"], key: "x", value: { text: "water" } },
      ]),
    ).rejects.toThrow(/periods/);
    expect(calls.length).toBe(before);
    expect((await store.get(["b"], "kept"))?.value).toEqual({ text: "tea" });
    expect(await store.get(["b"], "new")).toBeNull();
  });

  it("embeds many puts' texts in rounds of at most MAX_VECTORS_PER_ITEM, writing each round before the next", async () => {
    const workspaceId = workspace();
    const { settings, calls } = indexed(["tags[*]"]);
    const store = new WorkspaceStore(env, workspaceId, settings);
    // Three items of 400 distinct texts each: rounds of 800 and 400 texts (1,200 would pass the bound).
    const items = [0, 1, 2].map((n) => ({
      namespace: ["r"],
      key: `k${n}`,
      value: { tags: Array.from({ length: 400 }, (_, i) => `tag ${n} ${i}`) },
    }));
    await store.batch(items);
    const perCall = calls.map((texts) => texts.length);
    expect(perCall.reduce((a, b) => a + b, 0)).toBe(1200);
    expect(perCall.every((n) => n <= EMBED_BATCH_TEXTS)).toBe(true);
    // 800 texts are 9 calls (8 of 96 and 32), then 400 are 5 (4 of 96 and 16): rounds, not one pass of 13.
    expect(perCall).toHaveLength(14);
    expect(perCall[8]).toBe(32);
    const found = await store.search(["r"], { query: "tag 2 7", limit: 3 });
    expect(found[0].key).toBe("k2");
    expect(await vectorRows(workspaceId)).toHaveLength(1200);
  });
});

describe("concurrent puts of one item", () => {
  it("leave the vectors of exactly the value that won, never a mix", async () => {
    const workspaceId = workspace();
    const store = new WorkspaceStore(env, workspaceId, indexed(["tags[*]"]).settings);
    // Each put has another number of tags: a mix would show as a count that is not the winner's.
    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        store.put(["c"], "same", { tags: Array.from({ length: n + 1 }, (__, i) => `tag ${n} ${i}`) }),
      ),
    );
    const winner = (await store.get(["c"], "same"))!.value as { tags: string[] };
    const rows = await vectorRows(workspaceId);
    expect(rows).toHaveLength(winner.tags.length);
    const found = await store.search(["c"], { query: winner.tags[0] });
    expect(found[0].score).toBeCloseTo(1, 6);
  });
});
