import { env } from "cloudflare:test";
import { DEFAULT_WORKSPACE_ID } from "../../src/tenancy/store.ts";
import { THREAD_INDEX_SHARDS, threadIndexPartition } from "../../src/threads/search-index.ts";
import { type Partition, partitionName } from "../../src/workspace/partition.ts";

/** Runs a statement on a thread-index shard of the workspace; answers the rows (arrays of columns). */
export async function onIndexShard(
  shard: number,
  sql: string,
  params: unknown[] = [],
  workspaceId = DEFAULT_WORKSPACE_ID,
): Promise<unknown[][]> {
  const partition: Partition = { workspaceId, kind: "threads", shard };
  const [result] = await env.WORKSPACE.getByName(partitionName(partition)).exec(partition, [
    { sql, params, method: "all" },
  ]);
  return (result?.rows ?? []) as unknown[][];
}

/** The shard of the default workspace's index that holds `threadId`. */
export const shardOf = (threadId: string) => threadIndexPartition(DEFAULT_WORKSPACE_ID, threadId).shard as number;

/** `UPDATE threads SET <set>` on the index rows of `threadIds` (`set`'s parameters first), on each shard holding one. */
export async function updateIndexRows(threadIds: string[], set: string, params: unknown[] = []): Promise<void> {
  for (let shard = 0; shard < THREAD_INDEX_SHARDS; shard++) {
    const ids = threadIds.filter((id) => shardOf(id) === shard);
    if (ids.length)
      await onIndexShard(shard, `UPDATE threads SET ${set} WHERE thread_id IN (SELECT value FROM json_each(?))`, [
        ...params,
        JSON.stringify(ids),
      ]);
  }
}
