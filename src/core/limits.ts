/**
 * Size limits on client input, in one place so the "Limits" table (docs/api-limits.md#limits) and the schemas agree.
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

/**
 * The trace filter language (`filter`, `trace_filter`, `tree_filter` of `/runs/query`, `/runs/stats`,
 * `/api/v2/runs/query` and bulk exports). One check (src/tracing/filter/query-filters.ts) applies them,
 * for the query routes and `/runs/query/validate` alike; past one a query answers 400.
 */
/** Values one `in(attribute, [...])` lists: bound as one JSON parameter, read with json_each. */
export const MAX_FILTER_IN_VALUES = 1_000;
/** Conditions (comparisons, has, exists, search) of a query's filters together: keeps the statement far below SQLite's 100 KB. */
export const MAX_FILTER_CONDITIONS = 500;
/** Bound values of a query's filters together: SQLite binds at most 100 per statement, the query's own conditions use the rest. */
export const MAX_FILTER_PARAMS = 80;
/** SQL text the filters of one query compile to, in bytes: SQLite refuses statements over 100 KB. */
export const MAX_FILTER_SQL_BYTES = 64 * 1024;
/**
 * Depth one filter may compile to, in the units of `compiledDepth` (src/tracing/filter/compile.ts:
 * not() is 1, a condition 10 to 25): SQLite refuses expression trees deeper than 100, and counts a
 * trace_filter's or tree_filter's subquery twice. and()/or() compile into balanced trees, so a wide
 * filter is shallow; about 25 to 40 levels of not() are left.
 */
export const MAX_FILTER_SQL_DEPTH = 50;

/**
 * Ids in one list of a query (`session` of `/runs/query` and `/runs/stats`, `project_ids` of
 * `/api/v2/runs/query`, `id` of `GET /api/v1/sessions`): bound as one JSON parameter (D1 binds at
 * most 100), capped so the list stays a small value. 422 above it.
 */
export const MAX_ID_LIST = 1_000;

/**
 * Run JSON one `/runs/query` page holds, in characters (the Worker's total, and what one trace shard
 * answers per call at most): a page stops at this size, with a cursor, whatever its `limit`. A
 * shard's answer is one RPC value, which Cloudflare caps at 32 MiB; a character is at most two bytes
 * there. The `QUERY_PAGE_BYTES` var may lower it (tests do), never raise it.
 */
export const MAX_QUERY_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Trace shard calls (Durable Object subrequests) one `/runs/query` or `/runs/stats` request makes
 * at most. Workers limits: 1,000 subrequests per invocation on the Paid plan, 50 on Free (the
 * `WORKERS_PLAN` var, "paid" or "free", see `onFreePlan`); the rest is left to D1 lookups and the request's own
 * work. A query past it returns the runs found so far with a cursor; stats answer 422.
 */
export const SHARD_CALLS_PER_REQUEST = { paid: 900, free: 40 } as const;

/**
 * Points of the quantile sketch each trace shard answers `/runs/stats` with, per value list
 * (latencies, first-token latencies, costs, tokens ×3): percentiles are exact while a shard matches
 * at most this many values, within about 1% of rank beyond. Bounds the RPC and the Worker's memory
 * (128 MB per isolate) whatever the number of runs.
 */
export const STATS_SKETCH_POINTS = 1024;
/** Points the Worker keeps per value list while merging shards' sketches (see STATS_SKETCH_POINTS). */
export const STATS_MERGED_POINTS = 4096;

/** A store item's key. */
export const MAX_STORE_KEY_LENGTH = 1024;

/**
 * The whole request URL as the Worker sees it (scheme, host, path and query), in bytes of its
 * percent-encoded form. Cloudflare's edge refuses URLs over 16 KB before the Worker runs.
 */
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
 * A trace shard's SQLite size (`databaseSize`) past which the next generation of its project-day
 * opens (see tracing/splits.ts): new traces go to twice as many shards from a short margin on.
 * Cloudflare caps a Durable Object at 10 GB; a split at 2 GB leaves the margin and the traces still
 * running in the shard room to land. The `TRACE_SHARD_SPLIT_BYTES` var may lower it (tests do).
 */
export const TRACE_SHARD_SPLIT_BYTES = 2 * 1024 ** 3;

/**
 * A trace shard's size past which it takes no new runs or attachments (503 per run, the detail
 * naming the shard and the cap), only patches of the runs it holds, so it never meets the 10 GB cap
 * of a Durable Object (where every write would fail). Only shards that cannot split reach it: a
 * backfill of a past day, or traces that keep running long after their generation closed. The
 * `TRACE_SHARD_CAP_BYTES` var may lower it (tests do), never raise it.
 */
export const TRACE_SHARD_CAP_BYTES = 8 * 1024 ** 3;

/**
 * How long an isolate trusts its copy of a project-day's generations. A new generation starts
 * `TRACE_GENERATION_MARGIN_MS` after it is opened, longer than this plus clock skew, so every
 * isolate knows it before any trace can fall in it and placement stays deterministic.
 */
export const TRACE_DIRECTORY_CACHE_MS = 10_000;
export const TRACE_GENERATION_MARGIN_MS = 30_000;

/**
 * Ingest calls one trace shard takes in a second past which its project-day also opens the next
 * generation, however small the shard: Cloudflare puts a Durable Object's soft limit near 1,000
 * requests/s, and an ingest call writes many rows, so a busy project-day spreads before it nears it.
 * The `TRACE_SHARD_SPLIT_CALLS` var may lower it (tests do).
 */
export const TRACE_SHARD_SPLIT_CALLS_PER_SECOND = 250;

/** The vars that may lower the trace shard bounds (tests set them small). */
export type TraceShardVars = {
  TRACE_SHARD_SPLIT_BYTES?: string | number;
  TRACE_SHARD_CAP_BYTES?: string | number;
  TRACE_SHARD_SPLIT_CALLS?: string | number;
};

/** The split size, cap and split call rate of trace shards in force: the defaults, or lower configured values. */
export function traceShardBounds(env: TraceShardVars): { splitBytes: number; capBytes: number; splitCalls: number } {
  const lowered = (value: string | number | undefined, fallback: number) => {
    const configured = value === undefined || value === "" ? Number.NaN : Number(value);
    return Number.isFinite(configured) && configured >= 0 ? Math.min(configured, fallback) : fallback;
  };
  return {
    splitBytes: lowered(env.TRACE_SHARD_SPLIT_BYTES, TRACE_SHARD_SPLIT_BYTES),
    capBytes: lowered(env.TRACE_SHARD_CAP_BYTES, TRACE_SHARD_CAP_BYTES),
    splitCalls: lowered(env.TRACE_SHARD_SPLIT_CALLS, TRACE_SHARD_SPLIT_CALLS_PER_SECOND),
  };
}

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

/**
 * A run's wall-clock limit unless the `BG_JOB_TIMEOUT_SECS` var sets another (LangGraph Platform's
 * background-run timeout, same name and default). A run over it is aborted and ends as `timeout`:
 * a graph that never finishes would keep its thread busy, and every run queued behind it waiting,
 * for ever (a Durable Object's wall time is unlimited while it has work).
 */
export const DEFAULT_RUN_TIMEOUT_SECONDS = 3600;

/** The configured `BG_JOB_TIMEOUT_SECS` in milliseconds (a positive number of seconds), or one hour. */
export function runTimeoutMs(env: { BG_JOB_TIMEOUT_SECS?: string | number }): number {
  const configured = Number(env.BG_JOB_TIMEOUT_SECS);
  const seconds = Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_RUN_TIMEOUT_SECONDS;
  return Math.round(seconds * 1000);
}

/**
 * Durable Object calls one invocation makes in a fan-out over threads (cancelling runs by status,
 * pruning, deleting an assistant's threads) before the rest continues on the work queue, one
 * bounded chunk per message. Cloudflare allows 1,000 subrequests per invocation (50 on the Free
 * plan); the budget leaves room for the invocation's other calls.
 */
export const SUBREQUEST_BUDGET = 500;
/** The same budget under the Free plan's 50 subrequests (see `onFreePlan`). */
export const FREE_PLAN_SUBREQUEST_BUDGET = 25;

/** The vars that name the Workers plan: `WORKERS_PLAN` in a deployment, `LIMITS_GUARD` locally. */
export type PlanVars = { WORKERS_PLAN?: string; LIMITS_GUARD?: string };

/**
 * Whether the per-invocation budgets follow the Free plan (50 subrequests and D1 queries instead of
 * 1,000): a deployment says so with `WORKERS_PLAN = "free"`, and the local limits guard holding the
 * Worker to the Free plan (`LIMITS_GUARD = "free"`) implies it, so the budgets and the guard agree.
 */
export function onFreePlan(env: PlanVars): boolean {
  return env.WORKERS_PLAN === "free" || env.LIMITS_GUARD === "free";
}

/**
 * The fan-out budget in force: the Free plan's on the Free plan, else the paid one; the
 * `SUBREQUEST_BUDGET` var may lower it, never raise it.
 */
export function subrequestBudget(env: PlanVars & { SUBREQUEST_BUDGET?: string | number }): number {
  const plan = onFreePlan(env) ? FREE_PLAN_SUBREQUEST_BUDGET : SUBREQUEST_BUDGET;
  const configured = Number(env.SUBREQUEST_BUDGET);
  return Number.isInteger(configured) && configured > 0 ? Math.min(configured, plan) : plan;
}

/**
 * Subrequests one cron firing makes: its assistant's D1 read and its thread's Durable Object call.
 * A partition's alarm fires at most `subrequestBudget(env) / SUBREQUESTS_PER_CRON_FIRING` crons per
 * run (250 on the Paid plan, 12 on Free), and runs again at once while more are due, so a busy minute
 * never passes the 1,000 (50) subrequests of an invocation; the budget's other half covers the run's
 * plan read and the isolate's first look at the workspace's assistants.
 */
export const SUBREQUESTS_PER_CRON_FIRING = 2;

/** Crons one alarm run of a workspace's crons partition fires at most (see SUBREQUESTS_PER_CRON_FIRING). */
export function cronFiringsPerAlarm(env: PlanVars & { SUBREQUEST_BUDGET?: string | number }): number {
  return Math.max(1, Math.floor(subrequestBudget(env) / SUBREQUESTS_PER_CRON_FIRING));
}

/**
 * Expired store items one alarm run of a store partition deletes at most, in one statement (each is
 * about two rows written, the item and its expiry index entry). The object serves nothing else while
 * SQLite runs it, so the sweep goes in short steps: past this many it runs again at once.
 */
export const STORE_SWEEP_PER_ALARM = 1_000;

/**
 * Texts per call to an embedding provider. A put or a search embeds its texts in calls of at most this
 * many (never one call per item), so a request's calls stay far under the 1,000 subrequests of an
 * invocation (50 on Free); Workers AI's text embedding models take at most 100 texts per call.
 */
export const EMBED_BATCH_TEXTS = 96;

/**
 * One call to an embedding provider (an OpenAI-compatible endpoint, Workers AI, the deployment's own
 * function) gets at most this long, in milliseconds; past it the put or search fails with a 503 naming
 * the provider. Workers put no wall-clock limit on a request whose client waits, nor on a run: without
 * it a hung provider would hold a store write, or a run, forever.
 */
export const EMBED_CALL_TIMEOUT_MS = 30_000;

/**
 * Characters of a provider's own error message (or error body) kept in the detail of a provider
 * failure: enough to say what went wrong, without echoing an upstream's whole HTML error page.
 */
export const EMBED_ERROR_MESSAGE_CHARS = 300;

/**
 * Dimensions of a store embedding at most (text-embedding-3-large has 3,072). A vector is stored as
 * 4 bytes per dimension, 16 KiB here, far under the 2 MB per row of Durable Object SQLite, and a scan of
 * 10,000 such vectors stays well within an isolate's 128 MB.
 */
export const MAX_EMBEDDING_DIMS = 4096;

/**
 * Vectors one store item holds at most: one per text its index paths match (`arr[*]` matches every
 * element). They are written in the put's one RPC, at most 16 KiB each, so 1,000 stay far under the
 * 32 MiB of an RPC; a put past it is refused (422), not half-indexed.
 */
export const MAX_VECTORS_PER_ITEM = 1_000;

/**
 * A store search's `query`, in characters. It is sent to the embedding provider as is (and, without an
 * index, bound as one SQL parameter); embedding models read a few thousand tokens at most, so a longer
 * query is a client's mistake (422) rather than a provider's error.
 */
export const MAX_STORE_QUERY_LENGTH = 10_000;

/**
 * One text to embed, in characters: a field's string, or an object's indented JSON (the reference's
 * text), which grows with nesting so that a value of under a megabyte can make tens of megabytes.
 * Embedding models read about 8,000 tokens (some 32,000 characters) at most; past it a put is a 422
 * naming the path, counted before the text is built.
 */
export const MAX_EMBED_TEXT_CHARS = 32_768;

/** Paths in a put's own `index`: each is walked through the value, and they name the item's vectors. */
export const MAX_INDEX_PATHS = 100;

/**
 * Rows (vectors, and items without one) a semantic store search scores, in the store partition's
 * object, at most. A search reads each row's id (billed per row read) and scores its kept sketch, so
 * time is the bound: 10,000 vectors of 768 dimensions cost about 19 ms of server CPU, so 50,000 about
 * 95 ms, past VECTOR_CACHE_BYTES more, while the object serves nothing else. Past it the scan stops:
 * the search goes to Vectorize when the Worker has a `STORE_VECTORIZE` binding, else it is refused
 * (422) saying what to narrow; never cut silently.
 */
export const MAX_SCAN_VECTORS = 50_000;

/**
 * Bytes of vector sketches (one byte a dimension, workspace/vector-cache.ts) the store partitions'
 * objects of one isolate keep in memory together, of the isolate's 128 MB: 10,000 vectors of 768
 * dimensions take 9 MB. Past it a search scores the vectors left out exactly, from their rows.
 */
export const VECTOR_CACHE_BYTES = 32 * 1024 * 1024;

/** Vectors one Vectorize `upsert` call takes at most (Cloudflare: 1,000 from a Worker); each call is a subrequest. */
export const VECTORIZE_UPSERT_BATCH = 1_000;

/**
 * One call to the store's Vectorize index at most: a hung index must not hold a put, a delete or a
 * search open (a put's or delete's failure there is logged; a search's is a 503).
 */
export const VECTORIZE_CALL_TIMEOUT_MS = 10_000;

/** Ids one Vectorize `deleteByIds` call takes at most (1,000, as an upsert); each call is a subrequest. */
export const VECTORIZE_DELETE_BATCH = 1_000;

/**
 * Vectorize ids one run of a store partition's TTL sweep deletes at most: 40 `deleteByIds` calls,
 * within the 50 subrequests of an invocation on Free (the alarm's own). Not less than
 * MAX_VECTORS_PER_ITEM, so the first expired item always fits; the rest wait for the next run, at once.
 */
export const VECTORIZE_SWEEP_IDS = 40 * VECTORIZE_DELETE_BATCH;

/**
 * Matches one Vectorize query answers at most without values or metadata (100; 20 with them): the
 * candidates a search past MAX_SCAN_VECTORS re-scores exactly, so its pages reach this far.
 */
export const VECTORIZE_MAX_TOP_K = 100;

/**
 * Bytes of a string metadata value a Vectorize metadata index keeps (the first 64): the store's
 * `path` metadata is cut to whole labels within it, so its range filters stay exact or wider.
 */
export const VECTORIZE_INDEXED_BYTES = 64;

/**
 * Thread data (metadata, values, config, interrupts, error) in one page of `threads.search`, in
 * UTF-8 bytes. A page of 1,000 threads of 100 KB states would pass D1's 50 MB result limit and the
 * isolate's 128 MB of memory; past this budget the page ends early (X-Pagination-Next follows it).
 */
export const MAX_THREAD_SEARCH_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Values and interrupts (UTF-8 bytes of their JSON, together) the thread index keeps of a thread:
 * the index is a projection, not a copy of the state, so its rows stay small (metadata and config
 * aside, bounded by MAX_JSON_FIELD_BYTES) and a 10 GB index shard holds millions of threads. A
 * larger state is left out of the index: a `values` filter does not match it, and search reads its
 * values from the thread itself (see THREAD_SEARCH_CALLS).
 */
export const MAX_THREAD_INDEX_STATE_BYTES = 16 * 1024;

/**
 * Index keys (sort key, thread id, size: about 100 bytes each) one index shard answers per call of
 * a thread search: about 0.5 MB, far below a Durable Object RPC's 32 MiB; the Worker holds at most
 * one chunk per shard while merging, whatever the offset.
 */
export const THREAD_SEARCH_KEYS_PER_CALL = 5_000;

/**
 * Calls one thread search makes, under 1,000 subrequests per invocation (50 on the Free plan):
 * `keys`, to index shards while merging (one per shard, then one per further chunk a deep offset
 * passes through: offset + limit up to about (keys - 16) x THREAD_SEARCH_KEYS_PER_CALL always fits,
 * past it 422), and `stateReads`, threads of the page whose state is not in the index and is read
 * from the thread (the page ends before one more). Besides, one call per shard holding a page row.
 */
export const THREAD_SEARCH_CALLS = {
  paid: { keys: 400, stateReads: 32 },
  free: { keys: 24, stateReads: 8 },
} as const;

/**
 * How long traced runs are kept after they are ingested, as LangSmith's retention tiers: a project's
 * `trace_tier` "longlived" keeps them 400 days (extended), any other 14 days (base). A trace shard
 * deletes its whole storage when the retention of the last runs it took is over; run locator entries
 * expire with them. Keeps every per-project object bounded in time as well as in size.
 */
export const BASE_TRACE_RETENTION_DAYS = 14;

/**
 * The longest thread TTL, minutes (a century), from a request's `ttl` or langgraph.json's
 * `checkpointer.ttl.default_ttl`: longer is indistinguishable from none, and its expiry would overflow
 * the timestamps the thread's Durable Object alarm is set from.
 */
export const MAX_TTL_MINUTES = 100 * 365 * 24 * 60;

/**
 * An assistant read for runs is kept per isolate this long (and at most this many), so the lookup
 * before each run does not reach D1, the one database every tenant shares (about 1,000 queries/s).
 * Another isolate runs a just-changed assistant's old version for at most this long.
 */
export const ASSISTANT_CACHE_TTL_MS = 5_000;
export const ASSISTANT_CACHE_ENTRIES = 1_000;
export const EXTENDED_TRACE_RETENTION_DAYS = 400;

const DAY_MS = 86_400_000;

/**
 * When runs of a project of `tier` ingested at `now` expire, in epoch ms: rounded up to a UTC
 * midnight, so a busy shard moves its alarm once a day, not on every write.
 */
export function traceExpiry(tier: string | null | undefined, now = Date.now()): number {
  const days = tier === "longlived" ? EXTENDED_TRACE_RETENTION_DAYS : BASE_TRACE_RETENTION_DAYS;
  return Math.ceil((now + days * DAY_MS) / DAY_MS) * DAY_MS;
}

/**
 * Metrics objects (MetricsDO) the HTTP metrics are spread over: each isolate flushes its counts to
 * one of them, picked at random once per isolate, and `/metrics` reads all of them and sums. A
 * Durable Object takes about 1,000 requests/s and an isolate flushes every 5 s, so one object would
 * stop at about 5,000 active isolates; 32 raise that to about 160,000. `/metrics` makes one call per
 * shard, 33 subrequests with its own flush: within the Free plan's 50 per invocation (1,000 on Paid).
 * Never lower it: counts flushed to a shard past the new number would no longer be read.
 */
export const METRICS_SHARDS = 32;

/**
 * Verified API keys each isolate keeps, so that authenticating does not query D1 on every request:
 * at most `API_KEY_CACHE_ENTRIES` (key and X-Tenant-Id pairs; the least recently used goes first, a
 * few hundred bytes each against the isolate's 128 MB), each for at most `API_KEY_CACHE_TTL_MS` (and
 * never past the key's own expiry). A key revoked in one isolate is refused there at once; the other
 * isolates refuse it once their entry expires, within the TTL (plus a read replica's lag). A failed
 * check is never cached: a key created a moment ago works on its first request.
 */
export const API_KEY_CACHE_TTL_MS = 60_000;
export const API_KEY_CACHE_ENTRIES = 1_000;

/**
 * What one call to a workspace partition answers at most, counted as it reads the rows: a Durable
 * Object RPC carries at most 32 MiB, and the Worker has 128 MB for everything. A query past it fails
 * with `PARTITION_RESULT_TOO_LARGE`, which the domain answers as a 422 naming what to narrow.
 */
export const MAX_PARTITION_RESULT_BYTES = 24 * 1024 * 1024;

/** Messages one `sendBatch` call to a Cloudflare Queue takes at most (Cloudflare caps a batch at 100). */
export const QUEUE_SEND_BATCH = 100;

/**
 * Calls a Worker makes at once when it fans out (to Durable Objects, or run starts): Cloudflare lets
 * an invocation hold six connections open at a time, and queues the rest.
 */
export const WORKER_CONNECTIONS = 6;
