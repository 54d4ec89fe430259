// Inside the thread's Durable Object (threads/object/): the thread from creation to deletion, and every save of its record.
import { oversize } from "../../core/json-size.ts";
import { yieldToUrgentWork } from "../../core/yield.ts";
import { log } from "../../observability/log.ts";
import type { JsonBody } from "../runs/json-stream.ts";
import type { RunManager } from "../runs/run-manager.ts";
import type { CreateThreadInput, ThreadPatch, UpdateStateInput } from "../thread-rpc.ts";
import {
  type CheckpointRef,
  fail,
  type Outcome,
  ok,
  THREAD_MISSING,
  type ThreadJson,
  type TtlSetting,
  type TtlStrategy,
} from "../types.ts";
import type { AlarmPlanner } from "./alarm-planner.ts";
import type { ThreadCheckpoints } from "./checkpoints.ts";
import { newThreadRecord, type ThreadRecord, type ThreadRecords, threadJson, ttlExpiry } from "./record.ts";
import type { IndexSync } from "./search-index-sync.ts";
import type { StateReader } from "./state-reader.ts";
import { applySupersteps, updateState } from "./state-updates.ts";

/** How long run-driven index updates wait, so a quick run's start and end make one D1 write. */
const DEFERRED_INDEX_MS = 25;

const now = () => new Date().toISOString();

/** What the lifecycle needs of the thread's Durable Object besides its modules. */
export interface ThreadParts {
  records: ThreadRecords;
  checkpoints: ThreadCheckpoints;
  states: StateReader;
  index: IndexSync;
  alarm: AlarmPlanner;
  runs: Pick<RunManager, "shutdown" | "onAlarm" | "table">;
  /** Empties the Durable Object's storage. */
  deleteAll(): Promise<void>;
  /** The byte bound of the thread's metadata (`MAX_JSON_FIELD_BYTES`, as the deployment's var scales it). */
  metadataLimit: number;
  /** The TTL of threads created without one (langgraph.json `checkpointer.ttl`; see `defaultThreadTtl`). */
  defaultTtl: TtlSetting | null;
}

/**
 * The thread from creation to deletion: create, patch, state updates, prune, TTL expiry on the
 * alarm, and every save (record, then search index, then alarm). Callers hold the thread's lock.
 */
export class ThreadLifecycle {
  constructor(private readonly parts: ThreadParts) {}

  async create(input: CreateThreadInput): Promise<Outcome<ThreadJson>> {
    const { records, index } = this.parts;
    const existing = records.read();
    if (existing) {
      return input.ifExists === "do_nothing"
        ? ok(threadJson(existing))
        : fail("conflict", `Thread ${input.threadId} already exists`);
    }
    const metadata = { ...input.metadata };
    if (input.graphId) metadata.graph_id = input.graphId;
    const tooLarge = oversize(["metadata"], metadata, this.parts.metadataLimit);
    if (tooLarge) return fail("invalid", tooLarge);
    const at = now();
    const record = newThreadRecord(
      { threadId: input.threadId, workspaceId: input.workspaceId, metadata, ttl: input.ttl },
      at,
      this.parts.defaultTtl,
    );
    if (input.supersteps?.length) {
      const applied = await applySupersteps(this.parts.checkpoints, record, input.supersteps);
      if (!applied.ok) {
        await this.wipe();
        return applied;
      }
    }
    records.write(record);
    try {
      await index.insert(record);
    } catch (error) {
      // Without its index row the thread would be invisible to search: undo rather than half-create.
      await this.wipe();
      throw error;
    }
    await this.parts.alarm.plan(record);
    return ok(threadJson(record));
  }

  /** Patches the thread and answers with the whole patched thread as JSON bytes. */
  async patch(input: ThreadPatch): Promise<Outcome<JsonBody>> {
    const record = this.parts.records.read();
    if (!record) return THREAD_MISSING;
    if (input.metadata) record.metadata = { ...record.metadata, ...input.metadata };
    // Measured merged: the row holds the thread's whole metadata.
    const tooLarge = oversize(["metadata"], record.metadata, this.parts.metadataLimit);
    if (tooLarge) return fail("invalid", tooLarge);
    if (input.ttl !== undefined) record.ttl = input.ttl;
    record.updatedAt = now();
    await this.save(record);
    return ok(await this.parts.states.threadBody(record));
  }

  async updateState(input: UpdateStateInput): Promise<Outcome<{ checkpoint: CheckpointRef | null }>> {
    const record = this.parts.records.read();
    if (!record) return THREAD_MISSING;
    const updated = await updateState(this.parts.checkpoints, record, input);
    if (updated.ok) await this.save(record);
    return updated;
  }

  async delete(): Promise<Outcome<true>> {
    const record = this.parts.records.read();
    if (!record) return THREAD_MISSING;
    await this.parts.runs.shutdown();
    // No index write of this thread may land after the delete below.
    await this.parts.index.drain();
    // Index first: if D1 fails the thread stays whole and the caller can retry.
    await this.parts.index.remove(record);
    await this.wipe();
    return ok(true);
  }

  /** `delete` removes the thread; `keep_latest` keeps only the newest checkpoint of each namespace. */
  async prune(strategy: TtlStrategy): Promise<Outcome<true>> {
    const record = this.parts.records.read();
    if (!record) return THREAD_MISSING;
    if (strategy === "delete") return this.delete();
    this.#keepLatest(record);
    return ok(true);
  }

  /** Removes the thread without stopping its runs: a stateless run's thread, once its runs are over. */
  async discard(): Promise<void> {
    const record = this.parts.records.read();
    if (record) await this.parts.index.remove(record);
    await this.wipe();
  }

  /** The first step of a copy into this (empty) thread: the copied record, index pending. */
  beginImport(record: ThreadRecord): Outcome<true> {
    if (this.parts.records.read()) return fail("conflict", `Thread ${record.threadId} already exists`);
    this.parts.records.write({ ...record, indexDirty: true });
    return ok(true);
  }

  /** The last step of a copy: indexed, and answered without values above 1 MiB (as `get`). */
  async finishImport(): Promise<Outcome<ThreadJson>> {
    const record = this.parts.records.read();
    if (!record) return THREAD_MISSING;
    await this.save(record);
    return ok(threadJson(record));
  }

  /** The alarm: runs a restart left behind, TTL expiry, index retries; then the next alarm. */
  async alarm(): Promise<void> {
    const { records, runs, alarm } = this.parts;
    alarm.fired();
    const record = records.read();
    if (!record) return;
    runs.onAlarm();
    const expiry = ttlExpiry(record);
    if (record.ttl && expiry !== null && expiry <= Date.now() && !runs.table.hasActive()) {
      log.info("thread ttl expired", { thread_id: record.threadId, strategy: record.ttl.strategy });
      if (record.ttl.strategy === "delete") {
        try {
          await this.delete();
        } catch (error) {
          log.warn("thread ttl delete failed; will retry", { thread_id: record.threadId, error: String(error) });
          await alarm.retrySoon();
        }
        return;
      }
      this.#keepLatest(record);
    }
    // Read again: the runs' work above may have ended a run and written the record (a run resumed past
    // its deadline settles at once). Saving the record read before it would put back its old status
    // (a thread left `busy` with no run).
    const latest = records.read();
    if (!latest) return;
    if (latest.indexDirty && !latest.indexError) await this.save(latest);
    else await alarm.plan(latest);
  }

  /**
   * Persists the record, then brings the D1 index up to date (the alarm retries when D1 fails). The
   * record write happens before the first await: a caller may answer its client as soon as this
   * returns its promise, and let the index catch up.
   */
  async save(record: ThreadRecord, options: { deferIndex?: boolean; afterRunSetups?: boolean } = {}): Promise<void> {
    const { records, index, alarm } = this.parts;
    if (record.temporary) {
      records.write(record);
      return alarm.plan(record);
    }
    record.indexDirty = true;
    // A changed record may fit where the last one did not: the index tries again.
    record.indexError = null;
    records.write(record);
    // A save nobody waits for lets run setups in the isolate go first. The wait comes before the sync
    // is queued, so a save a caller does wait for (under the thread's lock) never waits behind it.
    if (options.afterRunSetups) await yieldToUrgentWork();
    await index.sync(options.deferIndex ? DEFERRED_INDEX_MS : 0);
    const latest = records.read();
    if (latest) await alarm.plan(latest);
  }

  /** Plans the alarm for the thread as it now stands. */
  async planAlarm(): Promise<void> {
    const record = this.parts.records.read();
    if (record) await this.parts.alarm.plan(record);
  }

  /** Empties the thread's storage and forgets everything derived from it. */
  async wipe(): Promise<void> {
    await this.parts.alarm.clear();
    // Before and after: no read may see the cached record once the delete has begun.
    this.parts.records.reset();
    await this.parts.deleteAll();
    this.parts.records.reset();
    this.parts.runs.table.reset();
    this.parts.states.clear();
    this.parts.checkpoints.reset();
  }

  #keepLatest(record: ThreadRecord): void {
    this.parts.checkpoints.saver.deleteAllExceptLatest(record.threadId);
    this.parts.states.clear();
  }
}
