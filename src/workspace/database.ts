import { type Partition, partitionName } from "./partition.ts";
import { sqlDatabase, type WorkspaceDatabase } from "./sql.ts";
import type { WorkspaceDO } from "./workspace-do.ts";

export type { WorkspaceDatabase } from "./sql.ts";

/** The bindings that reach workspace partitions. */
export interface WorkspaceBindings {
  WORKSPACE: DurableObjectNamespace<WorkspaceDO>;
}

/**
 * The drizzle client of one partition of a workspace's data. With `armAt` (epoch ms), each of its
 * calls also makes the partition's alarm fire no later than that, in the same RPC.
 */
export function workspaceDatabase(
  env: WorkspaceBindings,
  partition: Partition,
  options: { armAt?: number } = {},
): WorkspaceDatabase {
  const stub = env.WORKSPACE.getByName(partitionName(partition));
  return sqlDatabase((statements) => stub.exec(partition, statements, options.armAt));
}

/** Asks a partition's object to run its alarm work no later than `at` (epoch ms). */
export async function armPartition(env: WorkspaceBindings, partition: Partition, at: number): Promise<void> {
  await env.WORKSPACE.getByName(partitionName(partition)).arm(partition, at);
}
