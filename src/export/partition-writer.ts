import { backoff } from "../core/retry.ts";
import { type Database, database } from "../db/client.ts";
import type { BulkExportRunRow } from "../db/schema.ts";
import { log } from "../observability/log.ts";
import type { ExportPage } from "../tracing/export-page.ts";
import { parseFilter } from "../tracing/filter/check.ts";
import { compileFilter } from "../tracing/filter/compile.ts";
import { generationsOf } from "../tracing/generations.ts";
import { splitsUpTo } from "../tracing/splits.ts";
import { traceShardName } from "../tracing/trace-shard-do.ts";
import { type ColumnPage, EXPORT_FIELDS, type FormatVersion, shardColumns } from "./columns.ts";
import { destinationErrorMessage, isPermanentDestinationError } from "./destination-errors.ts";
import { destinationTarget } from "./destinations.ts";
import { finishExportIfDone } from "./manifest.ts";
import { encodeParquet, type ParquetCompression, parquetMemoryBytes } from "./parquet.ts";
import { FINISHED } from "./service.ts";
import {
  exportById,
  exportRunById,
  exportStatus,
  failExportRunAndExport,
  recordExportRunFile,
  recordExportRunRetry,
  settleExportRun,
  startExportRun,
} from "./store.ts";
import { uploadStream } from "./upload.ts";

/**
 * The queue consumer of bulk export: writes one export run (one project's UTC day) as Parquet
 * files, reading the day's splits (tracing/splits.ts) one after the other into the same partition. Each file is complete before anything about it is saved; after each file the run's cursor,
 * file list and counts are saved in D1, so a retry or continuation starts after the last saved row
 * and rewrites at most the one file it was writing, under the same deterministic key.
 */

export const EXPORT_RUN_MESSAGE = "export-run";
export type ExportRunMessage = { kind: typeof EXPORT_RUN_MESSAGE; runId: string };

export interface WriterLimits {
  /** Rows per Parquet file. */
  rowsPerFile: number;
  /** A file also ends once its pages reach this much text, so a day of large runs still ends a file (and a message) in time. */
  fileBytes: number;
  /** Rows read from the shard per RPC; a page is one Arrow record batch. */
  pageRows: number;
  /** A shard page stops early at this much text, so large inputs/outputs keep RPCs and memory bounded (and, JSON-escaped, under SQLite's value limit). */
  pageBytes: number;
  /** After this much wall time a message stops at the next file boundary and continues in a new message. */
  budgetMs: number;
  /** Failed attempts after which the run (and its export) is Failed. */
  maxRetries: number;
}

const DEFAULT_LIMITS: WriterLimits = {
  rowsPerFile: 100_000,
  fileBytes: 256 * 1024 * 1024,
  pageRows: 10_000,
  pageBytes: 4 * 1024 * 1024,
  budgetMs: 20_000,
  maxRetries: 5,
};

type WriterEnv = Pick<
  Env,
  | "DB"
  | "TRACE_SHARD"
  | "WORKSPACE"
  | "QUEUE"
  | "EXPORT_ENCRYPTION_KEY"
  | "EXPORT_DEFAULT_ACCESS_KEY_ID"
  | "EXPORT_DEFAULT_SECRET_ACCESS_KEY"
  | "EXPORT_DEFAULT_SESSION_TOKEN"
> &
  Partial<Pick<Env, "EXPORT_ROWS_PER_FILE" | "EXPORT_MAX_RETRIES">>;

export function writerLimits(env: Partial<Pick<Env, "EXPORT_ROWS_PER_FILE" | "EXPORT_MAX_RETRIES">>): WriterLimits {
  const positive = (text: string | undefined, fallback: number) => {
    const value = Number(text);
    return Number.isInteger(value) && value > 0 ? value : fallback;
  };
  return {
    ...DEFAULT_LIMITS,
    rowsPerFile: positive(env.EXPORT_ROWS_PER_FILE, DEFAULT_LIMITS.rowsPerFile),
    maxRetries: positive(env.EXPORT_MAX_RETRIES, DEFAULT_LIMITS.maxRetries),
  };
}

/** The file name of part `index` of an export run: the same on every retry, so a rewrite overwrites. */
export const partFileName = (runId: string, index: number) => `part-${String(index).padStart(5, "0")}-${runId}.parquet`;

/** The queue handler: writes, and on failure records the attempt and schedules the retry itself. */
export async function handleExportRun(
  message: ExportRunMessage,
  env: WriterEnv,
  options: { fetch?: typeof fetch; limits?: Partial<WriterLimits> } = {},
): Promise<void> {
  const db = database(env);
  const limits = { ...writerLimits(env), ...options.limits };
  try {
    const next = await writeExportRun(db, env, message.runId, limits, options.fetch);
    if (next === "continue")
      await env.QUEUE.send({ kind: EXPORT_RUN_MESSAGE, runId: message.runId } satisfies ExportRunMessage);
  } catch (error) {
    await recordFailure(db, env, message.runId, error, limits);
  }
}

/** Writes files until the run is done or the message's budget is spent. */
export async function writeExportRun(
  db: Database,
  env: WriterEnv,
  runId: string,
  limits: WriterLimits,
  fetcher?: typeof fetch,
): Promise<"done" | "continue"> {
  const started = Date.now();
  let run = await exportRunById(db, runId);
  if (!run || FINISHED.has(run.status)) return "done";
  const exported = await exportById(db, run.exportId);
  if (!exported || exported.status === "Cancelled" || exported.status === "TimedOut" || exported.status === "Failed") {
    await settleRun(db, run, exported?.status === "TimedOut" ? "TimedOut" : "Cancelled");
    return "done";
  }
  if (run.status === "Created") {
    run = { ...run, status: "Running", updatedAt: new Date().toISOString() };
    await startExportRun(db, runId, run.updatedAt);
  }

  const { bucket } = await destinationTarget(db, env, run.workspaceId, exported.destinationId, fetcher);
  const fields = exported.exportFields ?? EXPORT_FIELDS;
  // The day's splits as of now: later generations start after the window's end, so none adds rows
  // to it, and the list only grows at its end, so a saved split number keeps naming the same split.
  const generations =
    (await generationsOf(env, run.workspaceId, [{ projectId: run.sessionId, day: run.day }], { fresh: true })).get(
      `${run.sessionId}/${run.day}`,
    ) ?? [];
  const splits = splitsUpTo(run.day, generations, run.endTime).map((split) =>
    env.TRACE_SHARD.getByName(traceShardName(run!.workspaceId, run!.sessionId, split)),
  );
  const filter = exported.filter ? compileFilter(parseFilter(exported.filter)) : undefined;

  for (;;) {
    // A cancel stops the export at the next file boundary.
    const current = await exportStatus(db, exported.id);
    if (current?.status !== "Running") {
      await settleRun(db, run, current?.status === "TimedOut" ? "TimedOut" : "Cancelled");
      return "done";
    }
    const version = exported.formatVersion as FormatVersion;
    const columns = shardColumns(fields.filter((field) => field !== "tenant_id" && field !== "session_id"));
    /** A page of the split the cursor names; at a split's end, `last` names the start of the next one. */
    const page = async (
      cursor: BulkExportRunRow["cursor"],
      limit: number,
    ): Promise<ExportPage & { last: BulkExportRunRow["cursor"] }> => {
      for (let split = cursor?.split ?? 0; split < splits.length; split++) {
        const after = cursor && (cursor.split ?? 0) === split && cursor.start_time ? cursor : undefined;
        const batch = await splits[split].exportPage({
          start: run!.startTime,
          end: run!.endTime,
          filter,
          after: after && { start_time: after.start_time, id: after.id },
          limit,
          maxBytes: limits.pageBytes,
          columns,
          listsAsArrays: version !== "v1",
        });
        const later = split + 1 < splits.length;
        if (!batch.rows && later) continue;
        if (batch.more || !later) return { ...batch, last: batch.last && { ...batch.last, split } };
        return { ...batch, more: true, last: { start_time: "", id: "", split: split + 1 } };
      }
      return { rows: 0, more: false, last: null, columns: {} };
    };
    const first = await page(run.cursor, Math.min(limits.pageRows, limits.rowsPerFile));
    if (!first.rows) {
      await settleRun(db, run, "Completed");
      await finishExportIfDone(db, env, exported.id, limits.maxRetries, fetcher);
      return "done";
    }

    // The file's rows: the first page, then more pages until the file is full or the day runs out.
    let rows = 0;
    let text = 0; // characters of the pages' JSON, near their bytes
    let last: BulkExportRunRow["cursor"] = run.cursor;
    let exhausted = false;
    // The same on every row of a shard: the writer fills them in, the shard need not read them.
    const constants = { tenant_id: { constant: run.workspaceId }, session_id: { constant: run.sessionId } };
    const withConstants = (batch: ExportPage): ColumnPage => {
      rows += batch.rows;
      for (const column of Object.values(batch.columns))
        text += "strings" in column ? column.strings.length : "values" in column ? column.values.length : 0;
      last = batch.last;
      return { rows: batch.rows, columns: { ...batch.columns, ...constants } };
    };
    async function* pages(): AsyncGenerator<ColumnPage> {
      let batch = first;
      for (;;) {
        const current = withConstants(batch);
        exhausted = !batch.more;
        if (exhausted || rows >= limits.rowsPerFile || text >= limits.fileBytes) {
          yield current;
          return;
        }
        // Ask the shard for the next page before encoding this one, so the two overlap.
        const next = page(last, Math.min(limits.pageRows, limits.rowsPerFile - rows));
        next.catch(() => {}); // awaited below; an early failure must not be unhandled meanwhile
        yield current;
        batch = await next;
        if (!batch.rows) return void (exhausted = true);
      }
    }

    const index = run.files.length;
    const key: string = `${run.prefix}/${partFileName(run.id, index)}`;
    const stream = encodeParquet(pages(), { fields, version, compression: exported.compression as ParquetCompression });
    const { bytes } = await uploadStream(bucket, key, stream, { contentType: "application/vnd.apache.parquet" });

    // The encoder's memory is most of what an export holds: logged per file so it can be watched.
    log.info("export file written", { run_id: run.id, key, rows, bytes, wasm_memory_bytes: parquetMemoryBytes() });
    const now = new Date().toISOString();
    run = {
      ...run,
      files: [...run.files, { key, rows, bytes }],
      rowsWritten: run.rowsWritten + rows,
      bytesWritten: run.bytesWritten + bytes,
      cursor: last,
      updatedAt: now,
    };
    // Compare-and-set on the file count: a second delivery of the same message that got here first
    // wins, and this one stops instead of recording the file twice.
    const saved = await recordExportRunFile(db, runId, index, {
      files: run.files,
      rowsWritten: run.rowsWritten,
      bytesWritten: run.bytesWritten,
      cursor: run.cursor,
      updatedAt: now,
    });
    if (!saved) return "done";

    if (exhausted) {
      await settleRun(db, run, "Completed");
      await finishExportIfDone(db, env, exported.id, limits.maxRetries, fetcher);
      return "done";
    }
    if (Date.now() - started > limits.budgetMs) return "continue";
  }
}

async function settleRun(
  db: Database,
  run: BulkExportRunRow,
  status: "Completed" | "Cancelled" | "TimedOut" | "Failed",
): Promise<void> {
  await settleExportRun(db, run.id, status, new Date().toISOString());
}

/**
 * Records a failed attempt in `errors` (retry_0, retry_1, ...). Transient failures are retried
 * with backoff until `maxRetries`; credential and bucket errors fail the run and its export at once.
 */
async function recordFailure(
  db: Database,
  env: WriterEnv,
  runId: string,
  error: unknown,
  limits: WriterLimits,
): Promise<void> {
  const run = await exportRunById(db, runId);
  if (!run || FINISHED.has(run.status)) return;
  const message = destinationErrorMessage(error) ?? (error instanceof Error ? error.message : String(error));
  const attempt = run.retryNumber;
  const errors = { ...run.errors, [`retry_${attempt}`]: message };
  // `maxRetries` retries after the first attempt: attempts 0..maxRetries.
  const exhausted = isPermanentDestinationError(error) || attempt + 1 > limits.maxRetries;
  const now = new Date().toISOString();
  log.warn("export run attempt failed", {
    run_id: runId,
    export_id: run.exportId,
    attempt,
    error: message,
    final: exhausted,
  });
  if (!exhausted) {
    await recordExportRunRetry(db, runId, { retryNumber: attempt + 1, errors, updatedAt: now });
    await env.QUEUE.send({ kind: EXPORT_RUN_MESSAGE, runId } satisfies ExportRunMessage, {
      delaySeconds: backoff(attempt, { base: 5, cap: 300 }),
    });
    return;
  }
  await failExportRunAndExport(
    db,
    run,
    { retryNumber: attempt + 1, errors },
    `export run ${runId} (${run.day}) failed: ${message}`,
    now,
  );
}
