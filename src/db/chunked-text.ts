import { splitBytes } from "./chunks.ts";
import { type SqlStore, toBytes } from "./sql.ts";

/**
 * Text columns of the run tables that may outgrow a row (a run's kwargs with its input, its result,
 * a resumable run's event). DO SQLite caps a row at 2 MB, so longer text is stored as UTF-8 chunks
 * (db/chunks.ts) in `run_chunks`, as the checkpointer stores large channel values, and its column holds ''
 * instead (never valid JSON, so never a real value).
 */

/** Up to this many UTF-8 bytes stay in the column: a run row holds several such columns. */
const INLINE_BYTES = 256 * 1024;
export const CHUNKED = "";

export const CHUNKS_SCHEMA = `CREATE TABLE IF NOT EXISTS run_chunks (
  run_id TEXT NOT NULL,
  field TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (run_id, field, chunk)
) WITHOUT ROWID`;

const encoder = new TextEncoder();

/** UTF-8 size of `text` is at most 3 bytes per UTF-16 unit: most texts are decided without encoding. */
function fitsInline(text: string): boolean {
  if (text.length * 3 <= INLINE_BYTES) return true;
  if (text.length > INLINE_BYTES) return false;
  return encoder.encode(text).byteLength <= INLINE_BYTES;
}

export class ChunkedTexts {
  constructor(private readonly sql: SqlStore) {}

  /**
   * What to put in the column for `text`: the text itself, or CHUNKED once its chunks are written.
   * Replaces earlier chunks of the same field. Call inside the transaction that writes the row.
   */
  store(runId: string, field: string, text: string): string {
    this.sql.run("DELETE FROM run_chunks WHERE run_id = ? AND field = ?", runId, field);
    if (fitsInline(text)) return text;
    for (const [chunk, data] of splitBytes(encoder.encode(text)).entries())
      this.sql.run(
        "INSERT INTO run_chunks (run_id, field, chunk, data) VALUES (?, ?, ?, ?)",
        runId,
        field,
        chunk,
        data,
      );
    return CHUNKED;
  }

  /** The text a column holds: itself, or its chunks when it holds CHUNKED. */
  load(runId: string, field: string, column: string): string {
    if (column !== CHUNKED) return column;
    const decoder = new TextDecoder();
    let text = "";
    for (const row of this.sql.iterate<{ data: ArrayBuffer | Uint8Array }>(
      "SELECT data FROM run_chunks WHERE run_id = ? AND field = ? ORDER BY chunk",
      runId,
      field,
    )) {
      text += decoder.decode(toBytes(row.data), { stream: true });
    }
    return text + decoder.decode();
  }

  deleteRun(runId: string): void {
    this.sql.run("DELETE FROM run_chunks WHERE run_id = ?", runId);
  }
}
