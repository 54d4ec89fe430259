import { invalid, notFound } from "../core/errors.ts";
import type { Database } from "../db/client.ts";
import type { ApiKeyRow, OrganizationRow, WorkspaceRow } from "../db/schema.ts";
import { generateApiKey, hashApiKey, shortKey } from "./keys.ts";
import { effectivePlan, type PlanEnv } from "./plans.ts";
import type { ApiKeyCreate, Plan } from "./schemas.ts";
import {
  findApiKey,
  findOrganization,
  findWorkspace,
  insertApiKey,
  insertWorkspace,
  listApiKeys,
  listWorkspaces,
  markApiKeyRevoked,
  setOrganizationPlan,
} from "./store.ts";

/** Administration of an organization's workspaces and API keys, free of HTTP. */

export { listApiKeys, listWorkspaces };

export function createWorkspace(db: Database, organizationId: string, displayName: string): Promise<WorkspaceRow> {
  return insertWorkspace(db, { id: crypto.randomUUID(), organizationId, displayName });
}

/** A new key and its row; the secret is returned this once, only its hash is stored. */
export async function createApiKey(
  db: Database,
  organizationId: string,
  request: ApiKeyCreate,
): Promise<{ row: ApiKeyRow; key: string }> {
  if (request.role === "admin" && request.workspace_id) {
    throw invalid([
      { type: "value_error", loc: ["body", "role"], msg: "Admin keys are organization-scoped: omit workspace_id" },
    ]);
  }
  if (request.expires_at && Date.parse(request.expires_at) <= Date.now()) {
    throw invalid([{ type: "value_error", loc: ["body", "expires_at"], msg: "expires_at must be in the future" }]);
  }
  if (request.workspace_id && !(await findWorkspace(db, organizationId, request.workspace_id))) {
    throw notFound(`Workspace ${request.workspace_id} not found`);
  }
  const key = generateApiKey();
  const row = await insertApiKey(db, {
    id: crypto.randomUUID(),
    organizationId,
    workspaceId: request.workspace_id,
    role: request.role,
    description: request.description,
    keyHash: await hashApiKey(key),
    shortKey: shortKey(key),
    expiresAt: request.expires_at ? new Date(request.expires_at).toISOString() : null,
  });
  return { row, key };
}

/**
 * Revokes a key of the organization (a revoked key stays as it was). `writer` makes the change (the
 * request's D1 session, whose bookmark then covers it); `db` finds the key.
 */
export async function revokeApiKey(
  db: Database,
  organizationId: string,
  id: string,
  writer: Database = db,
): Promise<ApiKeyRow> {
  const existing = await findApiKey(db, organizationId, id);
  if (!existing) throw notFound(`API key ${id} not found`);
  const row = existing.revokedAt ? existing : await markApiKeyRevoked(writer, id, new Date().toISOString());
  return row ?? existing;
}

/** The caller's organization and the plan in force for it (its own, or the deployment's default). */
export async function getOrganization(
  db: Database,
  env: PlanEnv,
  id: string,
): Promise<{ row: OrganizationRow; plan: Plan }> {
  const row = await findOrganization(db, id);
  if (!row) throw notFound(`Organization ${id} not found`);
  return { row, plan: effectivePlan(env, row.plan) };
}

/** Sets the organization's plan; null hands it back to the deployment's DEFAULT_PLAN. */
export async function updateOrganizationPlan(
  db: Database,
  env: PlanEnv,
  id: string,
  plan: Plan | null,
): Promise<{ row: OrganizationRow; plan: Plan }> {
  const row = await setOrganizationPlan(db, id, plan);
  if (!row) throw notFound(`Organization ${id} not found`);
  return { row, plan: effectivePlan(env, row.plan) };
}
