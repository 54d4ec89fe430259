// JSON answers out of a Durable Object: small ones as a string, large ones as a byte stream, same bytes.
import { describe, expect, it } from "vitest";
import { jsonArrayBody, jsonBody } from "../../src/threads/runs/json-stream.ts";

const text = async (body: string | ReadableStream<Uint8Array>) =>
  typeof body === "string" ? body : await new Response(body).text();

describe("jsonBody / jsonArrayBody", () => {
  it("answers small JSON as the text itself", () => {
    expect(jsonBody(['{"a":', "1}"])).toBe('{"a":1}');
    expect(jsonArrayBody([])).toBe("[]");
    expect(jsonArrayBody(['{"a":1}', '"é😀"'])).toBe('[{"a":1},"é😀"]');
  });

  it("streams JSON over a million UTF-16 units, with the same content", async () => {
    const big = JSON.stringify({ text: "😀x".repeat(400_000) });
    const body = jsonBody([big]);
    expect(body).toBeInstanceOf(ReadableStream);
    expect(await text(body)).toBe(big);

    const items = Array.from({ length: 3 }, (_, i) => JSON.stringify({ i, pad: "é".repeat(400_000) }));
    const array = jsonArrayBody(items);
    expect(array).toBeInstanceOf(ReadableStream);
    expect(JSON.parse(await text(array))).toEqual(items.map((item) => JSON.parse(item)));
  });

  it("keeps a body right at the limit as a string and one unit over as a stream", () => {
    const atLimit = `"${"a".repeat(1024 * 1024 - 2)}"`;
    expect(typeof jsonBody([atLimit])).toBe("string");
    expect(jsonBody([atLimit, " "])).toBeInstanceOf(ReadableStream);
  });
});
