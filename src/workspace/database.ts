import { type MigrationEnv, moveWorkspaceRows } from "./migration.ts";
import { type Partition, partitionName } from "./partition.ts";
import { sqlDatabase, type WorkspaceDatabase } from "./sql.ts";
import type { WorkspaceDO } from "./workspace-do.ts";

export type { WorkspaceDatabase } from "./sql.ts";

/** The bindings that reach workspace partitions. */
export interface WorkspaceBindings {
  WORKSPACE: DurableObjectNamespace<WorkspaceDO>;
}

/**
 * The drizzle client of one partition of a workspace's data. Its first query waits until the
 * workspace's rows of the old layout are in the partition (a no-op once the migration is done).
 */
export function workspaceDatabase(env: MigrationEnv, partition: Partition): WorkspaceDatabase {
  const stub = env.WORKSPACE.getByName(partitionName(partition));
  let moved: Promise<void> | undefined;
  return sqlDatabase(async (statements) => {
    await (moved ??= moveWorkspaceRows(env, partition.workspaceId, partition.kind));
    return stub.exec(partition, statements);
  });
}

/** Asks a partition's object to run its alarm work no later than `at` (epoch ms). */
export async function armPartition(env: WorkspaceBindings, partition: Partition, at: number): Promise<void> {
  await env.WORKSPACE.getByName(partitionName(partition)).arm(partition, at);
}
