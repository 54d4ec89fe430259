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
 * Row limits. D1 and Durable Object SQLite refuse a row, string or BLOB over 2,000,000 bytes (local
 * workerd does not enforce it), so every stored JSON column has a byte bound (UTF-8 bytes of its JSON)
 * chosen so that a row's columns together stay well under it. Past a bound a request answers 422
 * naming the field, its size and the limit. The `MAX_JSON_FIELD_BYTES` var may lower the bounds
 * below (each scales with it), never raise them.
 */

/**
 * Metadata, config and context, each (assistants and their versions, threads, runs, crons). An
 * assistant row holds three (768 KiB); a thread row its metadata, config and request config (768 KiB)
 * beside at most `MAX_THREAD_ROW_STATE_BYTES` of values and interrupts; merges (a patch's metadata
 * into the stored one, a run's config into the thread's) are measured after merging.
 */
export const MAX_JSON_FIELD_BYTES = 256 * 1024;

/** A store item's value (its row: the value, namespace and key). */
export const MAX_STORE_VALUE_BYTES = 4 * MAX_JSON_FIELD_BYTES;

/** A cron's payload: the run-create fields replayed on each run (input, config, context, metadata...), beside its metadata. */
export const MAX_CRON_PAYLOAD_BYTES = 4 * MAX_JSON_FIELD_BYTES;

/**
 * The thread row's values and interrupts together (the thread's DO row and its D1 index row, beside
 * metadata and config of at most 3 x `MAX_JSON_FIELD_BYTES`). Larger values stay in the chunked
 * checkpoints only; the index row then omits them (not searchable), then the interrupts.
 */
export const MAX_THREAD_ROW_STATE_BYTES = 1024 * 1024;

/** A failed run's error message as the run and thread rows keep it (longer ones are cut, marked `…`). */
export const MAX_ERROR_MESSAGE_LENGTH = 16 * 1024;

/**
 * A search filter (metadata, values, store filter), in UTF-8 bytes of its JSON: it is bound as SQL
 * parameters (each under D1's 2 MB limit) and can only match a value of a bounded field anyway.
 */
export const MAX_FILTER_BYTES = 16 * 1024;

/** The request body limit unless the `MAX_BODY_BYTES` var sets another. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The configured `MAX_BODY_BYTES` (a Worker var), or 10 MiB. */
export function maxBodyBytes(env: { MAX_BODY_BYTES?: string | number }): number {
  const configured = Number(env.MAX_BODY_BYTES);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_MAX_BODY_BYTES;
}
