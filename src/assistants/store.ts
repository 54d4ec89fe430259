import { and, asc, count, desc, eq, inArray, notInArray, type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { containments } from "../db/json-filter.ts";
import { type AssistantRow, type AssistantVersionRow, assistants, assistantVersions } from "../db/schema.ts";

/** D1 storage of assistants and their versions. Every query is scoped to one workspace. */

export interface AssistantFields {
  graphId: string;
  config: Record<string, unknown>;
  context: unknown;
  metadata: Record<string, unknown>;
  name: string;
  description: string | null;
}

export interface AssistantFilter {
  metadata?: Record<string, unknown>;
  /** An authorization handler's filter, as containment. */
  authMetadata?: Record<string, unknown>;
  graphId?: string;
  name?: string;
}

export interface AssistantSearch extends AssistantFilter {
  limit: number;
  offset: number;
  sortBy: "assistant_id" | "graph_id" | "name" | "created_at" | "updated_at";
  sortOrder: "asc" | "desc";
}

const where = (workspaceId: string, id: string) =>
  and(eq(assistants.workspaceId, workspaceId), eq(assistants.assistantId, id));

export async function getAssistant(
  db: Database,
  workspaceId: string,
  assistantId: string,
): Promise<AssistantRow | undefined> {
  return db.select().from(assistants).where(where(workspaceId, assistantId)).get();
}

/** Inserts version 1 and the assistant; false when the id is taken. */
export async function insertAssistant(
  db: Database,
  workspaceId: string,
  assistantId: string,
  fields: AssistantFields,
  at: string,
): Promise<boolean> {
  const row = { workspaceId, assistantId, ...fields, version: 1, createdAt: at };
  const [inserted] = await db.batch([
    db
      .insert(assistants)
      .values({ ...row, updatedAt: at })
      .onConflictDoNothing()
      .returning({ id: assistants.assistantId }),
    db.insert(assistantVersions).values(row).onConflictDoNothing(),
  ]);
  return inserted.length > 0;
}

/**
 * Creates the deployment's system assistants where missing (idempotent), and removes the system
 * assistants of graphs the deployment no longer has.
 */
export async function ensureSystemAssistants(
  db: Database,
  workspaceId: string,
  rows: ({ assistantId: string } & AssistantFields)[],
  at: string,
): Promise<void> {
  const deployed = rows.map((row) => row.graphId);
  const statements = rows.flatMap((row) => {
    const values = { workspaceId, ...row, version: 1, createdAt: at };
    return [
      db
        .insert(assistants)
        .values({ ...values, updatedAt: at })
        .onConflictDoNothing(),
      db.insert(assistantVersions).values(values).onConflictDoNothing(),
    ];
  });
  // System assistants of graphs this deployment no longer has are removed with their versions.
  const stale = and(
    eq(assistants.workspaceId, workspaceId),
    sql`json_extract(${assistants.metadata}, '$.created_by') = 'system'`,
    deployed.length ? notInArray(assistants.graphId, deployed) : undefined,
  );
  const staleIds = db.select({ id: assistants.assistantId }).from(assistants).where(stale);
  await db.batch([
    ...statements,
    db
      .delete(assistantVersions)
      .where(and(eq(assistantVersions.workspaceId, workspaceId), inArray(assistantVersions.assistantId, staleIds))),
    db.delete(assistants).where(stale),
  ] as unknown as Parameters<typeof db.batch>[0]);
}

/** Concurrent patches each get a turn: every round at least one of them lands. */
const MAX_VERSION_ATTEMPTS = 32;

export class VersionConflictError extends Error {}

/**
 * A new version made current, its fields computed by `fieldsFrom` from the current row (read again
 * when a concurrent change lands first, so no patch's merge is lost). The version number is taken
 * inside the insert and the row is compared-and-swapped in the same batch, so parallel patches
 * each become their own version. Undefined when the assistant does not exist; a
 * VersionConflictError when it kept changing for MAX_VERSION_ATTEMPTS rounds.
 */
export async function addVersion(
  db: Database,
  workspaceId: string,
  first: AssistantRow,
  fieldsFrom: (current: AssistantRow) => AssistantFields,
  at: string,
): Promise<AssistantRow | undefined> {
  let current: AssistantRow | undefined = first;
  for (let attempt = 0; attempt < MAX_VERSION_ATTEMPTS && current; attempt++) {
    const fields = fieldsFrom(current);
    const unchanged = sql`workspace_id = ${workspaceId} AND assistant_id = ${current.assistantId} AND version = ${current.version} AND updated_at = ${current.updatedAt}`;
    const nextVersion = sql`(SELECT coalesce(max(version), 0) + 1 FROM assistant_versions WHERE workspace_id = ${workspaceId} AND assistant_id = ${current.assistantId})`;
    const [, updated] = await db.batch([
      // Columns in the table's order, as insert-select requires.
      db.insert(assistantVersions).select(
        sql`SELECT workspace_id, assistant_id, ${nextVersion}, ${fields.graphId}, ${JSON.stringify(fields.config)}, ${JSON.stringify(fields.context ?? null)},
          ${JSON.stringify(fields.metadata)}, ${fields.name}, ${fields.description}, ${at} FROM assistants WHERE ${unchanged}`,
      ),
      db
        .update(assistants)
        .set({
          ...fields,
          version: sql`(SELECT max(version) FROM assistant_versions WHERE workspace_id = ${workspaceId} AND assistant_id = ${current.assistantId})`,
          updatedAt: at,
        })
        .where(
          and(
            where(workspaceId, current.assistantId),
            eq(assistants.version, current.version),
            eq(assistants.updatedAt, current.updatedAt),
          ),
        )
        .returning(),
    ]);
    if (updated[0]) return updated[0];
    current = await getAssistant(db, workspaceId, first.assistantId);
  }
  if (!current) return undefined;
  throw new VersionConflictError(`Assistant ${first.assistantId} changed concurrently too often; retry the update`);
}

export async function getVersion(
  db: Database,
  workspaceId: string,
  assistantId: string,
  version: number,
): Promise<AssistantVersionRow | undefined> {
  return db
    .select()
    .from(assistantVersions)
    .where(
      and(
        eq(assistantVersions.workspaceId, workspaceId),
        eq(assistantVersions.assistantId, assistantId),
        eq(assistantVersions.version, version),
      ),
    )
    .get();
}

/** Makes an existing version current again (no new version is created). */
export async function setCurrentVersion(
  db: Database,
  workspaceId: string,
  version: AssistantVersionRow,
  at: string,
): Promise<AssistantRow | undefined> {
  const { graphId, config, context, metadata, name, description } = version;
  const [row] = await db
    .update(assistants)
    .set({ graphId, config, context, metadata, name, description, version: version.version, updatedAt: at })
    .where(where(workspaceId, version.assistantId))
    .returning();
  return row;
}

export async function listVersions(
  db: Database,
  workspaceId: string,
  assistantId: string,
  options: { limit: number; offset: number; metadata?: Record<string, unknown> },
): Promise<AssistantVersionRow[]> {
  const conditions: (SQL | undefined)[] = [
    eq(assistantVersions.workspaceId, workspaceId),
    eq(assistantVersions.assistantId, assistantId),
  ];
  conditions.push(...containments([assistantVersions.metadata, options.metadata]));
  return db
    .select()
    .from(assistantVersions)
    .where(and(...conditions))
    .orderBy(desc(assistantVersions.version))
    .limit(options.limit)
    .offset(options.offset)
    .all();
}

export async function deleteAssistant(db: Database, workspaceId: string, assistantId: string): Promise<boolean> {
  const [, deleted] = await db.batch([
    db
      .delete(assistantVersions)
      .where(and(eq(assistantVersions.workspaceId, workspaceId), eq(assistantVersions.assistantId, assistantId))),
    db.delete(assistants).where(where(workspaceId, assistantId)).returning({ id: assistants.assistantId }),
  ]);
  return deleted.length > 0;
}

function filterClause(workspaceId: string, filter: AssistantFilter): SQL | undefined {
  const conditions: (SQL | undefined)[] = [eq(assistants.workspaceId, workspaceId)];
  if (filter.graphId) conditions.push(eq(assistants.graphId, filter.graphId));
  // Case-insensitive substring (instr, not LIKE: D1 caps LIKE patterns at 50 bytes).
  if (filter.name) conditions.push(sql`instr(lower(${assistants.name}), ${filter.name.toLowerCase()}) > 0`);
  conditions.push(...containments([assistants.metadata, filter.metadata], [assistants.metadata, filter.authMetadata]));
  return and(...conditions);
}

const SORT_COLUMNS = {
  assistant_id: assistants.assistantId,
  graph_id: assistants.graphId,
  name: assistants.name,
  created_at: assistants.createdAt,
  updated_at: assistants.updatedAt,
} as const;

export async function searchAssistants(
  db: Database,
  workspaceId: string,
  search: AssistantSearch,
): Promise<{ rows: AssistantRow[]; total: number }> {
  const clause = filterClause(workspaceId, search);
  const order = search.sortOrder === "asc" ? asc : desc;
  const [rows, totals] = await db.batch([
    db
      .select()
      .from(assistants)
      .where(clause)
      .orderBy(order(SORT_COLUMNS[search.sortBy]), order(assistants.assistantId))
      .limit(search.limit)
      .offset(search.offset),
    db.select({ total: count() }).from(assistants).where(clause),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

export async function countAssistants(db: Database, workspaceId: string, filter: AssistantFilter): Promise<number> {
  const [row] = await db.select({ total: count() }).from(assistants).where(filterClause(workspaceId, filter));
  return row?.total ?? 0;
}
