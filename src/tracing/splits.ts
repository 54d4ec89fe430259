import { hashBucket } from "../workspace/partition.ts";

/**
 * How a project-day of traced runs splits over trace shards, so no shard grows past a few GB
 * whatever the ingest rate.
 *
 * A project-day starts with generation 0: one shard, named as before splits existed, so data stored
 * then stays where it was. When a shard of the newest generation passes the split size, the Worker
 * opens the next generation in the directory: twice the buckets, starting (`from`, epoch ms) a
 * margin after now that outlasts every isolate's cached copy of the directory. A run belongs to the
 * generation whose range holds its trace root's start time (the first segment of its dotted_order;
 * its own start time without one), and to the bucket `hashBucket(trace id, buckets)`. Every run of a
 * trace, and every patch naming its dotted_order, lands in the same shard deterministically, so a
 * trace stays one tree within its split (trace_filter and tree_filter work inside one shard).
 *
 * A split is named by its key: the day (`YYYY-MM-DD`) for generation 0, `YYYY-MM-DD/<g>.<bucket>`
 * beyond. The key is what the run locator and feedback record in their `day` column, and
 * `traceShardName` turns it into the shard's object name.
 */

/** One generation of a project-day: its buckets and the first root start time (epoch ms) it holds. */
export type Generation = { generation: number; buckets: number; from: number };

/** Generation 0: one bucket, every root time before the next generation's `from`. */
export const GENERATION_ZERO: Generation = { generation: 0, buckets: 1, from: Number.NEGATIVE_INFINITY };

/** Buckets of a generation at most: generation g has `2^g` up to this. */
export const MAX_GENERATION_BUCKETS = 1024;

/**
 * Buckets a project-day grows to by load alone (a shard over its split call rate, not its size):
 * 64 shards of 250 ingest calls/s each take 16,000 calls/s, and a day split by load stays at 127
 * shards, well within the shard calls of one query.
 */
export const MAX_LOAD_SPLIT_BUCKETS = 64;

/** The key of one split of a project-day. */
export function splitKey(day: string, generation: number, bucket: number): string {
  return generation === 0 ? day : `${day}/${generation}.${bucket}`;
}

/** The UTC day (`YYYY-MM-DD`) of a split key. */
export const dayOfSplit = (key: string): string => key.slice(0, 10);

/** Generations sorted by number, with generation 0 always first. */
export function withGenerationZero(generations: readonly Generation[]): Generation[] {
  return [GENERATION_ZERO, ...generations.filter((g) => g.generation > 0)].sort((a, b) => a.generation - b.generation);
}

/** The generation that holds traces rooted at `rootMs`: the newest one that started at or before it. */
export function generationAt(generations: readonly Generation[], rootMs: number): Generation {
  let found = GENERATION_ZERO;
  for (const generation of generations)
    if (generation.from <= rootMs && generation.generation >= found.generation) found = generation;
  return found;
}

/** The split a trace rooted at `rootMs` lands in. */
export function placeTrace(day: string, generations: readonly Generation[], rootMs: number, traceId: string): string {
  const generation = generationAt(generations, rootMs);
  return splitKey(day, generation.generation, hashBucket(traceId, generation.buckets));
}

/** Every split of a project-day, generation by generation: the list only grows at its end. */
export function splitsOfDay(day: string, generations: readonly Generation[]): string[] {
  return withGenerationZero(generations).flatMap((g) =>
    Array.from({ length: g.buckets }, (_, bucket) => splitKey(day, g.generation, bucket)),
  );
}

/** The splits that can hold runs of one trace on a day: its bucket in each generation. */
export function traceSplitsOfDay(day: string, generations: readonly Generation[], traceId: string): string[] {
  return withGenerationZero(generations).map((g) => splitKey(day, g.generation, hashBucket(traceId, g.buckets)));
}

/**
 * The splits a query bounded by `endTime` (ISO, or none) must read: a generation starting after
 * the bound holds only runs rooted, hence started, after it.
 */
export function splitsUpTo(day: string, generations: readonly Generation[], endTime: string | undefined): string[] {
  const end = endTime ? Date.parse(endTime) : Number.NaN;
  return splitsOfDay(day, Number.isNaN(end) ? generations : generations.filter((g) => g.from <= end));
}

/** The generation after the newest one: twice its buckets (up to the maximum), starting at `from`. */
export function nextGeneration(generations: readonly Generation[], from: number): Generation {
  const newest = withGenerationZero(generations).at(-1)!;
  return { generation: newest.generation + 1, buckets: Math.min(newest.buckets * 2, MAX_GENERATION_BUCKETS), from };
}

/** The generation a split key names (0 for a bare day). */
export function generationOfSplit(key: string): number {
  const slash = key.indexOf("/");
  return slash < 0 ? 0 : Number.parseInt(key.slice(slash + 1), 10);
}

const DOTTED_TIME = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{0,6})Z/;

/**
 * The start time (epoch ms) of a run's trace root: the first dotted_order segment's time, else the
 * run's own start time; null when neither parses.
 */
export function rootTimeOf(run: { dotted_order?: string | null; start_time?: string | null }): number | null {
  if (run.dotted_order) {
    const match = DOTTED_TIME.exec(run.dotted_order);
    if (match) {
      const [, y, mo, d, h, mi, s, fraction] = match;
      return Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, Math.floor(Number((fraction || "0").padEnd(6, "0")) / 1000));
    }
  }
  const own = run.start_time ? Date.parse(run.start_time) : Number.NaN;
  return Number.isNaN(own) ? null : own;
}

/** The trace a run belongs to, as placement hashes it: its trace_id, the dotted_order's root, else itself. */
export function traceKeyOf(run: { id: string; trace_id?: string | null; dotted_order?: string | null }): string {
  return run.trace_id ?? (run.dotted_order ? run.dotted_order.slice(22, 58) : run.id);
}
