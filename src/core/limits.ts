/**
 * Size limits on client input, in one place so the README's "Limits" table and the schemas agree.
 * Past a limit a request answers 422 naming it (the URL: 414; the body: 413, see `MAX_BODY_BYTES`).
 */

/**
 * Nesting of metadata, filters, config and context. Filters become SQLite JSON paths and nested
 * conditions, and every stored JSON value is walked recursively somewhere (zod, RPC, SQLite).
 */
export const MAX_METADATA_DEPTH = 64;

/**
 * Nesting of graph input, commands and state values. They are checkpointed, and LangChain refuses
 * to deserialize a stored message nested deeper than 50 levels (counting its own wrapper): a deeper
 * input would store a thread whose state could never be read back.
 */
export const MAX_GRAPH_DATA_DEPTH = 48;

/** Nesting of store values and traced run payloads (inputs, outputs, extra, events, serialized). */
export const MAX_DATA_DEPTH = 512;

/** Client-chosen identifiers: graph ids, assistant/cron ids in paths, checkpoint ids, tags, node names. */
export const MAX_ID_LENGTH = 256;

/** Names: assistants, tracing projects and runs, bulk-export destinations. */
export const MAX_NAME_LENGTH = 1024;

/** Free-text descriptions of assistants and tracing projects. */
export const MAX_DESCRIPTION_LENGTH = 10_000;

/** A store namespace: at most this many labels, each at most `MAX_NAMESPACE_LABEL_LENGTH` characters. */
export const MAX_NAMESPACE_LABELS = 32;
export const MAX_NAMESPACE_LABEL_LENGTH = 256;

/** A bulk-export destination's display name (S3-safe characters only). */
export const MAX_DISPLAY_NAME_LENGTH = 255;

/** A bulk-export destination's object-key prefix. */
export const MAX_EXPORT_PREFIX_LENGTH = 2048;

/** A store item's key. */
export const MAX_STORE_KEY_LENGTH = 1024;

/** The whole request URL (path and query), in UTF-8 bytes as sent. */
export const MAX_URL_BYTES = 16 * 1024;

/**
 * Each of a traced run's inputs, outputs, extra, events, error and tags, in UTF-8 bytes of JSON. A
 * Durable Object SQLite row holds at most 2 MB, and a trace shard keeps a run in one row: these six
 * fields (each from its post or any patch) plus flattened copies of inputs, outputs and metadata for
 * filters, nine values of at most 192 KiB, 1.7 MB in all. The `MAX_TRACED_RUN_BYTES` var may lower
 * it, never raise it.
 */
export const MAX_TRACED_RUN_BYTES = 192 * 1024;

/**
 * Bytes of runs (or attachments) in one ingest RPC to a trace shard: a request's or an agent trace's
 * runs for one shard go in as many RPCs as they need. A Durable Object RPC carries at most 32 MiB;
 * 8 MiB keeps each well below it and the receiving isolate's memory low.
 */
export const MAX_SHARD_RPC_BYTES = 8 * 1024 * 1024;

/**
 * One attachment of a traced run. It is stored in chunks, but crosses one Durable Object RPC whole
 * when it is ingested and when it is downloaded, and an RPC carries at most 32 MiB. Only a
 * `MAX_BODY_BYTES` raised above it can let a larger one in.
 */
export const MAX_ATTACHMENT_BYTES = 24 * 1024 * 1024;

/**
 * Tracing projects (distinct `session_id`/`session_name`) one ingest request writes to: each costs D1
 * queries to find or create, and an invocation makes at most 1,000 (50 on the Free plan).
 */
export const MAX_INGEST_PROJECTS = 20;

/**
 * Trace shards (a project's runs of one UTC day) one ingest request writes to: each takes at least one
 * Durable Object RPC, and an invocation makes at most 1,000 subrequests. The SDKs flush at most 100
 * runs at a time, so only a backfill spanning more days meets it.
 */
export const MAX_INGEST_SHARDS = 100;

/**
 * The times a traced run may carry (start_time, end_time, dotted_order, a streamed token's time), in
 * the stored form: from `from` up to, not including, `until`. Bulk export v1 writes times as Parquet
 * TIMESTAMP(NANOS), 64-bit nanoseconds since 1970, which hold 1677-09-21 to 2262-04-11; a time it
 * cannot hold is refused at ingest (422) rather than written as another time.
 */
export const RUN_TIME_RANGE = { from: "1678-01-01T00:00:00.000000Z", until: "2262-01-01T00:00:00.000000Z" } as const;

/**
 * A traced run's token counts (prompt, completion, total, wherever its usage says them): an integer
 * from 0 to this. Counts are summed over whole projects in doubles, exact up to 2^53: a billion
 * tokens per run leaves room for millions of runs.
 */
export const MAX_RUN_TOKENS = 1_000_000_000;

/** A traced run's costs (input, output, total): a number from 0 to this, summed like the tokens. */
export const MAX_RUN_COST = 1_000_000_000;

/** The request body limit unless the `MAX_BODY_BYTES` var sets another. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The configured `MAX_BODY_BYTES` (a Worker var), or 10 MiB. */
export function maxBodyBytes(env: { MAX_BODY_BYTES?: string | number }): number {
  const configured = Number(env.MAX_BODY_BYTES);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_MAX_BODY_BYTES;
}
