import { sseFrame } from "../../core/sse.ts";
import type { RunTable } from "./run-table.ts";

const encoder = new TextEncoder();
/** Idle streams get an SSE comment this often, so proxies keep them open and the SDK can detect drops. */
const HEARTBEAT_MS = 5_000;
/** Events kept for `Last-Event-ID` on the thread-wide stream (only while someone follows it). */
const THREAD_BACKLOG = 100;

/**
 * A stream that opens and carries one event, then ends: how a join that cannot follow its run (hidden,
 * unknown, or its thread deleted) answers once the client already expects SSE.
 */
export function singleEventStream(event: string, data: unknown): ReadableStream<Uint8Array> {
  const frame = sseFrame(event, JSON.stringify(data));
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(frame);
      controller.close();
    },
  });
}

export class Subscriber {
  readonly readable: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #closed = false;
  #lastWrite = Date.now();

  constructor(onDisconnect?: () => void) {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.readable = readable;
    this.#writer = writable.getWriter();
    this.#writer.closed.catch(() => {
      if (!this.#closed) {
        this.#stop();
        onDisconnect?.();
      }
    });
    this.#heartbeat = setInterval(() => {
      if (Date.now() - this.#lastWrite >= HEARTBEAT_MS) this.write(encoder.encode(": heartbeat\n\n"));
    }, HEARTBEAT_MS);
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(chunk: Uint8Array): void {
    if (this.#closed) return;
    this.#lastWrite = Date.now();
    // Not awaited: a slow reader must not stall the run; a gone reader fails `closed` instead.
    this.#writer.write(chunk).catch(() => {});
  }

  close(): void {
    if (this.#closed) return;
    this.#stop();
    this.#writer.close().catch(() => {});
  }

  #stop(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
  }
}

interface LiveRun {
  seq: number;
  resumable: boolean;
  subscribers: Set<Subscriber>;
}

/**
 * The live event streams of a thread's runs. Every event gets the run's next sequence number (its
 * SSE `id`, from 0). Events of resumable runs are also stored, so a join with `Last-Event-ID`
 * replays exactly what it missed; other runs' events reach only the readers present at the time.
 */
export class RunStreams {
  readonly #live = new Map<string, LiveRun>();
  readonly #threadSubscribers = new Set<Subscriber>();
  readonly #threadBacklog: { id: number; event: string; data: string }[] = [];
  #threadSeq = 0;

  constructor(private readonly table: RunTable) {}

  /** Starts (or, after a restart, continues) the numbering of a run's events. */
  open(runId: string, resumable: boolean): void {
    if (this.#live.has(runId)) return;
    this.#live.set(runId, { seq: resumable ? this.table.lastSeq(runId) + 1 : 0, resumable, subscribers: new Set() });
  }

  publish(runId: string, event: string, data: unknown): void {
    const run = this.#live.get(runId);
    if (!run) return;
    const seq = run.seq++;
    // Nobody to tell and nothing to keep: skip serializing (a `/wait` run has no readers at all).
    if (!run.resumable && run.subscribers.size === 0 && this.#threadSubscribers.size === 0) return;
    const json = JSON.stringify(data ?? null);
    if (run.resumable) this.table.appendEvent(runId, seq, event, json);
    const frame = sseFrame(event, json, seq);
    for (const subscriber of run.subscribers) subscriber.write(frame);
    this.#toThread(event, json);
  }

  /** Ends every reader of the run: the run is over. */
  finish(runId: string): void {
    const run = this.#live.get(runId);
    if (!run) return;
    for (const subscriber of run.subscribers) subscriber.close();
    this.#live.delete(runId);
  }

  /** Ends every reader of the run with an `error` event: the run cannot go on (its thread is deleted). */
  fail(runId: string, error: unknown): void {
    const run = this.#live.get(runId);
    if (!run) return;
    const json = JSON.stringify(error);
    const seq = run.seq++;
    if (run.resumable) this.table.appendEvent(runId, seq, "error", json);
    const frame = sseFrame("error", json, seq);
    for (const subscriber of run.subscribers) subscriber.write(frame);
    this.finish(runId);
  }

  /**
   * A reader of one run. With `lastEventId` on a resumable run it first replays every later stored
   * event. A run that is not live (finished, or unknown) gives only the replay.
   */
  subscribe(
    runId: string,
    options: { lastEventId?: number; onDisconnect?: () => void } = {},
  ): ReadableStream<Uint8Array> {
    const subscriber = new Subscriber(options.onDisconnect);
    if (options.lastEventId !== undefined) {
      for (const stored of this.table.eventsAfter(runId, options.lastEventId)) {
        subscriber.write(sseFrame(stored.event, stored.data, stored.seq));
      }
    }
    const run = this.#live.get(runId);
    if (run) run.subscribers.add(subscriber);
    else subscriber.close();
    return subscriber.readable;
  }

  /** A reader of every run of the thread, open until the client leaves. */
  subscribeThread(lastEventId?: number): ReadableStream<Uint8Array> {
    const subscriber = new Subscriber(() => this.#threadSubscribers.delete(subscriber));
    if (lastEventId !== undefined) {
      for (const past of this.#threadBacklog) {
        if (past.id > lastEventId) subscriber.write(sseFrame(past.event, past.data, past.id));
      }
    }
    this.#threadSubscribers.add(subscriber);
    return subscriber.readable;
  }

  /** Closes every reader (the thread is being deleted); thread-wide readers first get `error`. */
  closeAll(error?: unknown): void {
    for (const runId of [...this.#live.keys()]) this.finish(runId);
    const frame = error === undefined ? undefined : sseFrame("error", JSON.stringify(error), this.#threadSeq++);
    for (const subscriber of this.#threadSubscribers) {
      if (frame) subscriber.write(frame);
      subscriber.close();
    }
    this.#threadSubscribers.clear();
  }

  #toThread(event: string, json: string): void {
    const id = this.#threadSeq++;
    if (this.#threadSubscribers.size === 0) {
      this.#threadBacklog.length = 0;
      return;
    }
    this.#threadBacklog.push({ id, event, data: json });
    if (this.#threadBacklog.length > THREAD_BACKLOG) this.#threadBacklog.shift();
    const frame = sseFrame(event, json, id);
    for (const subscriber of this.#threadSubscribers) {
      if (subscriber.closed) this.#threadSubscribers.delete(subscriber);
      else subscriber.write(frame);
    }
  }
}
