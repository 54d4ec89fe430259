// Inside the thread's Durable Object (threads/object/): pushing this thread's record to its shard of the search index (../search-index.ts).
import { backoff, sleep } from "../../core/retry.ts";
import { isPermanentWriteError, writeErrorReason } from "../../db/client.ts";
import { log } from "../../observability/log.ts";
import type { WorkspaceBindings } from "../../workspace/database.ts";
import { deleteThreadIndex, upsertThreadIndex } from "../search-index.ts";
import { RETRY_MS } from "./alarm-planner.ts";
import type { ThreadRecord, ThreadRecords } from "./record.ts";

/** The longest wait between retries of an index write that keeps failing. */
export const MAX_RETRY_MS = 5 * 60_000;

/** How long the alarm waits before the next retry after `failures` failed writes in a row: doubling from RETRY_MS, capped. */
export function retryDelay(failures: number): number {
  return backoff(failures - 1, { base: RETRY_MS, cap: MAX_RETRY_MS });
}

/**
 * Pushes the thread record to its shard of the workspace's thread index (one call per write). The record in the Durable Object is the source of
 * truth and carries an `indexDirty` flag until the index has it; the alarm retries what failed, backing off.
 * A write the index refuses for good (see `isPermanentWriteError`) is not retried: the record keeps the
 * reason in `indexError` (the thread stays stale in search) until it changes again.
 */
export class IndexSync {
  #pending: Promise<void> | null = null;
  #active: Promise<void> = Promise.resolve();
  /** Failed writes in a row (kept in memory: an evicted object starts again from RETRY_MS). */
  #failures = 0;

  constructor(
    private readonly records: ThreadRecords,
    private readonly env: WorkspaceBindings,
  ) {}

  /** The first index row of a new thread; a failure is the caller's to handle. */
  insert(record: ThreadRecord): Promise<void> {
    return upsertThreadIndex(this.env, record);
  }

  /** How long until the alarm retries a failed write. */
  retryDelay(): number {
    return retryDelay(this.#failures);
  }

  /**
   * Brings the index up to the current record. A sync that has not started yet is shared by later
   * saves, so a quick run's busy → idle reaches the index as one write; syncs run one at a time, in order.
   */
  sync(delayMs: number): Promise<void> {
    if (this.#pending) return this.#pending;
    const pending = (async () => {
      if (delayMs) await sleep(delayMs);
      await this.#active;
      this.#pending = null;
      const record = this.records.read();
      if (!record || record.temporary || !record.indexDirty || record.indexError) return;
      const write = upsertThreadIndex(this.env, record).then(() => {
        // Only the flag, and only if no newer write (or a delete) happened meanwhile.
        this.records.markIndexed(record.updatedAt);
        this.#failures = 0;
      });
      this.#active = write.catch(() => undefined);
      try {
        await write;
      } catch (error) {
        const reason = writeErrorReason(error);
        if (isPermanentWriteError(error)) {
          this.records.markIndexFailed(record.updatedAt, reason);
          log.error("thread index refused the thread's row; not retrying until the thread changes", {
            thread_id: record.threadId,
            error: reason,
          });
        } else {
          this.#failures += 1;
          log.warn("thread index update failed; will retry", {
            thread_id: record.threadId,
            error: reason,
            retry_in_ms: this.retryDelay(),
          });
        }
      }
    })();
    this.#pending = pending;
    return pending;
  }

  /** Waits until no index write is queued or under way, so none can land after a delete. */
  async drain(): Promise<void> {
    await this.#pending;
    await this.#active;
  }

  /** Removes the thread's index row (a temporary thread has none). */
  async remove(record: ThreadRecord): Promise<void> {
    if (!record.temporary) await deleteThreadIndex(this.env, record.workspaceId, record.threadId);
  }
}
