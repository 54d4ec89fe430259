import { and, eq, gte, lte } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { TRACE_DIRECTORY_CACHE_MS } from "../core/limits.ts";
import { inJsonList } from "../db/json-filter.ts";
import { type WorkspaceBindings, workspaceDatabase } from "../workspace/database.ts";
import type { Generation } from "./splits.ts";

/**
 * The generations of each project-day beyond generation 0 (see splits.ts), in the workspace's
 * `traces` partition beside its shard directory. A row is written once, when a shard of the newest
 * generation passes the split size, and never changed: placement depends on it.
 */
export const traceShardGenerations = sqliteTable(
  "trace_shard_generations",
  {
    workspaceId: text("workspace_id").notNull(),
    projectId: text("project_id").notNull(),
    day: text("day").notNull(),
    generation: integer("generation").notNull(),
    buckets: integer("buckets").notNull(),
    /** The first trace root start time the generation holds, epoch ms. */
    fromMs: integer("from_ms").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.projectId, t.day, t.generation] })],
);

type ProjectDay = { projectId: string; day: string };

const keyOf = (workspaceId: string, { projectId, day }: ProjectDay) => `${workspaceId}/${projectId}/${day}`;

/** Project-days whose generations an isolate remembers at most (each a few numbers). */
const CACHED_PROJECT_DAYS = 10_000;
/** This isolate's copy of generations, by project-day, with when it was read. */
const cached = new Map<string, { at: number; generations: Generation[] }>();

function remember(key: string, generations: Generation[], at: number): void {
  if (cached.size >= CACHED_PROJECT_DAYS) cached.clear();
  cached.set(key, { at, generations });
}

const traces = (env: WorkspaceBindings, workspaceId: string) => workspaceDatabase(env, { workspaceId, kind: "traces" });

const toGeneration = (row: { generation: number; buckets: number; fromMs: number }): Generation => ({
  generation: row.generation,
  buckets: row.buckets,
  from: row.fromMs,
});

/**
 * The generations beyond 0 of each project-day (`projectId/day` keys), oldest first: from this
 * isolate's copy when younger than `TRACE_DIRECTORY_CACHE_MS`, the others read in one query.
 * `fresh` skips the copy (reads that need every split now, not placement).
 */
export async function generationsOf(
  env: WorkspaceBindings,
  workspaceId: string,
  projectDays: readonly ProjectDay[],
  options: { now?: number; fresh?: boolean } = {},
): Promise<Map<string, Generation[]>> {
  const now = options.now ?? Date.now();
  const found = new Map<string, Generation[]>();
  const missing: ProjectDay[] = [];
  for (const pd of projectDays) {
    const hit = options.fresh ? undefined : cached.get(keyOf(workspaceId, pd));
    if (hit && now - hit.at < TRACE_DIRECTORY_CACHE_MS && now >= hit.at)
      found.set(`${pd.projectId}/${pd.day}`, hit.generations);
    else missing.push(pd);
  }
  if (!missing.length) return found;
  const days = missing.map((pd) => pd.day).sort();
  const rows = await traces(env, workspaceId)
    .select()
    .from(traceShardGenerations)
    .where(
      and(
        eq(traceShardGenerations.workspaceId, workspaceId),
        inJsonList(traceShardGenerations.projectId, [...new Set(missing.map((pd) => pd.projectId))]),
        gte(traceShardGenerations.day, days[0]),
        lte(traceShardGenerations.day, days.at(-1)!),
      ),
    )
    .orderBy(traceShardGenerations.generation)
    .all();
  for (const pd of missing) {
    const generations = rows.filter((row) => row.projectId === pd.projectId && row.day === pd.day).map(toGeneration);
    found.set(`${pd.projectId}/${pd.day}`, generations);
    remember(keyOf(workspaceId, pd), generations, now);
  }
  return found;
}

/**
 * Records `next` as the next generation of a project-day unless one with its number exists
 * (compare-and-set: of two isolates opening it at once, the first wins and both read its row), and
 * answers the project-day's generations as stored, in one atomic batch.
 */
export async function openGeneration(
  env: WorkspaceBindings,
  workspaceId: string,
  projectDay: ProjectDay,
  next: Generation,
  now = Date.now(),
): Promise<Generation[]> {
  const db = traces(env, workspaceId);
  const where = and(
    eq(traceShardGenerations.workspaceId, workspaceId),
    eq(traceShardGenerations.projectId, projectDay.projectId),
    eq(traceShardGenerations.day, projectDay.day),
  );
  const [, rows] = await db.batch([
    db
      .insert(traceShardGenerations)
      .values({ workspaceId, ...projectDay, generation: next.generation, buckets: next.buckets, fromMs: next.from })
      .onConflictDoNothing(),
    db.select().from(traceShardGenerations).where(where).orderBy(traceShardGenerations.generation),
  ]);
  const generations = rows.map(toGeneration);
  remember(keyOf(workspaceId, projectDay), generations, now);
  return generations;
}

/** The generations of the project-days a test or a read just changed are read again next time. */
export function forgetGenerations(): void {
  cached.clear();
}
