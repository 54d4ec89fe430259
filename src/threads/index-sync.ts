import type { Database } from "../db/client.ts";
import { log } from "../observability/log.ts";
import { deleteThreadIndex, upsertThreadIndex } from "./thread-index.ts";
import type { ThreadRecord, ThreadRecords } from "./thread-record.ts";

/**
 * Pushes the thread record to the D1 search index. The record in the Durable Object is the source of
 * truth and carries an `indexDirty` flag until D1 has it; the alarm retries what failed.
 */
export class IndexSync {
  #pending: Promise<void> | null = null;
  #active: Promise<void> = Promise.resolve();

  constructor(
    private readonly records: ThreadRecords,
    private readonly db: () => Database,
  ) {}

  /** The first index row of a new thread; a failure is the caller's to handle. */
  insert(record: ThreadRecord): Promise<void> {
    return upsertThreadIndex(this.db(), record);
  }

  /**
   * Brings the index up to the current record. A sync that has not started yet is shared by later
   * saves, so a quick run's busy → idle reaches D1 as one write; syncs run one at a time, in order.
   */
  sync(delayMs: number): Promise<void> {
    if (this.#pending) return this.#pending;
    const pending = (async () => {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      await this.#active;
      this.#pending = null;
      const record = this.records.read();
      if (!record || record.temporary || !record.indexDirty) return;
      const write = upsertThreadIndex(this.db(), record).then(() => {
        // Only the flag, and only if no newer write (or a delete) happened meanwhile.
        this.records.markIndexed(record.updatedAt);
      });
      this.#active = write.catch(() => undefined);
      try {
        await write;
      } catch (error) {
        log.warn("thread index update failed; will retry", { thread_id: record.threadId, error: String(error) });
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
    if (!record.temporary) await deleteThreadIndex(this.db(), record.workspaceId, record.threadId);
  }
}
