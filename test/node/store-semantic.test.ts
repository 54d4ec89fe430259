// The pure core of semantic store search (src/store/semantic/) against LangGraph's InMemoryStore: the
// same items, embedding function, fields and queries give the same order and scores. Our side keeps
// items in the store partition's real table (node:sqlite) and filters them with the store's own SQL
// (containments), with vectors as Float32 BLOBs beside them.
import { DatabaseSync } from "node:sqlite";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { and, eq, like, or, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDomainError } from "../../src/core/errors.ts";
import { checkFieldPath } from "../../src/core/field-paths.ts";
import { EMBED_BATCH_TEXTS, MAX_EMBED_TEXT_CHARS } from "../../src/core/limits.ts";
import { cosineSimilarity, magnitude, rankBySimilarity } from "../../src/core/similarity.ts";
import { containments } from "../../src/db/json-filter.ts";
import { storeItems } from "../../src/db/schema.ts";
import { type Embedder, embedItemTexts, embedQuery } from "../../src/store/semantic/embed.ts";
import { fieldPaths, itemTexts, textsAtPath } from "../../src/store/semantic/paths.ts";
import { checkVector, packVector } from "../../src/store/semantic/vectors.ts";
import { PARTITION_SCHEMA } from "../../src/workspace/tables.ts";
import { DIMS, FIELDS, FunctionEmbeddings, hashEmbed, PUTS, type QUERIES, realEmbed } from "../fixtures/semantic.ts";
import { expectReferenceRanking } from "../fixtures/semantic-parity.ts";

/** Namespaces at or below the prefix (the store's own condition, underPrefix in store.ts, is a range; same rows here). */
const underPrefix = (prefix: string[]): SQL | undefined =>
  or(eq(storeItems.namespace, prefix.join(".")), like(storeItems.namespace, `${prefix.join(".")}.%`));

/** The store partition's real table in node:sqlite, queried through drizzle as the store queries it. */
function partitionStore() {
  const sqlite = new DatabaseSync(":memory:");
  for (const step of PARTITION_SCHEMA.store) sqlite.exec(step);
  const db = drizzle(async (query, params, method) => {
    const statement = sqlite.prepare(query);
    if (method === "run") {
      statement.run(...(params as never[]));
      return { rows: [] };
    }
    statement.setReturnArrays(true);
    const rows = statement.all(...(params as never[])) as unknown[];
    return { rows: method === "get" ? (rows[0] as unknown[]) : rows };
  });
  return { sqlite, db };
}

async function ourSide(embedder: Embedder) {
  const { sqlite, db } = partitionStore();
  const configured = fieldPaths(FIELDS);
  const now = new Date().toISOString();
  for (const put of PUTS) {
    const namespace = put.namespace.join(".");
    await db
      .insert(storeItems)
      .values({ workspaceId: "w", namespace, key: put.key, value: put.value, createdAt: now, updatedAt: now });
  }
  const vectors = await embedItemTexts(
    PUTS.map((put) => ({ item: put, texts: itemTexts(put.value, configured, put.index) })),
    embedder,
  );
  const insert = sqlite.prepare(
    "INSERT INTO store_vectors (namespace, key, field, vector, magnitude) VALUES (?, ?, ?, ?, ?)",
  );
  for (const { item, field, vector } of vectors)
    insert.run(item.namespace.join("."), item.key, field, packVector(vector), magnitude(vector));
  const readVectors = sqlite.prepare("SELECT vector FROM store_vectors WHERE namespace = ? AND key = ? ORDER BY rowid");

  return {
    fieldsOf: (namespace: string[], key: string) =>
      (
        sqlite
          .prepare("SELECT field FROM store_vectors WHERE namespace = ? AND key = ? ORDER BY field")
          .all(namespace.join("."), key) as { field: string }[]
      ).map((row) => row.field),
    async search(q: (typeof QUERIES)[number]) {
      const rows = await db
        .select()
        .from(storeItems)
        .where(
          and(eq(storeItems.workspaceId, "w"), underPrefix(q.prefix), ...containments([storeItems.value, q.filter])),
        )
        .all();
      // Candidates in the reference's order: namespace by namespace, each in put order (rowid order here).
      const order = (ns: string, key: string) => PUTS.findIndex((p) => p.namespace.join(".") === ns && p.key === key);
      rows.sort((a, b) => order(a.namespace, a.key) - order(b.namespace, b.key));
      const candidates = rows.map((row) => ({
        item: row,
        vectors: (readVectors.all(row.namespace, row.key) as { vector: Uint8Array }[]).map((r) => floatsOf(r.vector)),
      }));
      const query = await embedQuery(q.query, embedder);
      return rankBySimilarity(candidates, query, { offset: q.offset ?? 0, limit: q.limit ?? 10 }).map(
        ({ item, score }) => ({ namespace: item.namespace.split("."), key: item.key, score }),
      );
    },
  };
}

describe("semantic store search matches LangGraph's InMemoryStore", () => {
  it.each([
    ["whole-number", hashEmbed],
    ["real-valued", realEmbed],
  ])("gives the same order and scores for the same items, %s embedding, fields and queries", async (_, fn) => {
    const reference = new InMemoryStore({
      index: { dims: DIMS, embeddings: new FunctionEmbeddings(fn), fields: FIELDS },
    });
    for (const put of PUTS) await reference.put(put.namespace, put.key, put.value, put.index);
    const ours = await ourSide({ embed: async (texts) => texts.map(fn), dims: DIMS, provider: "hash" });

    // The same vectors per item, under the same field names.
    const referenceVectors = (reference as unknown as { vectors: Map<string, Map<string, Map<string, number[]>>> })
      .vectors;
    for (const put of PUTS) {
      const fields = [...(referenceVectors.get(put.namespace.join(":"))?.get(put.key)?.keys() ?? [])].sort();
      expect(ours.fieldsOf(put.namespace, put.key), `${put.key}`).toEqual(fields);
    }

    // The queries really rank, not just list.
    expect(await expectReferenceRanking(reference, (q) => ours.search(q))).toBeGreaterThan(20);
  });
});

/** The reference's own path reader (store/utils.js: InMemoryStore's, which the package does not export). */
const referenceUtils = (await import(
  new URL("../../node_modules/@langchain/langgraph-checkpoint/dist/store/utils.js", import.meta.url).href
)) as { getTextAtPath: (value: unknown, tokens: string[]) => string[]; tokenizePath: (path: string) => string[] };

const hashEmbedder = (dims = DIMS, provider = "hash"): Embedder & { calls: string[][] } => {
  const calls: string[][] = [];
  return {
    calls,
    dims,
    provider,
    embed: async (texts) => {
      calls.push(texts);
      return texts.map(hashEmbed);
    },
  };
};

const domainDetail = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(isDomainError(error, "invalid")).toBe(true);
    return String((error as Error).message);
  }
  throw new Error("expected an invalid error");
};

describe("field paths", () => {
  const value = {
    title: "Ramen",
    meta: { author: { name: "Ada" }, year: 2024, draft: false, none: null },
    chapters: [{ content: "one" }, { content: "two" }, { other: "x" }, { content: { deep: 1 } }],
    tags: ["a", "b", "c"],
    mixed: ["s", 1, true, null, { k: "v" }, [1, 2]],
    $: "dollar key",
  };
  const PATHS = [
    "$",
    "$.title",
    "title",
    "meta",
    "meta.author.name",
    "meta.year",
    "meta.draft",
    "meta.none",
    "meta.missing",
    "missing.deeper",
    "chapters[*].content",
    "chapters[0].content",
    "chapters[-1].content",
    "chapters[9].content",
    "chapters[-9].content",
    "tags[0]",
    "tags[-1]",
    "tags[*]",
    "tags.length",
    "mixed[*]",
    "title[0]",
    "*",
    "meta.*",
    "{title,meta.author.name,missing}",
    "chapters[*].{content,other}",
    "[0]",
  ];

  it.each(PATHS)("%s reads the texts the reference reads", (path) => {
    const tokens = checkFieldPath(path);
    expect(tokens).toEqual(path === "$" ? ["$"] : referenceUtils.tokenizePath(path));
    expect(textsAtPath(value, tokens)).toEqual(referenceUtils.getTextAtPath(value, tokens));
  });

  it("reads each form as documented", () => {
    const at = (path: string) => textsAtPath(value, checkFieldPath(path));
    // `$` is the whole value as indented JSON (and, as in the reference, a `$` key's text after it).
    expect(at("$")).toEqual([JSON.stringify(value, null, 2), "dollar key"]);
    expect(textsAtPath({ a: 1 }, checkFieldPath("$"))).toEqual([JSON.stringify({ a: 1 }, null, 2)]);
    expect(at("meta.author.name")).toEqual(["Ada"]);
    expect(at("chapters[*].content")).toEqual(["one", "two", JSON.stringify({ deep: 1 }, null, 2)]);
    expect(at("tags[0]")).toEqual(["a"]);
    expect(at("tags[-1]")).toEqual(["c"]);
    expect(at("meta.year")).toEqual(["2024"]);
    expect(at("meta.draft")).toEqual(["false"]);
    expect(at("meta.none")).toEqual([]);
    expect(at("missing.deeper")).toEqual([]);
    expect(at("chapters[9].content")).toEqual([]);
  });

  it.each([
    ["", "is empty"],
    ["a..b", "has an empty segment"],
    [".a", "has an empty segment"],
    ["a.", "has an empty segment"],
    ["a[x]", "has [x]: an index is [*], [n] or [-n]"],
    ["a[1.5]", "has [1.5]"],
    ["a[0", "has [0"],
    ["a]", "has an unmatched ]"],
    ["{a,}", "a field set is {name,other.name}"],
  ])("refuses %j, naming it", (path, why) => {
    const detail = domainDetail(() => checkFieldPath(path));
    expect(detail).toContain(`fields: the path ${JSON.stringify(path)}`);
    expect(detail).toContain(why);
  });

  it("an item's index: false embeds nothing, a list replaces the fields, [*] stores one text per element", () => {
    const configured = fieldPaths(["title", "chapters[*].content"]);
    expect(itemTexts(value, configured)).toEqual([
      { field: "title", text: "Ramen" },
      { field: "chapters[*].content.0", text: "one" },
      { field: "chapters[*].content.1", text: "two" },
      { field: "chapters[*].content.2", text: JSON.stringify({ deep: 1 }, null, 2) },
    ]);
    expect(itemTexts(value, configured, null)).toEqual(itemTexts(value, configured));
    expect(itemTexts(value, configured, false)).toEqual([]);
    expect(itemTexts(value, configured, ["meta.author.name"])).toEqual([{ field: "meta.author.name", text: "Ada" }]);
    expect(itemTexts(value, configured, [])).toEqual([]);
    expect(itemTexts({ a: 1 }, fieldPaths())).toEqual([{ field: "$", text: JSON.stringify({ a: 1 }, null, 2) }]);
    expect(domainDetail(() => itemTexts(value, configured, ["tags[last]"]))).toContain('index: the path "tags[last]"');
  });
});

/** A stored vector's BLOB as floats (copied: node:sqlite's bytes need not be 4-byte aligned). */
const floatsOf = (blob: Uint8Array) => new Float32Array(blob.slice().buffer);

describe("vectors", () => {
  it("round-trip through a Float32 BLOB of dims × 4 bytes", () => {
    const vector = [0.1, -2.5, 3e-8, 1e30, 0, 7];
    const blob = packVector(vector);
    expect(blob.byteLength).toBe(vector.length * 4);
    // As the partition's scan reads it (workspace/ranked-scan.ts): the BLOB's bytes as 4-byte floats.
    expect([...floatsOf(blob)]).toEqual(vector.map(Math.fround));
  });

  it("refuse a provider's vector of another length, naming both numbers", async () => {
    expect(domainDetail(() => checkVector([1, 2, 3], 4, "openai:small"))).toBe(
      "openai:small returned a vector of 3 dimensions; the index has dims 4",
    );
    expect(domainDetail(() => checkVector([1, Number.NaN], 2, "p"))).toContain("NaN at position 1");
    expect(domainDetail(() => checkVector([1, 1e39], 2, "p"))).toContain("not a finite number");
    const wrong = hashEmbedder(32, "cloudflare:@cf/baai/bge-base-en-v1.5");
    wrong.dims = 768;
    await expect(embedItemTexts([{ item: 1, texts: [{ field: "$", text: "x" }] }], wrong)).rejects.toThrow(
      "cloudflare:@cf/baai/bge-base-en-v1.5 returned a vector of 64 dimensions; the index has dims 768",
    );
    await expect(embedQuery("x", wrong)).rejects.toThrow("returned a vector of 64 dimensions; the index has dims 768");
    const short: Embedder = { dims: DIMS, provider: "p", embed: async (texts) => texts.slice(1).map(hashEmbed) };
    await expect(embedQuery("x", short)).rejects.toThrow("p returned 0 vectors for 1 text");
  });
});

describe("scoring", () => {
  it("scores a zero vector 0, on either side, as the reference does", () => {
    expect(cosineSimilarity([0, 0], [1, 2])).toBe(0);
    expect(cosineSimilarity([1, 2], [0, 0])).toBe(0);
    expect(cosineSimilarity([1, 0], [2, 0])).toBe(1);
    expect(cosineSimilarity([1, 0], [-3, 0])).toBe(-1);
    const ranked = rankBySimilarity(
      [
        { item: "a", vectors: [new Float32Array([0, 0])] },
        { item: "b", vectors: [] },
        { item: "c", vectors: [new Float32Array([0, 1]), new Float32Array([1, 1])] },
      ],
      [0, 0],
      { offset: 0, limit: 10 },
    );
    expect(ranked).toEqual([
      { item: "a", score: 0 },
      { item: "c", score: 0 },
      { item: "b", score: undefined },
    ]);
  });

  it("scores an item by its best vector and pages by items", () => {
    const candidates = [
      { item: "low", vectors: [new Float32Array([0, 1])] },
      { item: "best-of-two", vectors: [new Float32Array([0, 1]), new Float32Array([1, 0])] },
      { item: "mid", vectors: [new Float32Array([1, 1])] },
    ];
    const all = rankBySimilarity(candidates, [1, 0], { offset: 0, limit: 10 });
    expect(all.map((r) => r.item)).toEqual(["best-of-two", "mid", "low"]);
    expect(all[0].score).toBe(1);
    expect(all[1].score).toBeCloseTo(Math.SQRT1_2, 12);
    expect(rankBySimilarity(candidates, [1, 0], { offset: 1, limit: 1 }).map((r) => r.item)).toEqual(["mid"]);
  });
});

/** The ranking as first written: every vector scored exactly, every scored item sorted (stable), then the page. */
function rankAll<T>(
  candidates: readonly { item: T; vectors: readonly ArrayLike<number>[] }[],
  query: ArrayLike<number>,
  page: { offset: number; limit: number },
) {
  const scored: { item: T; score: number }[] = [];
  const scoreless: T[] = [];
  for (const { item, vectors } of candidates) {
    const scores = vectors.filter((vector) => vector.length).map((vector) => cosineSimilarity(query, vector));
    if (scores.length) scored.push({ item, score: Math.max(...scores) });
    else scoreless.push(item);
  }
  const kept: { item: T; score: number | undefined }[] = scored
    .sort((a, b) => b.score - a.score)
    .slice(page.offset, page.offset + page.limit);
  const room = page.limit - kept.length;
  if (room > 0) for (const item of scoreless.slice(0, room)) kept.push({ item, score: undefined });
  return kept;
}

describe("ranking one page of a scan", () => {
  // The ranking keeps only the page's best items (a heap): the page must be the one of scoring and
  // sorting everything.
  it("answers the page of scoring every vector exactly and sorting every item, ties and all", () => {
    const dims = 24;
    const component = fc.oneof(
      fc.integer({ min: -3, max: 3 }),
      fc.float({ min: -1, max: 1, noNaN: true, noDefaultInfinity: true }),
    );
    const vectorArb = fc.array(component, { minLength: dims, maxLength: dims }).map((xs) => new Float32Array(xs));
    fc.assert(
      fc.property(
        // A small pool of vectors, so items share them (equal scores) as twins do.
        fc.array(vectorArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(fc.nat({ max: 8 }), { maxLength: 3 }), { maxLength: 40 }),
        fc.array(component, { minLength: dims, maxLength: dims }),
        fc.nat({ max: 6 }),
        fc.nat({ max: 8 }),
        (pool, items, query, offset, limit) => {
          // An index past the pool is a zero vector (score 0).
          const candidates = items.map((picks, i) => ({
            item: `item-${i}`,
            vectors: picks.map((pick) => pool[pick] ?? new Float32Array(dims)),
          }));
          expect(rankBySimilarity(candidates, query, { offset, limit })).toEqual(
            rankAll(candidates, query, { offset, limit }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives the same page over many real-valued vectors of 768 dimensions, for tiny and huge queries too", () => {
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32 - 0.5;
    };
    const vector = () => Float32Array.from({ length: 768 }, next);
    const twin = vector();
    const candidates = Array.from({ length: 3000 }, (_, i) => ({
      item: i,
      vectors: i % 97 === 0 ? [twin] : i % 13 === 0 ? [vector(), vector()] : i % 41 === 0 ? [] : [vector()],
    }));
    const near = Array.from(twin, (x, i) => x + next() * 0.01 * (i % 3));
    // Tiny and huge queries too: where squares of the query's components underflow or overflow.
    for (const scale of [1, 1e-130, 1e-160, 1e-200, 1e150]) {
      const query = near.map((x) => x * scale);
      for (const page of [
        { offset: 0, limit: 10 },
        { offset: 25, limit: 10 },
        { offset: 2990, limit: 20 },
        { offset: 0, limit: 0 },
      ])
        expect(rankBySimilarity(candidates, query, page)).toEqual(rankAll(candidates, query, page));
    }
  });
});

describe("batching", () => {
  it("embeds many items' texts in calls of at most EMBED_BATCH_TEXTS, never one per item, and maps vectors back", async () => {
    const items = Array.from({ length: 250 }, (_, i) => ({
      item: `item-${i}`,
      texts: [
        { field: "text", text: `memory number ${i}` },
        { field: "tags[*].0", text: i % 2 ? "shared tag" : `tag ${i}` },
      ],
    }));
    const embedder = hashEmbedder();
    const vectors = await embedItemTexts(items, embedder);
    const distinct = 250 + 125 + 1;
    expect(embedder.calls.length).toBe(Math.ceil(distinct / EMBED_BATCH_TEXTS));
    expect(embedder.calls.every((batch) => batch.length <= EMBED_BATCH_TEXTS)).toBe(true);
    expect(embedder.calls.flat().length).toBe(distinct); // each distinct text once
    expect(vectors).toHaveLength(500);
    for (const { item, field, vector } of vectors) {
      const text = items.find((i) => i.item === item)!.texts.find((t) => t.field === field)!.text;
      expect([...vector]).toEqual(hashEmbed(text));
    }
    const query = hashEmbedder();
    await embedQuery("one query", query);
    expect(query.calls).toEqual([["one query"]]);
  });

  it("fails the whole batch on a provider error or a missing vector", async () => {
    const failing: Embedder = { dims: DIMS, provider: "openai:x", embed: () => Promise.reject(new Error("429 quota")) };
    await expect(embedItemTexts([{ item: 1, texts: [{ field: "$", text: "x" }] }], failing)).rejects.toThrow(
      "429 quota",
    );
    const short: Embedder = { dims: DIMS, provider: "p", embed: async (texts) => texts.slice(1).map(hashEmbed) };
    const texts = [
      { field: "a", text: "x" },
      { field: "b", text: "y" },
    ];
    await expect(embedItemTexts([{ item: 1, texts }], short)).rejects.toThrow("p returned 1 vectors for 2 texts");
  });
});

describe("texts to embed are bounded", () => {
  const configured = fieldPaths(["$"]);
  it("counts an object's indented JSON exactly, and refuses one past MAX_EMBED_TEXT_CHARS before building it", () => {
    // A value whose indented JSON is exactly the limit is embedded; one character more is a 422 naming the path.
    const shell = JSON.stringify({ t: "" }, null, 2).length;
    const exact = { t: "x".repeat(MAX_EMBED_TEXT_CHARS - shell) };
    expect(itemTexts(exact, configured)[0].text).toHaveLength(MAX_EMBED_TEXT_CHARS);
    const over = { t: "x".repeat(MAX_EMBED_TEXT_CHARS - shell + 1) };
    expect(() => itemTexts(over, configured)).toThrow(/index: the text at "\$" is over 32768 characters/);
    // Nesting multiplies indentation: under 10 KB of value, megabytes of text; refused without building it.
    let deep: unknown = Array.from({ length: 2000 }, () => 0);
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(JSON.stringify(deep).length).toBeLessThan(10_000);
    expect(() => itemTexts({ a: deep }, fieldPaths(["a"]))).toThrow(/the text at "a" is over/);
    // A long string field too.
    expect(() => itemTexts({ s: "y".repeat(MAX_EMBED_TEXT_CHARS + 1) }, fieldPaths(["s"]))).toThrow(/the text at "s"/);
  });

  it("counts as JSON.stringify does: arrays, nested objects, dates, undefined and functions", () => {
    const samples: unknown[] = [
      [],
      {},
      [1, [2, [3, {}]], { a: [] }],
      { a: { b: { c: [null, true, 'q"\n'] } }, d: undefined, f: () => 1 },
      [undefined, () => 1, new Date(0)],
      { when: new Date(0), nested: [{ x: 1 }, { y: [1, 2, 3] }] },
    ];
    for (const sample of samples) {
      const text = itemTexts({ v: sample }, fieldPaths(["v"]))[0]?.text;
      if (text !== undefined) expect(text).toBe(JSON.stringify(sample, null, 2));
    }
    // As the reference: a field set's null is the text "null".
    expect(itemTexts({ a: null, b: 1 }, fieldPaths(["{a,b}"])).map((t) => t.text)).toEqual(["null", "1"]);
  });
});
