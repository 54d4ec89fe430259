/**
 * A bounded in-memory cache: at most `maxEntries` entries, each until its own expiry time; past the
 * bound the least recently used entry goes. For state an isolate keeps across requests (its memory
 * is 128 MB, shared by every request it serves).
 */
export class TtlCache<V> {
  /** In use order: a Map iterates in insertion order, and a hit is moved to the end. */
  #entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key` if it has not expired at `now`. */
  get(key: string, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt });
  }

  /** Forgets every entry whose key `matches`. */
  deleteWhere(matches: (key: string) => boolean): void {
    for (const key of [...this.#entries.keys()]) if (matches(key)) this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
