import { type MigrationEnv, moveWorkspaceRows } from "./migration.ts";
import { type Partition, partitionName } from "./partition.ts";
import type { RankedPage, RankedScan } from "./ranked-scan.ts";
import { sqlDatabase, type WorkspaceDatabase } from "./sql.ts";

export type { WorkspaceDatabase } from "./sql.ts";

/** The bindings that reach workspace partitions: the partitions, and D1 while rows move out of it. */
export type WorkspaceBindings = MigrationEnv;

/**
 * The drizzle client of one partition of a workspace's data. Its first query waits until the
 * workspace's rows of the old layout are in the partition (a no-op once the migration is done).
 * With `armAt` (epoch ms), each of its calls also makes the partition's alarm fire no later than
 * that, in the same RPC.
 */
export function workspaceDatabase(
  env: WorkspaceBindings,
  partition: Partition,
  options: { armAt?: number } = {},
): WorkspaceDatabase {
  const stub = env.WORKSPACE.getByName(partitionName(partition));
  let moved: Promise<void> | undefined;
  return sqlDatabase(async (statements) => {
    await (moved ??= moveWorkspaceRows(env, partition.workspaceId, partition.kind));
    return stub.exec(partition, statements, options.armAt);
  });
}

/** Asks a partition's object to run its alarm work no later than `at` (epoch ms). */
export async function armPartition(env: WorkspaceBindings, partition: Partition, at: number): Promise<void> {
  await env.WORKSPACE.getByName(partitionName(partition)).arm(partition, at);
}

/** A search by similarity, scored inside the partition's object (ranked-scan.ts): one call. */
export async function rankInPartition(
  env: WorkspaceBindings,
  partition: Partition,
  scan: RankedScan,
): Promise<RankedPage> {
  await moveWorkspaceRows(env, partition.workspaceId, partition.kind);
  return env.WORKSPACE.getByName(partitionName(partition)).rank(partition, scan);
}
