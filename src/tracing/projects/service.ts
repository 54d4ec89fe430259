import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import { conflict, notFound } from "../../core/errors.ts";
import { inJsonList } from "../../db/json-filter.ts";
import { type TracingProjectRow, tracingProjects } from "../../db/schema.ts";
import type { TracesDatabase } from "../directory.ts";
import type { ProjectCreate, ProjectFields, TracerSession } from "./schemas.ts";

/** Tracing projects ("sessions" in the LangSmith API), per workspace, in D1. */

function toSession(row: TracingProjectRow): TracerSession {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    extra: row.extra,
    tenant_id: row.workspaceId,
    reference_dataset_id: row.referenceDatasetId,
    default_dataset_id: row.defaultDatasetId,
    trace_tier: row.traceTier,
    start_time: row.startTime,
    end_time: row.endTime,
  };
}

/** Column values for the fields a create or update names; absent fields stay untouched. */
function columns(fields: ProjectFields): Partial<TracingProjectRow> {
  const set: Partial<TracingProjectRow> = {};
  if (fields.name !== undefined) set.name = fields.name;
  if (fields.description !== undefined) set.description = fields.description;
  if (fields.extra !== undefined) set.extra = fields.extra;
  if (fields.reference_dataset_id !== undefined) set.referenceDatasetId = fields.reference_dataset_id;
  if (fields.default_dataset_id !== undefined) set.defaultDatasetId = fields.default_dataset_id;
  if (fields.trace_tier !== undefined) set.traceTier = fields.trace_tier;
  if (fields.start_time !== undefined) set.startTime = fields.start_time;
  if (fields.end_time !== undefined) set.endTime = fields.end_time;
  return set;
}

async function byName(db: TracesDatabase, workspaceId: string, name: string): Promise<TracingProjectRow | undefined> {
  return db
    .select()
    .from(tracingProjects)
    .where(and(eq(tracingProjects.workspaceId, workspaceId), eq(tracingProjects.name, name)))
    .get();
}

/**
 * Creates a project. A taken name (or id) is a conflict unless `upsert`, which updates the project of
 * that name with the given fields and returns it.
 */
export async function createProject(
  db: TracesDatabase,
  workspaceId: string,
  fields: ProjectCreate,
  upsert: boolean,
): Promise<TracerSession> {
  const existing = await byName(db, workspaceId, fields.name);
  if (existing) {
    if (!upsert) throw conflict(`A tracing project named "${fields.name}" already exists in this workspace`);
    return updateProject(db, workspaceId, existing.id, { ...fields, name: undefined });
  }
  const now = new Date().toISOString();
  const id = fields.id ?? crypto.randomUUID();
  const row: typeof tracingProjects.$inferInsert = {
    id,
    workspaceId,
    createdAt: now,
    startTime: now,
    name: fields.name,
    ...columns(fields),
  };
  const inserted = await db.insert(tracingProjects).values(row).onConflictDoNothing().returning().get();
  if (inserted) return toSession(inserted);
  // Lost a race on the name, or the id is taken.
  const winner = await byName(db, workspaceId, fields.name);
  if (winner && upsert) return updateProject(db, workspaceId, winner.id, { ...fields, name: undefined });
  throw conflict(
    winner
      ? `A tracing project named "${fields.name}" already exists in this workspace`
      : `A tracing project with id ${id} already exists`,
  );
}

/** The project named `name`, created on first use: ingestion with an unknown `session_name` does this. */
export async function projectForName(db: TracesDatabase, workspaceId: string, name: string): Promise<TracerSession> {
  const existing = await byName(db, workspaceId, name);
  return existing ? toSession(existing) : createProject(db, workspaceId, { name }, true);
}

/**
 * How long this isolate trusts a project name's id without asking D1: traced runs name their project
 * on every post, and an agent run's trace would otherwise pay a D1 round trip for it. Bounds how long
 * another isolate keeps writing to a project renamed or deleted elsewhere; this isolate forgets at once.
 */
const PROJECT_ID_TTL_MS = 10_000;
const PROJECT_ID_CACHE_MAX = 1_000;
/** Resolved ids only: a pending lookup shared with another request's context might never settle in workerd. */
const projectIds = new Map<string, { ref: ProjectRef; expiresAt: number }>();

/** What ingestion needs of a project: its id, and its retention tier. */
export type ProjectRef = { id: string; traceTier: string | null };

/** The workspace's project `name` (created if missing), cached for PROJECT_ID_TTL_MS. */
export async function projectRefForName(db: TracesDatabase, workspaceId: string, name: string): Promise<ProjectRef> {
  const key = `${workspaceId}\u0000${name}`;
  const cached = projectIds.get(key);
  if (cached && cached.expiresAt > Date.now()) return cached.ref;
  const project = await projectForName(db, workspaceId, name);
  const ref = { id: project.id, traceTier: project.trace_tier };
  if (projectIds.size >= PROJECT_ID_CACHE_MAX) projectIds.clear();
  projectIds.set(key, { ref, expiresAt: Date.now() + PROJECT_ID_TTL_MS });
  return ref;
}

/** The id of the workspace's project `name` (created if missing), cached for PROJECT_ID_TTL_MS. */
export async function projectIdForName(db: TracesDatabase, workspaceId: string, name: string): Promise<string> {
  return (await projectRefForName(db, workspaceId, name)).id;
}

/** Forgets the cached project ids of a workspace (a project was renamed or deleted). */
function forgetProjectIds(workspaceId: string): void {
  for (const key of projectIds.keys()) if (key.startsWith(`${workspaceId}\u0000`)) projectIds.delete(key);
}

export async function getProject(db: TracesDatabase, workspaceId: string, id: string): Promise<TracerSession> {
  const row = await db
    .select()
    .from(tracingProjects)
    .where(and(eq(tracingProjects.workspaceId, workspaceId), eq(tracingProjects.id, id)))
    .get();
  if (!row) throw notFound(`Tracing project ${id} not found`);
  return toSession(row);
}

export async function listProjects(
  db: TracesDatabase,
  workspaceId: string,
  query: { ids?: string[]; name?: string; nameContains?: string; limit: number; offset: number },
): Promise<TracerSession[]> {
  const conditions: SQL[] = [eq(tracingProjects.workspaceId, workspaceId)];
  if (query.ids?.length) conditions.push(inJsonList(tracingProjects.id, query.ids));
  if (query.name !== undefined) conditions.push(eq(tracingProjects.name, query.name));
  if (query.nameContains) {
    // instr, not LIKE: names may hold % and _, and D1 caps LIKE patterns at 50 bytes.
    conditions.push(sql`instr(lower(${tracingProjects.name}), lower(${query.nameContains})) > 0`);
  }
  const rows = await db
    .select()
    .from(tracingProjects)
    .where(and(...conditions))
    .orderBy(asc(tracingProjects.name))
    .limit(query.limit)
    .offset(query.offset)
    .all();
  return rows.map(toSession);
}

export async function updateProject(
  db: TracesDatabase,
  workspaceId: string,
  id: string,
  fields: ProjectFields,
): Promise<TracerSession> {
  const set = columns(fields);
  if (set.name !== undefined) {
    const holder = await byName(db, workspaceId, set.name);
    if (holder && holder.id !== id)
      throw conflict(`A tracing project named "${set.name}" already exists in this workspace`);
  }
  if (Object.keys(set).length === 0) return getProject(db, workspaceId, id);
  const row = await db
    .update(tracingProjects)
    .set(set)
    .where(and(eq(tracingProjects.workspaceId, workspaceId), eq(tracingProjects.id, id)))
    .returning()
    .get();
  // Its name or its retention tier may have changed.
  forgetProjectIds(workspaceId);
  if (!row) throw notFound(`Tracing project ${id} not found`);
  return toSession(row);
}

/** Deletes the project's record (its traced data goes with `purgeProject`, projects/purge.ts). */
export async function deleteProject(db: TracesDatabase, workspaceId: string, id: string): Promise<void> {
  const deleted = await db
    .delete(tracingProjects)
    .where(and(eq(tracingProjects.workspaceId, workspaceId), eq(tracingProjects.id, id)))
    .returning({ id: tracingProjects.id })
    .get();
  forgetProjectIds(workspaceId);
  if (!deleted) throw notFound(`Tracing project ${id} not found`);
}
