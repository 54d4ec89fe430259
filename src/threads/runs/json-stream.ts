/**
 * JSON bodies of any size out of a Durable Object. One RPC result is capped at 32 MiB (a page of
 * runs with multi-MB inputs, or a history of a 16 MB state, is more), a `ReadableStream` passed over
 * RPC is not: the DO returns the JSON text as a byte stream and the route sends it on as the body.
 */

/** Text is encoded this many UTF-16 units at a time, so no single chunk is huge. */
const PIECE_UNITS = 512 * 1024;

const encoder = new TextEncoder();

/** `text` as UTF-8 pieces, never splitting a surrogate pair between two pieces. */
export function* utf8Pieces(text: string): Generator<Uint8Array> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + PIECE_UNITS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    yield encoder.encode(text.slice(start, end));
    start = end;
  }
}

/** The concatenation of `parts` (JSON text), as a byte stream produced on demand. */
export function jsonStream(parts: Iterable<string>): ReadableStream<Uint8Array> {
  const pieces = (function* () {
    for (const part of parts) yield* utf8Pieces(part);
  })();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = pieces.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel() {
      pieces.return(undefined);
    },
  });
}

/**
 * JSON out of a Durable Object: the text itself when it is small enough to travel as one RPC result,
 * else a byte stream. A stream over RPC costs far more than a small string, and most answers are small.
 */
export type JsonBody = string | ReadableStream<Uint8Array>;

/** Text up to this many UTF-16 units (at most 3 MiB of UTF-8) goes as a string. */
const INLINE_UNITS = 1024 * 1024;

/** The concatenation of `parts` (JSON text) as a JsonBody. */
export function jsonBody(parts: readonly string[]): JsonBody {
  let units = 0;
  for (const part of parts) units += part.length;
  return units <= INLINE_UNITS ? parts.join("") : jsonStream(parts);
}

/** A JSON array of the given JSON texts, as a JsonBody. */
export function jsonArrayBody(items: readonly string[]): JsonBody {
  let units = 2 + Math.max(0, items.length - 1);
  for (const item of items) units += item.length;
  return units <= INLINE_UNITS ? `[${items.join(",")}]` : jsonArrayStream(items);
}

/** A JSON array of the given JSON texts, as a byte stream. */
export function jsonArrayStream(items: Iterable<string>): ReadableStream<Uint8Array> {
  return jsonStream(
    (function* () {
      yield "[";
      let first = true;
      for (const item of items) {
        if (!first) yield ",";
        first = false;
        yield item;
      }
      yield "]";
    })(),
  );
}
