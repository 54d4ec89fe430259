import { and, eq, inArray } from "drizzle-orm";
import { traceFeedback, traceShards } from "../../db/schema.ts";
import type { WorkspaceBindings } from "../../workspace/database.ts";
import { forgetKnownShards, forgetProjectLocations, tracesDatabase } from "../directory.ts";
import { forgetGenerations, traceShardGenerations } from "../generations.ts";
import { splitsOf } from "../query.ts";
import { type TraceShardDO, traceShardName } from "../trace-shard-do.ts";

/**
 * Deleting a project deletes its traced data, so the storage is reclaimed: every trace shard (each
 * split of each day) is emptied with `deleteAll`, then its directory entries, generations, feedback
 * and locator entries go. A project with more shards than one invocation may reach continues on the
 * work queue, a step at a time; a step done twice changes nothing.
 */

export const PROJECT_PURGE_MESSAGE = "tracing.project-purge";

export interface ProjectPurgeMessage {
  kind: typeof PROJECT_PURGE_MESSAGE;
  workspaceId: string;
  projectId: string;
}

export type PurgeEnv = WorkspaceBindings & {
  TRACE_SHARD: DurableObjectNamespace<TraceShardDO>;
  QUEUE: Queue;
};

/** Project-days, and shards, one step takes on: far inside an invocation's 1,000 subrequests. */
const DAYS_PER_STEP = 50;
const SHARDS_PER_STEP = 400;

/** One step: empties up to SHARDS_PER_STEP shards; answers whether the project's data is all gone. */
export async function purgeProjectStep(env: PurgeEnv, workspaceId: string, projectId: string): Promise<boolean> {
  const db = tracesDatabase(env, workspaceId);
  const ofProject = and(eq(traceShards.workspaceId, workspaceId), eq(traceShards.projectId, projectId));
  const days = await db.select({ day: traceShards.day }).from(traceShards).where(ofProject).limit(DAYS_PER_STEP).all();
  if (!days.length) {
    await db.batch([
      db
        .delete(traceFeedback)
        .where(and(eq(traceFeedback.workspaceId, workspaceId), eq(traceFeedback.projectId, projectId))),
      db
        .delete(traceShardGenerations)
        .where(and(eq(traceShardGenerations.workspaceId, workspaceId), eq(traceShardGenerations.projectId, projectId))),
    ]);
    await forgetProjectLocations(env, workspaceId, projectId);
    forgetKnownShards(workspaceId, projectId);
    forgetGenerations();
    return true;
  }
  const splits = await splitsOf(
    env,
    workspaceId,
    days.map(({ day }) => ({ projectId, day })),
    {},
  );
  const now = splits.slice(0, SHARDS_PER_STEP);
  await Promise.all(now.map((s) => env.TRACE_SHARD.getByName(traceShardName(workspaceId, projectId, s.split)).purge()));
  // A day leaves the directory once every split of it is empty.
  const left = new Set(splits.slice(SHARDS_PER_STEP).map((s) => s.day));
  const emptied = days.map((d) => d.day).filter((day) => !left.has(day));
  if (emptied.length)
    await db
      .delete(traceShards)
      .where(and(ofProject, inArray(traceShards.day, emptied)))
      .run();
  return false;
}

/**
 * Purges a deleted project: two steps here (a project of up to SHARDS_PER_STEP shards is gone when
 * this returns, within about 450 subrequests), then the rest on the queue.
 */
export async function purgeProject(env: PurgeEnv, workspaceId: string, projectId: string): Promise<void> {
  for (let step = 0; step < 2; step++) if (await purgeProjectStep(env, workspaceId, projectId)) return;
  await env.QUEUE.send({ kind: PROJECT_PURGE_MESSAGE, workspaceId, projectId } satisfies ProjectPurgeMessage);
}

/** A queue step of a purge: one step, then the next message until done. */
export async function handleProjectPurge(message: ProjectPurgeMessage, env: PurgeEnv): Promise<void> {
  await purgeProject(env, message.workspaceId, message.projectId);
}
