import { z } from "@hono/zod-openapi";
import type { ApiKeyRow, OrganizationRow, WorkspaceRow } from "../db/schema.ts";

/** Plan tiers (see plans.ts): every organization has one; crons and bulk export need `plus` or `enterprise`. */
export const PLANS = ["developer", "plus", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const OrganizationSchema = z
  .object({
    id: z.uuid(),
    display_name: z.string(),
    created_at: z.string(),
    plan: z.enum(PLANS).describe("The plan in force: crons and bulk export need `plus` or `enterprise`"),
    plan_is_default: z
      .boolean()
      .describe("true when the organization has no plan of its own and the deployment's DEFAULT_PLAN applies"),
  })
  .openapi("Organization");

export const OrganizationUpdateSchema = z
  .object({
    plan: z
      .enum(PLANS)
      .nullable()
      .describe("The organization's plan; null returns it to the deployment's DEFAULT_PLAN"),
  })
  .openapi("OrganizationUpdate");

export const WorkspaceSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    display_name: z.string(),
    created_at: z.string(),
  })
  .openapi("Workspace");

export const apiKeyFields = {
  id: z.uuid(),
  organization_id: z.uuid(),
  workspace_id: z.uuid().nullable().describe("null for an organization-scoped key"),
  role: z.enum(["admin", "member"]),
  description: z.string(),
  short_key: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
};

export const ApiKeySchema = z.object(apiKeyFields).openapi("ApiKey");

// Built from the same fields rather than `.extend`, so the document shows one flat object.
export const ApiKeyCreatedSchema = z
  .object({ ...apiKeyFields, key: z.string().describe("The secret key. Shown only in this response; store it now.") })
  .openapi("ApiKeyCreated");

export const WorkspaceCreateSchema = z
  .object({ display_name: z.string().trim().min(1).max(200) })
  .openapi("WorkspaceCreate");

export const ApiKeyCreateSchema = z
  .object({
    description: z.string().max(500).default(""),
    workspace_id: z
      .uuid()
      .nullable()
      .default(null)
      .describe("Scope the key to one workspace; null for the whole organization"),
    role: z
      .enum(["admin", "member"])
      .default("member")
      .describe("`admin` keys manage workspaces and keys; organization scope only"),
    expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
  })
  .openapi("ApiKeyCreate");

export type Organization = z.infer<typeof OrganizationSchema>;
export type Workspace = z.infer<typeof WorkspaceSchema>;
export type ApiKey = z.infer<typeof ApiKeySchema>;
export type ApiKeyCreate = z.output<typeof ApiKeyCreateSchema>;

export const organizationJson = (row: OrganizationRow, plan: Plan): Organization => ({
  id: row.id,
  display_name: row.displayName,
  created_at: row.createdAt,
  plan,
  plan_is_default: row.plan === null,
});

export const workspaceJson = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  organization_id: row.organizationId,
  display_name: row.displayName,
  created_at: row.createdAt,
});

export const apiKeyJson = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  organization_id: row.organizationId,
  workspace_id: row.workspaceId,
  role: row.role,
  description: row.description,
  short_key: row.shortKey,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
  revoked_at: row.revokedAt,
  last_used_at: row.lastUsedAt,
});
