import { and, asc, desc, eq } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import {
  type ApiKeyRow,
  apiKeys,
  type OrganizationRow,
  organizations,
  type WorkspaceRow,
  workspaces,
} from "../db/schema.ts";

/** The organization and workspace that the bootstrap key administers. Fixed so every deploy agrees. */
export const DEFAULT_ORGANIZATION_ID = "00000000-0000-4000-8000-000000000001";
export const DEFAULT_WORKSPACE_ID = "00000000-0000-4000-8000-000000000002";

/** Creates the default organization and its default workspace if they are missing. Idempotent. */
export async function ensureDefaultTenancy(db: Database): Promise<void> {
  await db.batch([
    db
      .insert(organizations)
      .values({ id: DEFAULT_ORGANIZATION_ID, displayName: "Default organization" })
      .onConflictDoNothing(),
    db
      .insert(workspaces)
      .values({ id: DEFAULT_WORKSPACE_ID, organizationId: DEFAULT_ORGANIZATION_ID, displayName: "Default workspace" })
      .onConflictDoNothing(),
  ]);
}

export async function findOrganization(db: Database, id: string): Promise<OrganizationRow | undefined> {
  return db.select().from(organizations).where(eq(organizations.id, id)).get();
}

export async function setOrganizationPlan(
  db: Database,
  id: string,
  plan: OrganizationRow["plan"],
): Promise<OrganizationRow | undefined> {
  return db.update(organizations).set({ plan }).where(eq(organizations.id, id)).returning().get();
}

export async function findApiKeyByHash(db: Database, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).get();
}

export async function findApiKey(db: Database, organizationId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.id, id)))
    .get();
}

/** Why an API key no longer authenticates (revoked, expired, gone), or null while it does. */
export async function apiKeyLapse(db: Database, id: string, now = new Date()): Promise<string | null> {
  const row = await db
    .select({ revokedAt: apiKeys.revokedAt, expiresAt: apiKeys.expiresAt })
    .from(apiKeys)
    .where(eq(apiKeys.id, id))
    .get();
  if (!row) return "API key no longer exists";
  if (row.revokedAt) return "API key has been revoked";
  if (row.expiresAt && row.expiresAt <= now.toISOString()) return "API key has expired";
  return null;
}

export async function insertApiKey(db: Database, row: typeof apiKeys.$inferInsert): Promise<ApiKeyRow> {
  return db.insert(apiKeys).values(row).returning().get();
}

export async function listApiKeys(db: Database, organizationId: string, workspaceId?: string): Promise<ApiKeyRow[]> {
  const scope = workspaceId
    ? and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.workspaceId, workspaceId))
    : eq(apiKeys.organizationId, organizationId);
  return db.select().from(apiKeys).where(scope).orderBy(desc(apiKeys.createdAt), asc(apiKeys.id)).all();
}

export async function markApiKeyRevoked(db: Database, id: string, at: string): Promise<ApiKeyRow | undefined> {
  return db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).returning().get();
}

export async function touchApiKey(db: Database, id: string, at: string): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
}

export async function insertWorkspace(db: Database, row: typeof workspaces.$inferInsert): Promise<WorkspaceRow> {
  return db.insert(workspaces).values(row).returning().get();
}

export async function findWorkspace(
  db: Database,
  organizationId: string,
  id: string,
): Promise<WorkspaceRow | undefined> {
  return db
    .select()
    .from(workspaces)
    .where(and(eq(workspaces.organizationId, organizationId), eq(workspaces.id, id)))
    .get();
}

export async function listWorkspaces(db: Database, organizationId: string): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(workspaces)
    .where(eq(workspaces.organizationId, organizationId))
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
    .all();
}

/** The workspace an organization-scoped key acts in when the request names none: the oldest one. */
export async function defaultWorkspace(db: Database, organizationId: string): Promise<WorkspaceRow | undefined> {
  return db
    .select()
    .from(workspaces)
    .where(eq(workspaces.organizationId, organizationId))
    .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
    .limit(1)
    .get();
}
