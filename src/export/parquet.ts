/// <reference path="./wasm.d.ts" />
import { Table, tableToIPC } from "apache-arrow";
import {
  Compression,
  initSync,
  wasmMemory,
  type RecordBatch as WasmRecordBatch,
  Table as WasmTable,
  transformParquetStream,
  WriterPropertiesBuilder,
} from "parquet-wasm/esm";
import parquetWasm from "parquet-wasm/esm/parquet_wasm_bg.wasm";
import { type ExportRow, exportRecordBatch, type FormatVersion } from "./columns.ts";

/**
 * Parquet encoding for the Workers runtime: rows → Arrow record batches → parquet-wasm's streaming
 * writer, with bytes handed on as they are produced so a file of any length fits in 128 MB. Wasm
 * memory never shrinks, so its peak is what counts: one record batch plus one open row group.
 */

export type ParquetCompression = "none" | "gzip" | "snappy" | "zstandard";

export type EncodeOptions = {
  fields: readonly string[];
  version: FormatVersion;
  compression: ParquetCompression;
  /** Most rows per Arrow record batch handed to the writer; larger input batches are split. */
  batchRows?: number;
  /** Most text per record batch (UTF-16 units, roughly bytes); bounds a batch of large inputs/outputs. */
  batchBytes?: number;
  /** Most rows per Parquet row group; the writer holds the open row group in wasm memory. */
  rowGroupRows?: number;
  /** Most bytes per row group, as the writer estimates them (near the compressed size). */
  rowGroupBytes?: number;
  /** Fail when the writer makes no progress for this long (a wasm panic leaves its stream pending forever). */
  stallMs?: number;
};

// Measured in Node: 100,000 runs of ~600 bytes without inputs/outputs encode at ~100,000 rows/s with
// wasm memory peaking near 30 MB; runs with 4 KB inputs/outputs stay near 35 MB. The peak follows the
// record batch and the open row group, never the file length, and it is what counts against 128 MB.
export const DEFAULT_BATCH_ROWS = 2_000;
export const DEFAULT_BATCH_BYTES = 4 * 2 ** 20;
export const DEFAULT_ROW_GROUP_ROWS = 20_000;
export const DEFAULT_ROW_GROUP_BYTES = 4 * 2 ** 20;
const DEFAULT_STALL_MS = 60_000;

const CODECS: Record<ParquetCompression, Compression> = {
  none: Compression.UNCOMPRESSED,
  gzip: Compression.GZIP,
  snappy: Compression.SNAPPY,
  zstandard: Compression.ZSTD,
};

let initialised = false;

/** Bytes of the Parquet encoder's WebAssembly memory (it grows to its peak and never shrinks); 0 before first use. */
export function parquetMemoryBytes(): number {
  return initialised ? wasmMemory().buffer.byteLength : 0;
}

/**
 * Instantiates parquet-wasm once per isolate, on the export path only. Workers get the module from
 * the bundle; Node callers pass the bytes of `parquet-wasm/esm/parquet_wasm_bg.wasm` first.
 */
export function initParquet(wasm: WebAssembly.Module | ArrayBuffer | ArrayBufferView = parquetWasm): void {
  if (initialised) return;
  initSync({ module: wasm });
  initialised = true;
}

/** Rows → one Arrow IPC stream → the record batches of a table in wasm memory. */
function toWasmBatches(rows: readonly ExportRow[], options: EncodeOptions): WasmRecordBatch[] {
  const ipc = tableToIPC(new Table([exportRecordBatch(rows, options.fields, options.version)]), "stream");
  const table = WasmTable.fromIPCStream(ipc);
  try {
    return table.recordBatches();
  } finally {
    table.free();
  }
}

/** How many rows from `start` make the next record batch, by row count and by text size. */
function nextBatchEnd(rows: readonly ExportRow[], start: number, fields: readonly string[], maxRows: number, maxBytes: number): number {
  const end = Math.min(rows.length, start + maxRows);
  let bytes = 0;
  for (let i = start; i < end; i++) {
    const row = rows[i] as Record<string, unknown>;
    for (const field of fields) {
      const value = row[field];
      bytes += typeof value === "string" ? value.length : 8;
    }
    if (bytes >= maxBytes) return i + 1;
  }
  return end;
}

/** How an export file failed to encode; the message says where. */
export class ParquetEncodeError extends Error {
  constructor(message: string, cause?: unknown) {
    super(cause === undefined ? message : `${message}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "ParquetEncodeError";
  }
}

/**
 * One Parquet file of all rows of `batches`, streamed. Nothing runs until the first read; errors from
 * the rows, the conversion or the writer error the stream, since parquet-wasm skips failed batches
 * and would otherwise finish a valid-looking file without them.
 */
export function encodeParquet(
  batches: AsyncIterable<ExportRow[]> | Iterable<ExportRow[]>,
  options: EncodeOptions,
): ReadableStream<Uint8Array> {
  const batchRows = Math.max(1, options.batchRows ?? DEFAULT_BATCH_ROWS);
  const batchBytes = Math.max(1, options.batchBytes ?? DEFAULT_BATCH_BYTES);
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  let source: AsyncIterator<ExportRow[]> | Iterator<ExportRow[]> | undefined;
  let pendingRows: ExportRow[] = []; // the source batch being converted, from `converted` on
  let converted = 0;
  let pendingBatches: WasmRecordBatch[] = []; // converted, not yet taken by the writer
  let sentBatch = false;
  let output: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let finished = false;

  // The first failure anywhere; awaited beside every wait on the writer.
  let fail!: (error: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});

  // Armed only while we wait on the writer and it is not waiting on the source.
  let waitingOnWriter = false;
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(stallTimer);
    if (waitingOnWriter && !finished) {
      stallTimer = setTimeout(() => fail(new ParquetEncodeError(`Parquet encoding stalled: the writer produced nothing for ${stallMs} ms`)), stallMs);
    }
  };
  const disarm = () => clearTimeout(stallTimer);

  const release = async () => {
    finished = true;
    disarm();
    for (const batch of pendingBatches) batch.free();
    pendingBatches = [];
    pendingRows = [];
    converted = 0;
    await source?.return?.();
  };

  const input = new ReadableStream<WasmRecordBatch>(
    {
      async pull(controller) {
        disarm();
        try {
          while (pendingBatches.length === 0) {
            if (converted >= pendingRows.length) {
              const next = finished ? { done: true as const, value: undefined } : await source!.next();
              if (next.done) {
                // The writer takes its schema from the first batch: an empty export still sends one.
                if (!sentBatch && !finished) pendingBatches = toWasmBatches([], options);
                sentBatch = true;
                if (pendingBatches.length === 0) {
                  controller.close();
                  return;
                }
                break;
              }
              pendingRows = next.value;
              converted = 0;
              continue;
            }
            const end = nextBatchEnd(pendingRows, converted, options.fields, batchRows, batchBytes);
            pendingBatches = toWasmBatches(pendingRows.slice(converted, end), options);
            converted = end;
            sentBatch = true;
          }
          controller.enqueue(pendingBatches.shift()!);
        } catch (error) {
          const failure = new ParquetEncodeError("Parquet encoding failed", error);
          fail(failure);
          controller.error(failure);
        } finally {
          arm();
        }
      },
    },
    { highWaterMark: 0 },
  );

  async function open(): Promise<ReadableStreamDefaultReader<Uint8Array>> {
    initParquet();
    source = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]();
    const properties = new WriterPropertiesBuilder()
      .setCompression(CODECS[options.compression])
      .setCreatedBy("agent-platform")
      .setKeyValueMetadata(new Map([["agent_platform.format_version", options.version]]))
      .setMaxRowGroupSize(Math.max(1, options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS))
      .setMaxRowGroupBytes(Math.max(1, options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES))
      .build();
    const stream: ReadableStream<Uint8Array> = await transformParquetStream(input, properties);
    return stream.getReader();
  }

  /** Waits for the writer, unless something fails first. */
  async function fromWriter<T>(work: Promise<T>): Promise<T> {
    waitingOnWriter = true;
    arm();
    try {
      return await Promise.race([work, failed]);
    } finally {
      waitingOnWriter = false;
      disarm();
    }
  }

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          output ??= await fromWriter(open());
          const chunk = await fromWriter(output.read());
          if (chunk.done) {
            await release();
            controller.close();
          } else {
            controller.enqueue(chunk.value);
          }
        } catch (error) {
          const failure = error instanceof ParquetEncodeError ? error : new ParquetEncodeError("Parquet encoding failed in the writer", error);
          await release().catch(() => {});
          output?.cancel(failure).catch(() => {});
          controller.error(failure);
        }
      },
      async cancel(reason) {
        await release();
        await output?.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
