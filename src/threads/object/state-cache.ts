// Inside the thread's Durable Object (threads/object/): state JSON already built, by checkpoint id, in the object's memory.
/**
 * Root-namespace ThreadState JSON text by checkpoint id, in the Durable Object's memory. A checkpoint
 * is immutable once written except for the pending writes recorded against it, so an entry stays
 * valid until the checkpointer reports a change to that checkpoint. Rebuilding a state means
 * deserializing every message in it, and history pages reuse most states between calls; keeping the
 * text (not objects) also spares re-serializing megabytes per history page. Bounded by size.
 */
export class StateCache {
  readonly #entries = new Map<string, string>();
  #bytes = 0;

  constructor(private readonly maxBytes = 24 * 1024 * 1024) {}

  get(checkpointId: string): string | undefined {
    const json = this.#entries.get(checkpointId);
    if (json === undefined) return undefined;
    // Refresh its place in the eviction order.
    this.#entries.delete(checkpointId);
    this.#entries.set(checkpointId, json);
    return json;
  }

  set(checkpointId: string, json: string): void {
    this.forget(checkpointId);
    if (json.length > this.maxBytes / 4) return;
    this.#entries.set(checkpointId, json);
    this.#bytes += json.length;
    for (const [id, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(id);
      this.#bytes -= entry.length;
    }
  }

  forget(checkpointId: string): void {
    const json = this.#entries.get(checkpointId);
    if (json === undefined) return;
    this.#entries.delete(checkpointId);
    this.#bytes -= json.length;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}
