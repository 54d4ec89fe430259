import { concatBytes } from "./bytes.ts";
import { badRequest, DomainError, tooLarge } from "./errors.ts";
import { unzstd } from "./zstd.ts";

/**
 * Compressed request bodies (`Content-Encoding`): gzip and deflate through the runtime's
 * DecompressionStream, zstd through node:zlib. The output is counted as it is produced and refused
 * past `maxBytes` (MAX_BODY_BYTES), so a small bomb is a 413, never an isolate out of memory.
 */

/** The encodings a request body may have, as named in the 415 answer. */
const SUPPORTED = "gzip, deflate, zstd or no encoding";

/** The body's `Content-Encoding`, lower-case; `identity` when absent. */
export const bodyEncoding = (request: Request) =>
  (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase() || "identity";

/** A 415 naming the encoding and the ones accepted. */
const unsupported = (encoding: string) =>
  new DomainError("unsupported_media_type", `Content-Encoding ${encoding} is not supported; send ${SUPPORTED}`);

/** Refuses output past `maxBytes`, counting as it streams. */
function bounded(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > maxBytes) throw tooLarge(`Decompressed request body is larger than the limit of ${maxBytes} bytes`);
      controller.enqueue(chunk);
    },
  });
}

/**
 * `body` decoded from `encoding`, as a stream of at most `maxBytes` (a stream error past it). An
 * encoding outside gzip, deflate and zstd is a 415.
 */
export async function decodedBody(
  body: ReadableStream<Uint8Array>,
  encoding: string,
  maxBytes: number,
): Promise<ReadableStream<Uint8Array>> {
  switch (encoding) {
    case "identity":
      return body;
    case "gzip":
    case "x-gzip":
    case "deflate":
      return body
        .pipeThrough(
          new DecompressionStream(encoding === "deflate" ? "deflate" : "gzip") as unknown as TransformStream<
            Uint8Array,
            Uint8Array
          >,
        )
        .pipeThrough(bounded(maxBytes));
    case "zstd":
      return unzstd(body, maxBytes);
    default:
      throw unsupported(encoding);
  }
}

/**
 * The whole decoded body as bytes, at most `maxBytes`: 413 past it, 400 when the bytes are not
 * valid for their encoding.
 */
export async function decodedBytes(
  body: ReadableStream<Uint8Array>,
  encoding: string,
  maxBytes: number,
): Promise<Uint8Array> {
  const stream = await decodedBody(body, encoding, maxBytes);
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw badRequest(
      `The ${encoding} body could not be decompressed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return concatBytes(chunks);
}
