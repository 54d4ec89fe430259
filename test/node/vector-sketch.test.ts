// One-byte sketches of stored vectors (core/vector-sketch.ts) and the object's cache of them
// (workspace/vector-cache.ts): the bound a search relies on to skip a vector's exact score holds for
// every kind of vector, and the cache forgets a row the moment its content may have changed.
import { describe, expect, it } from "vitest";
import { VECTOR_CACHE_BYTES } from "../../src/core/limits.ts";
import { magnitude, similarity } from "../../src/core/similarity.ts";
import { approximable, sketchBytes, sketchScore, sketchVector } from "../../src/core/vector-sketch.ts";
import { VectorCache } from "../../src/workspace/vector-cache.ts";
import { seededRandom } from "../fixtures/random.ts";

/** Vectors of every shape the bound must hold for: dense, sparse, one spike, tiny, huge, rounding-hostile. */
function vectors(next: () => number, dims: number): Float32Array[] {
  const gaussian = () => Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next());
  return [
    Float32Array.from({ length: dims }, gaussian),
    Float32Array.from({ length: dims }, () => (next() < 0.05 ? gaussian() : 0)),
    Float32Array.from({ length: dims }, (_, i) => (i === 3 ? 1000 : gaussian() * 1e-3)),
    Float32Array.from({ length: dims }, () => gaussian() * 1e-30),
    Float32Array.from({ length: dims }, () => gaussian() * 1e30),
    // Components half a step from a code: the rounding error at its largest everywhere.
    Float32Array.from({ length: dims }, (_, i) => (i === 0 ? 127 : Math.floor(next() * 254 - 127) + 0.5)),
    Float32Array.from({ length: dims }, () => 1),
  ];
}

describe("a vector's sketch", () => {
  it("scores within its slack of the exact score, for every query and vector shape", () => {
    const next = seededRandom(11);
    let worst = 0;
    let checked = 0;
    for (const dims of [3, 64, 768, 1536]) {
      const stored = vectors(next, dims);
      // Queries of every shape, and scaled far down and up (within the magnitudes `approximable` admits).
      const queries = vectors(next, dims).flatMap((query) =>
        [1, 1e-100, 1e100].map((k) => Float64Array.from(query, (x) => x * k)),
      );
      for (const query of queries) {
        const q = Float64Array.from(query);
        if (!approximable(magnitude(q))) continue;
        checked += 1;
        const qm = magnitude(q);
        for (const vector of stored) {
          const m = magnitude(vector);
          const sketch = sketchVector(vector, m);
          const exact = similarity(q, qm, vector, m);
          const gap = Math.abs(sketchScore(q, qm, sketch) - exact);
          expect(gap).toBeLessThanOrEqual(sketch.slack);
          worst = Math.max(worst, sketch.slack);
        }
      }
    }
    // The far-scaled queries were checked too, not only skipped (all but those whose squares overflow
    // or underflow, and the zero query).
    expect(checked).toBeGreaterThan(2 * 4 * 7);
    // Outside those magnitudes a search scores every vector exactly (workspace/ranked-scan.ts).
    expect(approximable(1e-130)).toBe(false);
    expect(approximable(1e130)).toBe(false);
    // The bound is useful, not vacuous: a fraction of a percent of the score's range.
    expect(worst).toBeLessThan(0.02);
  });

  it("scores a zero vector 0 with no slack, and takes a byte a dimension", () => {
    const sketch = sketchVector(new Float32Array(8), 0);
    expect(sketch.slack).toBe(0);
    expect(sketchScore(Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8]), Math.hypot(1, 2, 3, 4, 5, 6, 7, 8), sketch)).toBe(
      0,
    );
    expect(sketchVector(new Float32Array(768).fill(0.5), Math.sqrt(768 * 0.25)).codes.byteLength).toBe(768);
  });
});

describe("the partition's sketch cache", () => {
  const sketch = (dims = 4) => ({ sketch: sketchVector(new Float32Array(dims).fill(1), Math.sqrt(dims)), item: 1 });

  it("forgets the ids an insert into the vectors answers, and everything on a write it cannot read", () => {
    const cache = new VectorCache();
    cache.beginSearch();
    for (const id of [1, 2, 3]) cache.set(id, sketch());
    cache.written('insert into "store_vectors" ("namespace", "key") values (?, ?) returning rowid', [[2]]);
    expect([1, 2, 3].map((id) => cache.get(id) !== undefined)).toEqual([true, false, true]);
    // Other tables, reads and deletes change no kept row's content.
    cache.written('insert into "store_items" ("namespace") values (?)', []);
    cache.written('delete from "store_vectors" where "namespace" = ? returning "vectorize_id"', [["x"]]);
    cache.written('select rowid from "store_vectors"', [[1], [3]]);
    expect(cache.size).toBe(2);
    // An insert that does not say which ids it wrote, or an update of the vectors, empties the cache.
    cache.written('insert into "store_vectors" ("namespace") values (?)', []);
    expect(cache.size).toBe(0);
    cache.set(1, sketch());
    cache.written("UPDATE store_vectors SET vector = ? WHERE rowid = 1", []);
    expect(cache.size).toBe(0);
    cache.set(1, sketch());
    cache.written("INSERT OR REPLACE INTO store_vectors (rowid) VALUES (1)", []);
    expect(cache.size).toBe(0);
  });

  it("holds at most VECTOR_CACHE_BYTES across an isolate's objects, emptying the least recently searched first", () => {
    const dims = 4096;
    const perEntry = sketchBytes(sketch(dims).sketch);
    const fits = Math.floor(VECTOR_CACHE_BYTES / perEntry);
    const older = new VectorCache();
    const newer = new VectorCache();
    older.beginSearch();
    for (let id = 0; id < fits / 2; id++) older.set(id, sketch(dims));
    newer.beginSearch();
    for (let id = 0; id < fits; id++) newer.set(id, sketch(dims));
    // The newer search needed the room: the older object's sketches went, all of them.
    expect(older.size).toBe(0);
    expect(newer.size).toBe(fits);
    // Past the budget within one search, what it has not used goes first; what it is using stays.
    newer.beginSearch();
    for (let id = 0; id < 10; id++) newer.get(id);
    newer.set(fits, sketch(dims));
    expect(newer.size).toBe(11);
    expect(newer.get(fits)).toBeDefined();
    // A search using all it holds keeps it, and scores the rest from their rows.
    newer.beginSearch();
    for (let id = 0; id < fits + 1; id++) newer.get(id);
    for (let id = fits + 1; id < 2 * fits; id++) newer.set(id, sketch(dims));
    expect(newer.size).toBeLessThanOrEqual(fits);
    newer.clear();
  });
});
