/**
 * Where a workspace's data lives: in `WorkspaceDO` partitions, one SQLite Durable Object each, named
 * `<workspace id>/<part>`. Each part holds one concern of one workspace, so no object or database is
 * shared by every tenant, and a busy concern can be spread over several objects (`threads/0`…) by a
 * hash of its key. The number of objects of a sharded concern is part of where rows are found: a
 * deployment must not change it once it holds data.
 */

/** The concerns a workspace partition can hold; each has its own tables (tables.ts). */
export type PartitionKind = "threads" | "store" | "crons" | "traces" | "runs" | "a2a";

/** A partition of one workspace: its kind, and which of that kind's objects. */
export interface Partition {
  workspaceId: string;
  kind: PartitionKind;
  /** The object's index within a kind spread over several (threads, runs); absent for the others. */
  shard?: number;
}

/** The Durable Object name of a partition. */
export function partitionName(partition: Partition): string {
  const { workspaceId, kind, shard } = partition;
  return shard === undefined ? `${workspaceId}/${kind}` : `${workspaceId}/${kind}/${shard}`;
}

/** FNV-1a over the UTF-16 code units: a fast, stable spread of keys over `buckets` objects. */
export function hashBucket(key: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % buckets;
}

/** Thread index objects per workspace (threads by hash of the thread id). */
export const THREAD_INDEX_SHARDS = 8;
/** Run locator objects per workspace (traced runs by hash of the run id). */
export const RUN_LOCATOR_SHARDS = 16;
