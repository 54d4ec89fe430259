/// <reference path="./wasm.d.ts" />
import { Table, tableToIPC } from "apache-arrow";
import {
  Compression,
  EnabledStatistics,
  Encoding,
  initSync,
  transformParquetStream,
  type RecordBatch as WasmRecordBatch,
  Table as WasmTable,
  WriterPropertiesBuilder,
  wasmMemory,
} from "parquet-wasm/esm";
import parquetWasm from "parquet-wasm/esm/parquet_wasm_bg.wasm";
import { type ColumnPage, emptyPage, exportRecordBatch, type FormatVersion } from "./columns.ts";

/**
 * Parquet encoding for the Workers runtime: column pages → Arrow record batches (one per page) →
 * parquet-wasm's streaming writer, with bytes handed on as they are produced so a file of any length
 * fits in 128 MB. Wasm memory never shrinks, so its peak is what counts: one page plus one open row
 * group. The shard bounds a page by rows and bytes.
 */

export type ParquetCompression = "none" | "gzip" | "snappy" | "zstandard";

export type EncodeOptions = {
  fields: readonly string[];
  version: FormatVersion;
  compression: ParquetCompression;
  /** Most rows per Parquet row group; the writer holds the open row group in wasm memory. */
  rowGroupRows?: number;
  /** Most bytes per row group, as the writer estimates them (near the compressed size). */
  rowGroupBytes?: number;
  /** Fail when the writer makes no progress for this long (a wasm panic leaves its stream pending forever). */
  stallMs?: number;
};

// High-cardinality columns gain nothing from a dictionary: the writer would build one, find it too
// big and fall back to plain pages, at about a fifth of the encoding time.
const WITHOUT_DICTIONARY = [
  "id",
  "trace_id",
  "parent_run_id",
  "dotted_order",
  "start_time",
  "end_time",
  "parent_run_ids",
  "extra",
  "events",
  "inputs",
  "outputs",
];
// Times of runs in start order differ little from one row to the next: delta-encoded they take a
// fraction of the bytes, and the compressor has that much less to do.
const DELTA_ENCODED = ["start_time", "end_time", "first_token_time"];
// Min/max of JSON documents and free text prunes nothing for a reader; computing them per page does cost.
const WITHOUT_STATISTICS = ["inputs", "outputs", "extra", "events", "error", "feedback_stats"];
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

/** A page → one Arrow IPC stream → its record batch in wasm memory. */
function toWasmBatches(page: ColumnPage, options: EncodeOptions): WasmRecordBatch[] {
  const ipc = tableToIPC(new Table([exportRecordBatch(page, options.fields, options.version)]), "stream");
  const table = WasmTable.fromIPCStream(ipc);
  try {
    return table.recordBatches();
  } finally {
    table.free();
  }
}

/** How an export file failed to encode; the message says where. */
export class ParquetEncodeError extends Error {
  constructor(message: string, cause?: unknown) {
    super(cause === undefined ? message : `${message}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = "ParquetEncodeError";
  }
}

/**
 * One Parquet file of all rows of `pages`, streamed. Nothing runs until the first read; errors from
 * the rows, the conversion or the writer error the stream, since parquet-wasm skips failed batches
 * and would otherwise finish a valid-looking file without them.
 */
export function encodeParquet(
  pages: AsyncIterable<ColumnPage> | Iterable<ColumnPage>,
  options: EncodeOptions,
): ReadableStream<Uint8Array> {
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  let source: AsyncIterator<ColumnPage> | Iterator<ColumnPage> | undefined;
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
      stallTimer = setTimeout(
        () => fail(new ParquetEncodeError(`Parquet encoding stalled: the writer produced nothing for ${stallMs} ms`)),
        stallMs,
      );
    }
  };
  const disarm = () => clearTimeout(stallTimer);

  const release = async () => {
    finished = true;
    disarm();
    for (const batch of pendingBatches) batch.free();
    pendingBatches = [];
    await source?.return?.();
  };

  const input = new ReadableStream<WasmRecordBatch>(
    {
      async pull(controller) {
        disarm();
        try {
          while (pendingBatches.length === 0) {
            const next = finished ? { done: true as const, value: undefined } : await source!.next();
            if (next.done) {
              // The writer takes its schema from the first batch: an empty export still sends one.
              if (!sentBatch && !finished) pendingBatches = toWasmBatches(emptyPage(options.fields), options);
              sentBatch = true;
              if (pendingBatches.length === 0) {
                controller.close();
                return;
              }
              break;
            }
            if (next.value.rows === 0) continue;
            pendingBatches = toWasmBatches(next.value, options);
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
    source = Symbol.asyncIterator in pages ? pages[Symbol.asyncIterator]() : pages[Symbol.iterator]();
    let builder = new WriterPropertiesBuilder()
      .setCompression(CODECS[options.compression])
      .setCreatedBy("agent-platform")
      .setKeyValueMetadata(new Map([["agent_platform.format_version", options.version]]))
      .setMaxRowGroupSize(Math.max(1, options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS))
      .setMaxRowGroupBytes(Math.max(1, options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES));
    for (const field of WITHOUT_DICTIONARY)
      if (options.fields.includes(field)) builder = builder.setColumnDictionaryEnabled(field, false);
    for (const field of DELTA_ENCODED)
      if (options.fields.includes(field)) builder = builder.setColumnEncoding(field, Encoding.DELTA_BINARY_PACKED);
    for (const field of WITHOUT_STATISTICS)
      if (options.fields.includes(field)) builder = builder.setColumnStatisticsEnabled(field, EnabledStatistics.None);
    const properties = builder.build();
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
          const failure =
            error instanceof ParquetEncodeError
              ? error
              : new ParquetEncodeError("Parquet encoding failed in the writer", error);
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
