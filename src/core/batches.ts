/**
 * Work split into groups: so many items at a time (bound parameters, connections, messages per
 * send), or so many bytes at a time (a Durable Object RPC carries at most 32 MiB).
 */

/**
 * Bytes a JSON-ready value takes in a Durable Object RPC, from above: V8 serializes a string holding
 * any character past Latin-1 at two bytes per UTF-16 unit.
 */
export const rpcBytes = (value: unknown): number => 2 * (JSON.stringify(value)?.length ?? 0);

/** `items` in consecutive groups of at most `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const groups: T[][] = [];
  for (let i = 0; i < items.length; i += size) groups.push(items.slice(i, i + size));
  return groups;
}

/**
 * `items` in consecutive groups of at most `limit` bytes by `bytes` (an item larger than that goes
 * alone), taken lazily: an item is read only when its group is being filled.
 */
export function* bySize<T>(items: Iterable<T>, bytes: (item: T) => number, limit: number): Generator<T[]> {
  let group: T[] = [];
  let total = 0;
  for (const item of items) {
    const size = bytes(item);
    if (group.length && total + size > limit) {
      yield group;
      group = [];
      total = 0;
    }
    group.push(item);
    total += size;
  }
  if (group.length) yield group;
}

/**
 * `fn` on every item, `size` calls at a time (a group starts once the previous one has settled), the
 * results in the items' order. Bounds what a fan-out holds in flight: see WORKER_CONNECTIONS.
 */
export async function mapInBatches<T, R>(items: readonly T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const group of chunked(items, size)) results.push(...(await Promise.all(group.map((item) => fn(item)))));
  return results;
}
