import { zstdDecompressSync } from "node:zlib";
import { concatBytes } from "./bytes.ts";
import { badRequest, tooLarge } from "./errors.ts";

/**
 * `Content-Encoding: zstd` request bodies, as the Python `langsmith` SDK sends its multipart batches
 * once `/info` advertises `zstd_compression_enabled`. The decoder is the runtime's own `node:zlib`
 * (nodejs_compat in workerd, the same API in Node), so no third-party codec is bundled.
 *
 * The SDK sends one frame per batch with a Content-Length, and the compressed body is already capped
 * by MAX_BODY_BYTES, so it is read whole and decoded in one call whose output may not pass `maxBytes`:
 * the decoder stops there, and a small bomb never inflates further than the limit.
 */

/** The bytes of `body`, refusing more than `maxBytes` (the body-limit middleware normally stops it first). */
async function readAll(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(`Request body is larger than the limit of ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return concatBytes(chunks);
}

/** Node and workerd refuse an output over `maxOutputLength` with a RangeError (ERR_BUFFER_TOO_LARGE in Node). */
const isOverLimit = (error: unknown) =>
  error instanceof RangeError || /larger than|too large|maxOutputLength/i.test(String((error as Error)?.message));

/** A zstd-compressed body, decompressed, as a stream of at most `maxBytes`. */
export async function unzstd(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<ReadableStream<Uint8Array>> {
  const compressed = await readAll(body, maxBytes);
  let plain: Uint8Array;
  try {
    plain = zstdDecompressSync(compressed, { maxOutputLength: maxBytes });
  } catch (error) {
    if (isOverLimit(error)) throw tooLarge(`Decompressed request body is larger than the limit of ${maxBytes} bytes`);
    throw badRequest(
      `The zstd body could not be decompressed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return new Response(plain as Uint8Array<ArrayBuffer>).body!;
}
