// Inside the thread's Durable Object (threads/object/): LangGraph's checkpoint saver over the object's SQLite.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  EXCLUDED_METADATA_KEYS,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from "@langchain/langgraph-checkpoint";
import { chunked } from "../../core/batches.ts";
import { concatBytes } from "../../core/bytes.ts";
import { isPlainObject } from "../../core/json.ts";
import { jsonBytes } from "../../core/json-size.ts";
import { MAX_JSON_FIELD_BYTES } from "../../core/limits.ts";
import { splitBytes } from "../../db/chunks.ts";
import { type SqlStore, type SqlValue, toBytes } from "../../db/sql.ts";
import { insertRows, MAX_BOUND_PARAMS, placeholders } from "../../db/sql-batch.ts";
import {
  type BlobRow,
  CHECKPOINT_COLUMNS,
  type CheckpointRow,
  createCheckpointSchema,
  hasCheckpointSchema,
  type WriteRow,
} from "./checkpoint-tables.ts";
import { SafeJsonPlusSerializer } from "./serde.ts";
import { StateTooDeepError, unloadableDepth } from "./stored-depth.ts";

/**
 * LangGraph checkpoints in SQLite: Durable Object SQLite in the Worker, node:sqlite in tests.
 * The tables are in checkpoint-tables.ts.
 */

/** Checkpoints per list() query. */
const LIST_PAGE = 100;
/** Blob type of a channel that a checkpoint lists in `newVersions` but holds no value for. */
const EMPTY = "empty";

/** A serialized value: its serde type and its bytes. */
type Stored = { type: string; bytes: Uint8Array };

type StoredWrite = Stored & { taskId: string; channel: string };

/** Thread and namespace: the part of every key that is shared by all rows of one checkpoint. */
type Scope = { threadId: string; checkpointNs: string };

/**
 * The run's own metadata (run_id, graph_id, assistant_id, ...) joins each checkpoint's metadata, as
 * the Python savers do; LangGraph.js leaves it out. That makes a run's checkpoints findable (rollback,
 * recovery, history filters). Framework keys stay out.
 */
function runMetadata(config: RunnableConfig): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config.metadata ?? {})) {
    if (key.startsWith("__") || key.startsWith("ls_") || EXCLUDED_METADATA_KEYS.has(key) || value === undefined)
      continue;
    if (typeof value === "function" || typeof value === "symbol") continue;
    extra[key] = value;
  }
  return boundedRunMetadata(extra);
}

/** Run metadata a checkpoint row copies at most (the row, with its checkpoint, must stay under 2 MB). */
export const MAX_CHECKPOINT_RUN_METADATA_BYTES = MAX_JSON_FIELD_BYTES;
/** The keys that find a run's checkpoints again: kept first. */
const RUN_KEYS = ["run_id", "thread_id", "graph_id", "assistant_id"];

/** `extra` whole when it fits MAX_CHECKPOINT_RUN_METADATA_BYTES; else the run's ids, then the other keys that still fit, in order. */
export function boundedRunMetadata(extra: Record<string, unknown>): Record<string, unknown> {
  if (jsonBytes(extra) <= MAX_CHECKPOINT_RUN_METADATA_BYTES) return extra;
  const keys = [...RUN_KEYS.filter((key) => key in extra), ...Object.keys(extra).filter((k) => !RUN_KEYS.includes(k))];
  const kept: Record<string, unknown> = {};
  let bytes = 2;
  for (const key of keys) {
    const size = jsonBytes(key) + jsonBytes(extra[key]) + 2;
    if (bytes + size > MAX_CHECKPOINT_RUN_METADATA_BYTES) continue;
    kept[key] = extra[key];
    bytes += size;
  }
  return kept;
}

/** Told which checkpoint just changed (a re-put or new pending writes), so derived caches can drop it. */
export type CheckpointChangeListener = (checkpointNs: string, checkpointId: string) => void;

export class SqliteCheckpointSaver extends BaseCheckpointSaver {
  readonly #sql: SqlStore;
  readonly #onChange?: CheckpointChangeListener;

  /**
   * Whether the checkpoint tables exist, once checked. Only this saver creates them, except a thread
   * copy's import, after which the thread takes a new saver; a wipe drops them with the saver.
   */
  #schemaKnown: boolean | undefined;

  constructor(sql: SqlStore, serde?: SerializerProtocol, onChange?: CheckpointChangeListener) {
    // Not LangGraph's default serializer: it revives any LangChain-shaped object a client sent (see serde.ts).
    super(serde ?? new SafeJsonPlusSerializer());
    this.#sql = sql;
    this.#onChange = onChange;
  }

  #hasSchema(): boolean {
    this.#schemaKnown ??= hasCheckpointSchema(this.#sql);
    return this.#schemaKnown;
  }

  #ensureSchema(): void {
    if (this.#hasSchema()) return;
    createCheckpointSchema(this.#sql);
    this.#schemaKnown = true;
  }

  /**
   * The ids `list` would yield for the same arguments, without loading any checkpoint: lets callers
   * serve what they already derived from a checkpoint without deserializing it again.
   */
  checkpointIds(config: RunnableConfig, options: CheckpointListOptions = {}): string[] {
    if (!this.#hasSchema()) return [];
    const { where, params } = listConditions(config, options);
    const limit = options.limit === undefined ? -1 : Math.max(0, Math.trunc(Number(options.limit)));
    return this.#sql
      .all<{ checkpoint_id: string }>(
        `SELECT checkpoint_id FROM checkpoints ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY checkpoint_id DESC, checkpoint_ns DESC, thread_id DESC LIMIT ?`,
        ...params,
        limit,
      )
      .map((row) => row.checkpoint_id);
  }

  // ---- reads: they never create the schema, so reading a fresh thread writes nothing ----

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    if (thread_id == null || !this.#hasSchema()) return undefined;
    const rows = checkpoint_id
      ? this.#sql.all<CheckpointRow>(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
          String(thread_id),
          checkpoint_ns,
          String(checkpoint_id),
        )
      : this.#sql.all<CheckpointRow>(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?
           ORDER BY checkpoint_id DESC LIMIT 1`,
          String(thread_id),
          checkpoint_ns,
        );
    const [tuple] = await this.#loadTuples(rows);
    return tuple;
  }

  /**
   * Newest first. Reads pages of LIST_PAGE checkpoints, each loaded only when the consumer gets to
   * it, so a long history is never held in memory at once.
   */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    if (!this.#hasSchema()) return;
    const { where, params } = listConditions(config, options);
    let remaining = options.limit === undefined ? Infinity : Math.max(0, Math.trunc(Number(options.limit)));
    let last: CheckpointRow | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(LIST_PAGE, remaining);
      // Keyset pagination on the sort key; the row value is unique, so no row is skipped or repeated.
      const cursor = last ? ["(checkpoint_id, checkpoint_ns, thread_id) < (?, ?, ?)"] : [];
      const conditions = [...where, ...cursor];
      const rows = this.#sql.all<CheckpointRow>(
        `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ${conditions.length ? `WHERE ${conditions.join(" AND ")}` : ""}
         ORDER BY checkpoint_id DESC, checkpoint_ns DESC, thread_id DESC LIMIT ?`,
        ...params,
        ...(last ? [last.checkpoint_id, last.checkpoint_ns, last.thread_id] : []),
        pageSize,
      );
      yield* await this.#loadTuples(rows);
      if (rows.length < pageSize) return;
      remaining -= rows.length;
      last = rows[rows.length - 1];
    }
  }

  // ---- writes: each is one transaction; values are serialized before it, as serde is async ----

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('put(): config is missing "configurable"');
    const { thread_id, checkpoint_ns = "", checkpoint_id: parentId } = config.configurable;
    if (thread_id == null) throw new Error("put(): config.configurable is missing thread_id");
    const threadId = String(thread_id);
    const { channel_values: values, ...withoutValues } = checkpoint;

    const [type, bytes] = await this.serde.dumpsTyped(withoutValues);
    const metadataJson = this.#dumpMetadata({ ...runMetadata(config), ...metadata });
    const blobRows: SqlValue[][] = [];
    for (const [channel, version] of Object.entries(newVersions)) {
      const stored: Stored = Object.hasOwn(values, channel)
        ? await this.#dump(values[channel], `The value of channel "${channel}"`)
        : { type: EMPTY, bytes: new Uint8Array() };
      splitBytes(stored.bytes).forEach((chunk, index) => {
        const value = stored.type === EMPTY ? null : chunk;
        blobRows.push([threadId, checkpoint_ns, channel, String(version), index, stored.type, value]);
      });
    }
    // Blob keys as text: lets deleteAllExceptLatest() find the blobs still in use without deserializing.
    const versions = JSON.stringify(
      Object.fromEntries(
        Object.entries(checkpoint.channel_versions).map(([channel, version]) => [channel, String(version)]),
      ),
    );

    this.#write(() => {
      // Same (channel, version) means same value (see getNextVersion), so an existing blob is kept.
      insertRows(
        this.#sql,
        "INSERT OR IGNORE",
        "checkpoint_blobs",
        ["thread_id", "checkpoint_ns", "channel", "version", "chunk", "type", "value"],
        blobRows,
      );
      this.#sql.run(
        `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           channel_versions, metadata, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
           type = excluded.type, checkpoint = excluded.checkpoint,
           channel_versions = excluded.channel_versions, metadata = excluded.metadata`,
        threadId,
        checkpoint_ns,
        checkpoint.id,
        parentId ? String(parentId) : null,
        type,
        bytes,
        versions,
        metadataJson,
        isoTimestamp(checkpoint.ts),
      );
    });
    this.#onChange?.(checkpoint_ns, checkpoint.id);
    return { configurable: { thread_id: threadId, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    if (thread_id == null) throw new Error("putWrites(): config.configurable is missing thread_id");
    if (!checkpoint_id) throw new Error("putWrites(): config.configurable is missing checkpoint_id");
    if (writes.length === 0) return;

    // Special channels (errors, interrupts, resume values) replace an earlier write of the same task;
    // regular writes never overwrite one, so a retried task cannot clobber what was saved first.
    const replace = writes.every(([channel]) => specialIndex(channel) !== undefined);
    const byIdx = new Map<number, StoredWrite>();
    for (const [position, [channel, value]] of writes.entries()) {
      const idx = specialIndex(channel) ?? position;
      if (!replace && byIdx.has(idx)) continue;
      byIdx.set(idx, { taskId, channel, ...(await this.#dump(value, `A write to channel "${channel}"`)) });
    }

    const key = [String(thread_id), checkpoint_ns, String(checkpoint_id), taskId];
    this.#write(() => {
      // A write spans several rows when chunked, so "replace" and "ignore" are decided per idx, not per row.
      const idxs = [...byIdx.keys()];
      for (const batch of chunked(idxs, MAX_BOUND_PARAMS - key.length)) {
        const match = `thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx IN (${placeholders(batch.length)})`;
        if (replace) {
          this.#sql.run(`DELETE FROM checkpoint_writes WHERE ${match}`, ...key, ...batch);
        } else {
          for (const { idx } of this.#sql.all<{ idx: number }>(
            `SELECT DISTINCT idx FROM checkpoint_writes WHERE ${match}`,
            ...key,
            ...batch,
          )) {
            byIdx.delete(idx);
          }
        }
      }
      const rows: SqlValue[][] = [];
      for (const [idx, write] of byIdx) {
        splitBytes(write.bytes).forEach((chunk, index) =>
          rows.push([...key, idx, index, write.channel, write.type, chunk]),
        );
      }
      insertRows(
        this.#sql,
        "INSERT",
        "checkpoint_writes",
        ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "chunk", "channel", "type", "value"],
        rows,
      );
    });
    this.#onChange?.(checkpoint_ns, String(checkpoint_id));
  }

  async deleteThread(threadId: string): Promise<void> {
    if (!this.#hasSchema()) return;
    this.#sql.transaction(() => {
      for (const table of ["checkpoint_writes", "checkpoint_blobs", "checkpoints"]) {
        this.#sql.run(`DELETE FROM ${table} WHERE thread_id = ?`, threadId);
      }
    });
  }

  /**
   * Keeps only the newest checkpoint of each namespace of the thread, with its blobs and pending
   * writes, and deletes everything else (TTL `keep_latest`, pruning). Synchronous and atomic.
   * Returns the number of checkpoints deleted.
   */
  deleteAllExceptLatest(threadId: string): number {
    return this.#deleteWhere(
      threadId,
      `checkpoint_id < (SELECT MAX(latest.checkpoint_id) FROM checkpoints AS latest
        WHERE latest.thread_id = checkpoints.thread_id AND latest.checkpoint_ns = checkpoints.checkpoint_ns)`,
    );
  }

  /**
   * Deletes every checkpoint a run wrote (its metadata names the run, see `runMetadata`), in every
   * namespace, with writes and blobs no longer used: a rolled-back run leaves no trace. Returns how
   * many checkpoints went.
   */
  deleteRunCheckpoints(threadId: string, runId: string): number {
    return this.#deleteWhere(threadId, "json_extract(metadata, '$.run_id') = ?", runId);
  }

  /** Deletes the thread's checkpoints matching `condition`, then the writes and blobs left unused. */
  #deleteWhere(threadId: string, condition: string, ...params: SqlValue[]): number {
    if (!this.#hasSchema()) return 0;
    const match = `thread_id = ? AND ${condition}`;
    return this.#sql.transaction(() => {
      const [counted] = this.#sql.all<{ n: number }>(
        `SELECT COUNT(*) AS n FROM checkpoints WHERE ${match}`,
        threadId,
        ...params,
      );
      this.#sql.run(`DELETE FROM checkpoints WHERE ${match}`, threadId, ...params);
      this.#sql.run(
        `DELETE FROM checkpoint_writes WHERE thread_id = ? AND NOT EXISTS (
          SELECT 1 FROM checkpoints AS c WHERE c.thread_id = checkpoint_writes.thread_id
            AND c.checkpoint_ns = checkpoint_writes.checkpoint_ns AND c.checkpoint_id = checkpoint_writes.checkpoint_id)`,
        threadId,
      );
      this.#sql.run(
        `DELETE FROM checkpoint_blobs WHERE thread_id = ? AND NOT EXISTS (
          SELECT 1 FROM checkpoints AS c, json_each(c.channel_versions) AS v
          WHERE c.thread_id = checkpoint_blobs.thread_id AND c.checkpoint_ns = checkpoint_blobs.checkpoint_ns
            AND v.key = checkpoint_blobs.channel AND v.value = checkpoint_blobs.version)`,
        threadId,
      );
      return counted?.n ?? 0;
    });
  }

  /** Number of checkpoints of the thread: in every namespace, or in `checkpointNs` only. */
  checkpointCount(threadId: string, checkpointNs?: string): number {
    if (!this.#hasSchema()) return 0;
    const [row] =
      checkpointNs === undefined
        ? this.#sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ?", threadId)
        : this.#sql.all<{ n: number }>(
            "SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
            threadId,
            checkpointNs,
          );
    return row?.n ?? 0;
  }

  /**
   * `floor(current) + 1` plus a random fraction, instead of the default `current + 1`. Blobs are keyed
   * by (channel, version): a fork (a state update or a run from an older checkpoint) would otherwise
   * give a channel the same version its sibling branch already stored with another value, and one
   * branch would read the other's. Still a number, so LangGraph's version comparisons are unchanged.
   */
  override getNextVersion(current: number | undefined): number {
    const base = current === undefined ? 0 : Math.floor(Number(current));
    return base + 1 + Math.random();
  }

  // ---- internals ----

  /** Runs `fn` in one transaction, creating the schema first if this is the first write. */
  #write(fn: () => void): void {
    const known = this.#schemaKnown;
    try {
      this.#sql.transaction(() => {
        this.#ensureSchema();
        fn();
      });
    } catch (error) {
      // A rolled-back transaction takes the tables it created with it.
      this.#schemaKnown = known;
      throw error;
    }
  }

  /**
   * Serializes a value to store. A value LangChain could not deserialize again (a message nested too
   * deep) is refused before anything is written: a stored one would read back as a plain object, no
   * longer a message (see serde.ts).
   */
  async #dump(value: unknown, where: string): Promise<Stored> {
    const [type, raw] = await this.serde.dumpsTyped(value);
    const bytes = raw instanceof Uint8Array ? raw : new Uint8Array(raw);
    if (type === "json") {
      const depth = unloadableDepth(bytes);
      if (depth !== undefined) throw new StateTooDeepError(where, depth);
    }
    return { type, bytes };
  }

  /**
   * Metadata is stored as plain JSON text, so that list() can filter it with SQLite's JSON functions,
   * and read back as plain JSON: it holds the run's and the thread's metadata, which are the client's
   * data (a LangChain-shaped object in it is no LangChain object), never a LangChain object.
   */
  #dumpMetadata(metadata: CheckpointMetadata): string {
    return JSON.stringify(metadata);
  }

  /**
   * Turns checkpoint rows into tuples. Blobs and writes are read before the first await, so the rows
   * and their values are one consistent view even if a write lands meanwhile. Each blob is
   * deserialized once per call: tuples from one call may share value objects.
   */
  async #loadTuples(rows: CheckpointRow[]): Promise<CheckpointTuple[]> {
    if (rows.length === 0) return [];
    const versionsByRow = rows.map((row) => JSON.parse(row.channel_versions) as Record<string, string>);
    const blobs = this.#readBlobs(rows, versionsByRow);
    const writes = this.#readWrites(rows);

    const values = new Map<string, Promise<unknown>>();
    const value = (key: string, stored: Stored) =>
      getOrCreate(values, key, () => this.serde.loadsTyped(stored.type, stored.bytes));
    const tuples = await Promise.all(
      rows.map(async (row, i): Promise<CheckpointTuple> => {
        const scope = { threadId: row.thread_id, checkpointNs: row.checkpoint_ns };
        const channelValues: Record<string, unknown> = {};
        for (const [channel, version] of Object.entries(versionsByRow[i])) {
          const key = blobKey(scope, channel, version);
          const stored = blobs.get(key);
          if (stored && stored.type !== EMPTY) channelValues[channel] = await value(key, stored);
        }
        const checkpoint: Checkpoint = {
          ...((await this.serde.loadsTyped(row.type, toBytes(row.checkpoint))) as Omit<Checkpoint, "channel_values">),
          channel_values: channelValues,
        };
        const pendingWrites = await Promise.all(
          (writes.get(writesKey(scope, row.checkpoint_id)) ?? []).map(
            async (write): Promise<CheckpointPendingWrite> => [
              write.taskId,
              write.channel,
              await this.serde.loadsTyped(write.type, write.bytes),
            ],
          ),
        );
        return {
          config: {
            configurable: {
              thread_id: row.thread_id,
              checkpoint_ns: row.checkpoint_ns,
              checkpoint_id: row.checkpoint_id,
            },
          },
          checkpoint,
          metadata: JSON.parse(row.metadata) as CheckpointMetadata,
          parentConfig: row.parent_checkpoint_id
            ? {
                configurable: {
                  thread_id: row.thread_id,
                  checkpoint_ns: row.checkpoint_ns,
                  checkpoint_id: row.parent_checkpoint_id,
                },
              }
            : undefined,
          pendingWrites,
        };
      }),
    );
    await this.#migratePendingSends(tuples);
    return tuples;
  }

  /** The (channel, version) blobs the rows reference, each fetched once, keyed by blobKey(). */
  #readBlobs(rows: CheckpointRow[], versionsByRow: Record<string, string>[]): Map<string, Stored> {
    const wanted = new Map<string, { scope: Scope; pairs: Map<string, [string, string]> }>();
    rows.forEach((row, i) => {
      const scope = { threadId: row.thread_id, checkpointNs: row.checkpoint_ns };
      const group = getOrCreate(wanted, scopeKey(scope), () => ({ scope, pairs: new Map() }));
      for (const [channel, version] of Object.entries(versionsByRow[i])) {
        group.pairs.set(blobKey(scope, channel, version), [channel, version]);
      }
    });
    const blobs = new Map<string, { type: string; parts: Uint8Array[] }>();
    for (const { scope, pairs } of wanted.values()) {
      for (const batch of chunked([...pairs.values()], Math.floor((MAX_BOUND_PARAMS - 2) / 2))) {
        const found = this.#sql.all<BlobRow>(
          `SELECT channel, version, chunk, type, value FROM checkpoint_blobs
           WHERE thread_id = ? AND checkpoint_ns = ? AND (channel, version) IN (VALUES ${batch.map(() => "(?, ?)").join(", ")})
           ORDER BY channel, version, chunk`,
          scope.threadId,
          scope.checkpointNs,
          ...batch.flat(),
        );
        for (const row of found) {
          getOrCreate(blobs, blobKey(scope, row.channel, row.version), () => ({
            type: row.type,
            parts: [],
          })).parts.push(bytesOf(row.value));
        }
      }
    }
    return new Map([...blobs].map(([key, { type, parts }]) => [key, { type, bytes: concatBytes(parts) }]));
  }

  /** Pending writes of the rows' checkpoints (optionally of one channel), keyed by writesKey(), in task and index order. */
  #readWrites(
    rows: { thread_id: string; checkpoint_ns: string; checkpoint_id: string }[],
    channel?: string,
  ): Map<string, StoredWrite[]> {
    const wanted = new Map<string, { scope: Scope; ids: Set<string> }>();
    for (const row of rows) {
      const scope = { threadId: row.thread_id, checkpointNs: row.checkpoint_ns };
      getOrCreate(wanted, scopeKey(scope), () => ({ scope, ids: new Set() })).ids.add(row.checkpoint_id);
    }
    const writes = new Map<string, (Omit<StoredWrite, "bytes"> & { parts: Uint8Array[] })[]>();
    const fixed = channel === undefined ? 2 : 3;
    for (const { scope, ids } of wanted.values()) {
      for (const batch of chunked([...ids], MAX_BOUND_PARAMS - fixed)) {
        const found = this.#sql.all<WriteRow>(
          `SELECT checkpoint_id, task_id, idx, channel, type, value FROM checkpoint_writes
           WHERE thread_id = ? AND checkpoint_ns = ? ${channel === undefined ? "" : "AND channel = ?"}
             AND checkpoint_id IN (${placeholders(batch.length)})
           ORDER BY checkpoint_id, task_id, idx, chunk`,
          scope.threadId,
          scope.checkpointNs,
          ...(channel === undefined ? [] : [channel]),
          ...batch,
        );
        let previous: WriteRow | undefined;
        for (const row of found) {
          const list = getOrCreate(writes, writesKey(scope, row.checkpoint_id), () => []);
          const sameWrite =
            previous?.checkpoint_id === row.checkpoint_id &&
            previous.task_id === row.task_id &&
            previous.idx === row.idx;
          if (!sameWrite) list.push({ taskId: row.task_id, channel: row.channel, type: row.type, parts: [] });
          list[list.length - 1].parts.push(bytesOf(row.value));
          previous = row;
        }
      }
    }
    return new Map(
      [...writes].map(([key, list]) => [
        key,
        list.map(({ parts, ...write }) => ({ ...write, bytes: concatBytes(parts) })),
      ]),
    );
  }

  /**
   * Checkpoints older than format v4 kept `Send`s of the previous step in the parent's TASKS writes;
   * v4 holds them as the TASKS channel. Upgrades such tuples on read, as the reference savers do.
   */
  async #migratePendingSends(tuples: CheckpointTuple[]): Promise<void> {
    const legacy = tuples.filter((tuple) => tuple.checkpoint.v < 4 && tuple.parentConfig);
    if (legacy.length === 0) return;
    const parents = legacy.map((tuple) => {
      const { thread_id, checkpoint_ns, checkpoint_id } = tuple.parentConfig!.configurable!;
      return {
        thread_id: String(thread_id),
        checkpoint_ns: String(checkpoint_ns),
        checkpoint_id: String(checkpoint_id),
      };
    });
    const sends = this.#readWrites(parents, TASKS);
    await Promise.all(
      legacy.map(async (tuple, i) => {
        const parent = parents[i];
        const found = sends.get(
          writesKey({ threadId: parent.thread_id, checkpointNs: parent.checkpoint_ns }, parent.checkpoint_id),
        );
        if (!found) return;
        const { checkpoint } = tuple;
        checkpoint.channel_values[TASKS] = await Promise.all(
          found.map((write) => this.serde.loadsTyped(write.type, write.bytes)),
        );
        const versions = Object.values(checkpoint.channel_versions);
        checkpoint.channel_versions[TASKS] =
          versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
      }),
    );
  }
}

// ---- helpers ----

function specialIndex(channel: string): number | undefined {
  // Own properties only: a channel named "constructor" is an ordinary channel.
  return Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : undefined;
}

function scopeKey(scope: Scope): string {
  return JSON.stringify([scope.threadId, scope.checkpointNs]);
}

function blobKey(scope: Scope, channel: string, version: string): string {
  return JSON.stringify([scope.threadId, scope.checkpointNs, channel, version]);
}

function writesKey(scope: Scope, checkpointId: string): string {
  return JSON.stringify([scope.threadId, scope.checkpointNs, checkpointId]);
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** A BLOB column; NULL (an emptied channel) reads as no bytes. */
function bytesOf(value: Uint8Array | ArrayBuffer | null): Uint8Array {
  return value === null ? new Uint8Array() : toBytes(value);
}

function isoTimestamp(ts: string | undefined): string {
  const parsed = ts ? new Date(ts) : undefined;
  return parsed && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : new Date().toISOString();
}

/** WHERE conditions of list(): the config's thread, namespace and id, `before`, and the metadata filter. */
function listConditions(
  config: RunnableConfig,
  options: CheckpointListOptions,
): { where: string[]; params: SqlValue[] } {
  const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
  const before = options.before?.configurable?.checkpoint_id;
  const conditions: Condition[] = [];
  if (thread_id != null) conditions.push({ sql: "thread_id = ?", params: [String(thread_id)] });
  // An empty namespace is the root namespace, not "any namespace".
  if (checkpoint_ns != null) conditions.push({ sql: "checkpoint_ns = ?", params: [String(checkpoint_ns)] });
  if (checkpoint_id) conditions.push({ sql: "checkpoint_id = ?", params: [String(checkpoint_id)] });
  if (before) conditions.push({ sql: "checkpoint_id < ?", params: [String(before)] });
  conditions.push(...metadataConditions(options.filter ?? {}, "$"));
  const params = conditions.flatMap((c) => c.params);
  // Leaves room for the page cursor and LIMIT.
  if (params.length > MAX_BOUND_PARAMS - 4) throw new RangeError("list(): the metadata filter has too many keys");
  return { where: conditions.map((c) => c.sql), params };
}

type Condition = { sql: string; params: SqlValue[] };

/**
 * SQL conditions for a list() metadata filter. Nested objects match by containment, as the Postgres
 * saver's `metadata @> filter` does: `{a: {b: 1}}` matches `{a: {b: 1, c: 2}}`. Scalars and arrays
 * must be equal; they are compared as canonical JSON, so `1`, `"1"` and `true` stay distinct.
 */
function metadataConditions(filter: Record<string, unknown>, path: string): Condition[] {
  const conditions: Condition[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    // SQLite JSON paths cannot escape a double quote inside a quoted key.
    if (key.includes('"')) throw new RangeError(`list(): metadata filter keys cannot contain '"' (${key})`);
    const keyPath = `${path}."${key}"`;
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      conditions.push(...metadataConditions(value, keyPath));
    } else if (isPlainObject(value)) {
      conditions.push({ sql: "json_type(metadata, ?) = 'object'", params: [keyPath] });
    } else {
      conditions.push({ sql: "metadata -> ? = json(?)", params: [keyPath, JSON.stringify(value)] });
    }
  }
  return conditions;
}
