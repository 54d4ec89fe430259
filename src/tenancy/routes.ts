import { z } from "@hono/zod-openapi";
import { forgetApiKey } from "../auth/api-key-auth.ts";
import { requireOrganizationAdmin } from "../auth/require-admin.ts";
import { database, sessionDatabase } from "../db/client.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateSchema,
  ApiKeySchema,
  apiKeyJson,
  OrganizationSchema,
  OrganizationUpdateSchema,
  organizationJson,
  WorkspaceCreateSchema,
  WorkspaceSchema,
  workspaceJson,
} from "./schemas.ts";
import {
  createApiKey,
  createWorkspace,
  getOrganization,
  listApiKeys,
  listWorkspaces,
  revokeApiKey,
  updateOrganizationPlan,
} from "./service.ts";

/** Administration: organization-admin keys only. */
const route = securedRoutes(["Administration"], requireOrganizationAdmin);
/** Reading the organization is open to every key of it, so a member can see why a plan-gated route refuses. */
const memberRoute = securedRoutes(["Administration"]);

const routes = {
  getOrganization: memberRoute({
    method: "get",
    path: "/api/v1/orgs/current",
    summary: "The caller's organization and its plan",
    responses: { 200: jsonContent(OrganizationSchema, "The organization"), ...notFoundError },
  }),
  updateOrganization: route({
    method: "patch",
    path: "/api/v1/orgs/current",
    summary: "Set the organization's plan (organization admins only)",
    description:
      "Crons and bulk export need `plus` or `enterprise`. Lowering the plan keeps existing crons and exports: crons stop firing and scheduled exports stop spawning until the plan allows them again; exports already created finish.",
    request: { body: jsonBody(OrganizationUpdateSchema) },
    responses: { 200: jsonContent(OrganizationSchema, "The organization"), ...notFoundError },
  }),
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
  .openapi(routes.getOrganization, async (c) => {
    const { row, plan } = await getOrganization(database(c.env), c.env, c.get("principal").organizationId);
    return c.json(organizationJson(row, plan), 200);
  })
  .openapi(routes.updateOrganization, async (c) => {
    const { row, plan } = await updateOrganizationPlan(
      database(c.env),
      c.env,
      c.get("principal").organizationId,
      c.req.valid("json").plan,
    );
    return c.json(organizationJson(row, plan), 200);
  })
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
    // Written through the request's D1 session: this isolate's later key checks read no older than it.
    const row = await revokeApiKey(
      database(c.env),
      c.get("principal").organizationId,
      c.req.valid("param").api_key_id,
      sessionDatabase(c.env),
    );
    forgetApiKey(row.keyHash);
    return c.json(apiKeyJson(row), 200);
  });
