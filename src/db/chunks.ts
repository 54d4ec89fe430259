/**
 * Values larger than a row. D1 and Durable Object SQLite refuse a row, string or BLOB over 2,000,000
 * bytes, so a large value (a checkpoint's channel value, a run's long text, a trace's attachment) is
 * stored as numbered rows of at most ROW_CHUNK_BYTES each, and joined again on read (`concatBytes`,
 * core/bytes.ts).
 */

/** Bytes of a large value per row: 1 MiB, half of what a row may hold, leaving room for its key columns. */
export const ROW_CHUNK_BYTES = 1024 * 1024;

/** Pieces of at most ROW_CHUNK_BYTES, in order; always at least one, possibly empty. Views, not copies. */
export function splitBytes(bytes: Uint8Array): Uint8Array[] {
  if (bytes.byteLength <= ROW_CHUNK_BYTES) return [bytes];
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += ROW_CHUNK_BYTES)
    chunks.push(bytes.subarray(offset, offset + ROW_CHUNK_BYTES));
  return chunks;
}
