import type { SqlStore } from "../../db/sql.ts";
import type { EventDraft, ProtocolEvent } from "./types.ts";

/**
 * The thread's protocol events, numbered and kept in the Durable Object's SQLite so that `since`
 * replays and the numbering itself survive the object being evicted or restarted. Bounded: the
 * newest MAX_PROTOCOL_EVENTS events are kept, older ones are dropped as new ones arrive.
 */
export const MAX_PROTOCOL_EVENTS = 1_000;

const SCHEMA = `CREATE TABLE IF NOT EXISTS protocol_events (
  seq INTEGER PRIMARY KEY,
  event TEXT NOT NULL
)`;

export class ProtocolEventLog {
  #ready = false;
  #lastSeq: number | null = null;

  constructor(private readonly sql: SqlStore) {}

  #exists(): boolean {
    if (this.#ready) return true;
    if (
      this.sql.all("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'protocol_events'").length ===
      0
    )
      return false;
    this.#ready = true;
    return true;
  }

  /** The sequence number of the newest event (0 before the first). */
  lastSeq(): number {
    if (this.#lastSeq === null) {
      this.#lastSeq = this.#exists()
        ? Number(this.sql.all<{ seq: number | null }>("SELECT max(seq) AS seq FROM protocol_events")[0]?.seq ?? 0)
        : 0;
    }
    return this.#lastSeq;
  }

  /** Numbers the draft, stores it and drops what falls out of the bound. */
  append(draft: EventDraft): ProtocolEvent {
    if (!this.#exists()) {
      this.sql.run(SCHEMA);
      this.#ready = true;
    }
    const seq = this.lastSeq() + 1;
    const event: ProtocolEvent = {
      type: "event",
      event_id: String(seq),
      seq,
      method: draft.method,
      params: {
        namespace: draft.namespace,
        timestamp: draft.timestamp ?? Date.now(),
        ...(draft.node !== undefined ? { node: draft.node } : {}),
        data: draft.data,
      },
    };
    this.sql.run("INSERT INTO protocol_events (seq, event) VALUES (?, ?)", seq, JSON.stringify(event));
    if (seq > MAX_PROTOCOL_EVENTS)
      this.sql.run("DELETE FROM protocol_events WHERE seq <= ?", seq - MAX_PROTOCOL_EVENTS);
    this.#lastSeq = seq;
    return event;
  }

  /** Stored events after `since` (all of them without it), oldest first. */
  *after(since = 0): Iterable<ProtocolEvent> {
    if (!this.#exists()) return;
    for (const row of this.sql.iterate<{ event: string }>(
      "SELECT event FROM protocol_events WHERE seq > ? ORDER BY seq",
      since,
    ))
      yield JSON.parse(row.event) as ProtocolEvent;
  }

  /** Forgets what it knows of storage (the thread's storage was wiped). */
  reset(): void {
    this.#ready = false;
    this.#lastSeq = null;
  }
}
