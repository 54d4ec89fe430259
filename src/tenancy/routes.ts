import { z } from "@hono/zod-openapi";
import { clearApiKeyCache } from "../auth/api-key-auth.ts";
import { requireOrganizationAdmin } from "../auth/require-admin.ts";
import { database } from "../db/client.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateSchema,
  ApiKeySchema,
  apiKeyJson,
  WorkspaceCreateSchema,
  WorkspaceSchema,
  workspaceJson,
} from "./schemas.ts";
import { createApiKey, createWorkspace, listApiKeys, listWorkspaces, revokeApiKey } from "./service.ts";

/** Administration: organization-admin keys only. */
const route = securedRoutes(["Administration"], requireOrganizationAdmin);

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
    const row = await createWorkspace(
      database(c.env),
      c.get("principal").organizationId,
      c.req.valid("json").display_name,
    );
    return c.json(workspaceJson(row), 200);
  })
  .openapi(routes.listWorkspaces, async (c) => {
    const rows = await listWorkspaces(database(c.env), c.get("principal").organizationId);
    return c.json(rows.map(workspaceJson), 200);
  })
  .openapi(routes.createApiKey, async (c) => {
    const { row, key } = await createApiKey(database(c.env), c.get("principal").organizationId, c.req.valid("json"));
    return c.json({ ...apiKeyJson(row), key }, 200);
  })
  .openapi(routes.listApiKeys, async (c) => {
    const rows = await listApiKeys(
      database(c.env),
      c.get("principal").organizationId,
      c.req.valid("query").workspace_id,
    );
    return c.json(rows.map(apiKeyJson), 200);
  })
  .openapi(routes.revokeApiKey, async (c) => {
    const row = await revokeApiKey(database(c.env), c.get("principal").organizationId, c.req.valid("param").api_key_id);
    clearApiKeyCache();
    return c.json(apiKeyJson(row), 200);
  });
