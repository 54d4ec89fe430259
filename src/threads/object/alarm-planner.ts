// Inside the thread's Durable Object (threads/object/): when the thread's one alarm fires next (TTL, index retries, runs).
import { type ThreadRecord, ttlExpiry } from "./record.ts";

/** How soon the alarm retries what failed: a TTL delete, an index write (the first time; see `retryDelay`). */
export const RETRY_MS = 5_000;

/**
 * When the thread's alarm must fire next: at its TTL expiry, for an index write D1 has not taken
 * yet (after `indexRetryMs`; never for a write D1 refused for good), or when its runs need it
 * (`runWakeup`); null when nothing is due.
 */
export function nextAlarmTime(record: ThreadRecord, runWakeup: number | null, indexRetryMs = RETRY_MS): number | null {
  const times: number[] = [];
  const expiry = ttlExpiry(record);
  if (expiry !== null && (expiry > Date.now() || record.ttl?.strategy === "delete")) times.push(expiry);
  if (record.indexDirty && !record.indexError) times.push(Date.now() + indexRetryMs);
  if (runWakeup !== null) times.push(runWakeup);
  return times.length ? Math.min(...times) : null;
}

/**
 * The Durable Object's one alarm, serving TTL, index retries and runs. Remembers the time last set,
 * so a run's many reschedules cost no storage writes.
 */
export class AlarmPlanner {
  /** The alarm time last set (null: none; undefined: unknown since the object started). */
  #alarmAt: number | null | undefined;

  constructor(
    private readonly storage: Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">,
    private readonly runWakeup: () => number | null,
    private readonly indexRetryMs: () => number = () => RETRY_MS,
  ) {}

  async plan(record: ThreadRecord): Promise<void> {
    const wanted = nextAlarmTime(record, this.runWakeup(), this.indexRetryMs());
    if (wanted === null) {
      if (this.#alarmAt !== null) await this.storage.deleteAlarm();
      this.#alarmAt = null;
      return;
    }
    // An earlier pending alarm already covers it: when it fires, the alarm handler plans again.
    if (typeof this.#alarmAt === "number" && this.#alarmAt <= wanted && this.#alarmAt > Date.now()) return;
    this.#alarmAt = wanted;
    await this.storage.setAlarm(wanted);
  }

  /** The alarm has fired: no alarm is pending any more. */
  fired(): void {
    this.#alarmAt = null;
  }

  /** Fires again soon, to retry work that failed. */
  retrySoon(): Promise<void> {
    return this.storage.setAlarm(Date.now() + RETRY_MS);
  }

  /** Removes the alarm (the thread is being wiped). */
  async clear(): Promise<void> {
    this.#alarmAt = null;
    await this.storage.deleteAlarm();
  }
}
