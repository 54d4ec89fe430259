import { z } from "@hono/zod-openapi";
import { clearApiKeyCache } from "../auth/api-key-auth.ts";
import { requireOrganizationAdmin } from "../auth/require-admin.ts";
import { database } from "../db/client.ts";
import type { ApiKeyRow, WorkspaceRow } from "../db/schema.ts";
import { notFound, invalid } from "../core/errors.ts";
import { createRouter } from "../http/router.ts";
import { securedRoutes } from "../http/secured.ts";
import { jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { generateApiKey, hashApiKey, shortKey } from "./keys.ts";
import {
  findApiKey,
  findWorkspace,
  insertApiKey,
  insertWorkspace,
  listApiKeys,
  listWorkspaces,
  revokeApiKey,
} from "./store.ts";

/** Administration: organization-admin keys only. */
const route = securedRoutes(["Administration"], requireOrganizationAdmin);

const WorkspaceSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    display_name: z.string(),
    created_at: z.string(),
  })
  .openapi("Workspace");

const apiKeyFields = {
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

const ApiKeySchema = z.object(apiKeyFields).openapi("ApiKey");

// Built from the same fields rather than `.extend`, so the document shows one flat object.
const ApiKeyCreatedSchema = z
  .object({ ...apiKeyFields, key: z.string().describe("The secret key. Shown only in this response; store it now.") })
  .openapi("ApiKeyCreated");

const WorkspaceCreateSchema = z
  .object({ display_name: z.string().trim().min(1).max(200) })
  .openapi("WorkspaceCreate");

const ApiKeyCreateSchema = z
  .object({
    description: z.string().max(500).default(""),
    workspace_id: z.uuid().nullable().default(null).describe("Scope the key to one workspace; null for the whole organization"),
    role: z.enum(["admin", "member"]).default("member").describe("`admin` keys manage workspaces and keys; organization scope only"),
    expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
  })
  .openapi("ApiKeyCreate");

const toWorkspace = (row: WorkspaceRow): z.infer<typeof WorkspaceSchema> => ({
  id: row.id,
  organization_id: row.organizationId,
  display_name: row.displayName,
  created_at: row.createdAt,
});

const toApiKey = (row: ApiKeyRow): z.infer<typeof ApiKeySchema> => ({
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

const routes = {
  createWorkspace: route({
    method: "post",
    path: "/api/v1/workspaces",
    summary: "Create a workspace (tenant) in the caller's organization",
    request: { body: jsonBody(WorkspaceCreateSchema) },
    responses: { 200: jsonContent(WorkspaceSchema, "The new workspace") },
  }),
  listWorkspaces: route({
    method: "get",
    path: "/api/v1/workspaces",
    summary: "List the workspaces of the caller's organization",
    responses: { 200: jsonContent(z.array(WorkspaceSchema), "Workspaces, oldest first") },
  }),
  createApiKey: route({
    method: "post",
    path: "/api/v1/api-key",
    summary: "Create an API key scoped to the organization or to one workspace",
    description: "The response carries the secret `key` once; only its hash is stored.",
    request: { body: jsonBody(ApiKeyCreateSchema) },
    responses: { 200: jsonContent(ApiKeyCreatedSchema, "The new key, with its secret"), ...notFoundError },
  }),
  listApiKeys: route({
    method: "get",
    path: "/api/v1/api-key",
    summary: "List the organization's API keys (never their secrets)",
    request: { query: z.object({ workspace_id: z.uuid().optional() }) },
    responses: { 200: jsonContent(z.array(ApiKeySchema), "Keys, newest first") },
  }),
  revokeApiKey: route({
    method: "delete",
    path: "/api/v1/api-key/{api_key_id}",
    summary: "Revoke an API key",
    request: { params: z.object({ api_key_id: z.uuid() }) },
    responses: { 200: jsonContent(ApiKeySchema, "The revoked key"), ...notFoundError },
  }),
};

export const tenancyRoutes = createRouter()
  .openapi(routes.createWorkspace, async (c) => {
    const { display_name } = c.req.valid("json");
    const principal = c.get("principal");
    const row = await insertWorkspace(database(c.env), {
      id: crypto.randomUUID(),
      organizationId: principal.organizationId,
      displayName: display_name,
    });
    return c.json(toWorkspace(row), 200);
  })
  .openapi(routes.listWorkspaces, async (c) => {
    const rows = await listWorkspaces(database(c.env), c.get("principal").organizationId);
    return c.json(rows.map(toWorkspace), 200);
  })
  .openapi(routes.createApiKey, async (c) => {
    const body = c.req.valid("json");
    const principal = c.get("principal");
    const db = database(c.env);
    if (body.role === "admin" && body.workspace_id) {
      throw invalid([
        { type: "value_error", loc: ["body", "role"], msg: "Admin keys are organization-scoped: omit workspace_id" },
      ]);
    }
    if (body.expires_at && Date.parse(body.expires_at) <= Date.now()) {
      throw invalid([{ type: "value_error", loc: ["body", "expires_at"], msg: "expires_at must be in the future" }]);
    }
    if (body.workspace_id && !(await findWorkspace(db, principal.organizationId, body.workspace_id))) {
      throw notFound(`Workspace ${body.workspace_id} not found`);
    }
    const key = generateApiKey();
    const row = await insertApiKey(db, {
      id: crypto.randomUUID(),
      organizationId: principal.organizationId,
      workspaceId: body.workspace_id,
      role: body.role,
      description: body.description,
      keyHash: await hashApiKey(key),
      shortKey: shortKey(key),
      expiresAt: body.expires_at ? new Date(body.expires_at).toISOString() : null,
    });
    return c.json({ ...toApiKey(row), key }, 200);
  })
  .openapi(routes.listApiKeys, async (c) => {
    const { workspace_id } = c.req.valid("query");
    const rows = await listApiKeys(database(c.env), c.get("principal").organizationId, workspace_id);
    return c.json(rows.map(toApiKey), 200);
  })
  .openapi(routes.revokeApiKey, async (c) => {
    const { api_key_id } = c.req.valid("param");
    const db = database(c.env);
    const existing = await findApiKey(db, c.get("principal").organizationId, api_key_id);
    if (!existing) throw notFound(`API key ${api_key_id} not found`);
    const row = existing.revokedAt ? existing : await revokeApiKey(db, api_key_id, new Date().toISOString());
    clearApiKeyCache();
    return c.json(toApiKey(row ?? existing), 200);
  });
