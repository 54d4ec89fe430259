import { and, eq, sql } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import { TtlCache } from "../core/ttl-cache.ts";
import { inJsonList } from "../db/json-filter.ts";
import { traceRunLocations } from "../db/schema.ts";
import { type WorkspaceBindings, type WorkspaceDatabase, workspaceDatabase } from "../workspace/database.ts";
import { hashBucket, type Partition, RUN_LOCATOR_SHARDS } from "../workspace/partition.ts";
import type { PartitionAlarm } from "../workspace/workspace-do.ts";

/**
 * Where a workspace's traced runs are found, out of the shared D1: its `traces` partition holds the
 * tracing projects, the directory of trace shards (and their split generations) and feedback; the
 * run locator (run id → project and split) is spread over `RUN_LOCATOR_SHARDS` `runs` partitions by
 * a hash of the run id, so locating and indexing runs grows with the number of objects, not one table.
 */

/** The database of a workspace's `traces` partition. */
export type TracesDatabase = WorkspaceDatabase;

export const tracesDatabase = (env: WorkspaceBindings, workspaceId: string): TracesDatabase =>
  workspaceDatabase(env, { workspaceId, kind: "traces" });

/** Where a run lives: its project and its split key (splits.ts; the bare day for a day's first shard). */
export type RunLocation = { projectId: string; day: string };

const locatorOf = (workspaceId: string, runId: string): Partition => ({
  workspaceId,
  kind: "runs",
  shard: hashBucket(runId, RUN_LOCATOR_SHARDS),
});

/** Run ids per lookup statement, bound as one JSON parameter. */
const IDS_PER_LOOKUP = 1000;

/** Items grouped by the locator shard of their run id. */
function byLocator<T>(workspaceId: string, items: readonly T[], runId: (item: T) => string) {
  const groups = new Map<number, { partition: Partition; items: T[] }>();
  for (const item of items) {
    const partition = locatorOf(workspaceId, runId(item));
    const group = groups.get(partition.shard!) ?? { partition, items: [] };
    group.items.push(item);
    groups.set(partition.shard!, group);
  }
  return [...groups.values()];
}

/** Where runs live: one call per locator shard that holds any of them, in parallel. */
export async function locateRuns(
  env: WorkspaceBindings,
  workspaceId: string,
  runIds: readonly string[],
): Promise<Map<string, RunLocation>> {
  const found = new Map<string, RunLocation>();
  await Promise.all(
    byLocator(workspaceId, [...new Set(runIds)], (id) => id).map(async ({ partition, items }) => {
      const db = workspaceDatabase(env, partition);
      for (const ids of chunked(items, IDS_PER_LOOKUP)) {
        const rows = await db
          .select({
            runId: traceRunLocations.runId,
            projectId: traceRunLocations.projectId,
            day: traceRunLocations.day,
          })
          .from(traceRunLocations)
          .where(
            and(
              eq(traceRunLocations.workspaceId, workspaceId),
              inJsonList(traceRunLocations.runId, ids),
              sql`(expires_at IS NULL OR expires_at > ${Date.now()})`,
            ),
          )
          .all();
        for (const { runId, ...location } of rows) found.set(runId, location);
      }
    }),
  );
  return found;
}

/** Where a run lives, or null. */
export async function locateRun(
  env: WorkspaceBindings,
  workspaceId: string,
  runId: string,
): Promise<RunLocation | null> {
  return (await locateRuns(env, workspaceId, [runId])).get(runId) ?? null;
}

/**
 * Records where runs live: one call per locator shard the runs hash to (each a statement per
 * IDS_PER_LOOKUP runs, bound as one JSON parameter), in parallel. A run already located keeps its place.
 */
export async function recordLocations(
  env: WorkspaceBindings,
  workspaceId: string,
  runs: readonly { runId: string; projectId: string; split: string; expiresAt: number }[],
): Promise<void> {
  await Promise.all(
    byLocator(workspaceId, runs, (run) => run.runId).map(async ({ partition, items }) => {
      // The shard's alarm deletes the entries whose shard's retention ended (expireLocations).
      const armAt = Math.min(...items.map((r) => r.expiresAt));
      const db = workspaceDatabase(env, partition, { armAt });
      for (const group of chunked(items, IDS_PER_LOOKUP))
        await db.run(sql`INSERT INTO trace_run_locations (workspace_id, run_id, project_id, day, expires_at)
          SELECT ${workspaceId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3
          FROM json_each(${JSON.stringify(group.map((r) => [r.runId, r.projectId, r.split, r.expiresAt]))}) WHERE true
          ON CONFLICT DO NOTHING`);
    }),
  );
}

/** Locator entries one alarm run deletes at most. */
const EXPIRED_PER_ALARM = 1000;

/**
 * A locator shard's alarm: deletes entries whose trace shard's retention ended (at most
 * EXPIRED_PER_ALARM, again at once while more are due), then waits for the next expiry.
 */
export const expireLocations: PartitionAlarm = async (_env, _partition, db) => {
  const now = Date.now();
  await db.run(sql`DELETE FROM trace_run_locations WHERE run_id IN (SELECT run_id FROM trace_run_locations
    WHERE expires_at IS NOT NULL AND expires_at <= ${now} LIMIT ${EXPIRED_PER_ALARM})`);
  const [next] = await db.all<[number | null]>(
    sql`SELECT min(expires_at) FROM trace_run_locations WHERE expires_at IS NOT NULL`,
  );
  const at = next?.[0] ?? null;
  return at === null ? null : Math.max(at, now);
};

/** Deletes a project's entries from every locator shard of the workspace. */
export async function forgetProjectLocations(env: WorkspaceBindings, workspaceId: string, projectId: string) {
  await Promise.all(
    Array.from({ length: RUN_LOCATOR_SHARDS }, (_, shard) =>
      workspaceDatabase(env, { workspaceId, kind: "runs", shard })
        .delete(traceRunLocations)
        .where(and(eq(traceRunLocations.workspaceId, workspaceId), eq(traceRunLocations.projectId, projectId)))
        .run(),
    ),
  );
}

/**
 * Shard directory entries (project, day) this isolate has written, so a busy project's ingest does
 * not write its day's entry on every request: an entry, once there, only goes with its project.
 */
const knownShards = new TtlCache<true>(10_000);
const KNOWN_SHARD_MS = 10 * 60_000;

/** Records the project-days that hold runs (the directory queries and exports read), skipping those known here. */
export async function recordShards(
  db: TracesDatabase,
  workspaceId: string,
  shards: readonly { projectId: string; day: string }[],
  now = Date.now(),
): Promise<void> {
  const unknown = shards.filter((s) => !knownShards.get(`${workspaceId}/${s.projectId}/${s.day}`, now));
  if (!unknown.length) return;
  await db.run(sql`INSERT INTO trace_shards (workspace_id, project_id, day)
    SELECT ${workspaceId}, value ->> 0, value ->> 1
    FROM json_each(${JSON.stringify(unknown.map((s) => [s.projectId, s.day]))}) WHERE true
    ON CONFLICT DO NOTHING`);
  for (const s of unknown) knownShards.set(`${workspaceId}/${s.projectId}/${s.day}`, true, now + KNOWN_SHARD_MS);
}

/** Forgets the directory entries known here of a project (it was deleted). */
export function forgetKnownShards(workspaceId: string, projectId: string): void {
  knownShards.deleteWhere((key) => key.startsWith(`${workspaceId}/${projectId}/`));
}
