import { describe, expect, it } from "vitest";
import { bySize, chunked, rpcBytes } from "../../src/core/batches.ts";
import { utf8Length } from "../../src/core/bytes.ts";

describe("utf8Length", () => {
  it("counts UTF-8 bytes exactly as the encoder writes them, lone surrogates as U+FFFD", () => {
    const texts = [
      "",
      "ascii",
      "é",
      "€uro",
      "😀",
      "a😀b",
      "\ud800",
      "x\udfffy",
      "\ud83d",
      "\ud83d\ud83d\ude00",
      "é".repeat(1000),
    ];
    for (const text of texts)
      expect(utf8Length(text), JSON.stringify(text)).toBe(new TextEncoder().encode(text).byteLength);
  });
});

describe("batches", () => {
  it("cuts a list into groups of a count", () => {
    expect(chunked([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunked([], 3)).toEqual([]);
  });

  it("cuts a sequence into groups of a byte budget, an oversized item alone, reading lazily", () => {
    const read: number[] = [];
    function* items() {
      for (const size of [3, 3, 5, 9, 1]) {
        read.push(size);
        yield size;
      }
    }
    const groups = bySize(items(), (n) => n, 6);
    expect(groups.next().value).toEqual([3, 3]);
    // The next group's first item has been read, and nothing past it.
    expect(read).toEqual([3, 3, 5]);
    expect([...groups]).toEqual([[5], [9], [1]]);
  });

  it("measures a value for an RPC from above (two bytes per UTF-16 unit)", () => {
    expect(rpcBytes({ a: "é" })).toBe(2 * '{"a":"é"}'.length);
  });
});
