import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../../http/schemas.ts";
import { secured } from "../../http/secured.ts";
import { tracesDatabase } from "../directory.ts";
import { purgeProject } from "./purge.ts";
import {
  ProjectIdParams,
  ProjectListQuery,
  TracerSessionCreateSchema,
  TracerSessionSchema,
  TracerSessionUpdateSchema,
  UpsertQuery,
} from "./schemas.ts";
import { createProject, deleteProject, getProject, listProjects, updateProject } from "./service.ts";

/** `/api/v1/sessions`: tracing projects, as the `langsmith` SDKs create and read them. */

const tags = ["Tracing projects"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

const routes = {
  create: route({
    method: "post",
    path: "/api/v1/sessions",
    summary: "Create a tracing project (`upsert=true` returns and updates an existing one of that name)",
    request: { query: UpsertQuery, body: jsonBody(TracerSessionCreateSchema) },
    responses: { 200: jsonContent(TracerSessionSchema, "The project"), ...conflictError },
  }),
  list: route({
    method: "get",
    path: "/api/v1/sessions",
    summary: "List tracing projects (an array, ordered by name)",
    request: { query: ProjectListQuery },
    responses: { 200: jsonContent(z.array(TracerSessionSchema), "Projects") },
  }),
  get: route({
    method: "get",
    path: "/api/v1/sessions/{session_id}",
    summary: "Get a tracing project",
    request: { params: ProjectIdParams },
    responses: { 200: jsonContent(TracerSessionSchema, "The project"), ...notFoundError },
  }),
  update: route({
    method: "patch",
    path: "/api/v1/sessions/{session_id}",
    summary: "Update a tracing project",
    request: { params: ProjectIdParams, body: jsonBody(TracerSessionUpdateSchema) },
    responses: { 200: jsonContent(TracerSessionSchema, "The project"), ...notFoundError, ...conflictError },
  }),
  delete: route({
    method: "delete",
    path: "/api/v1/sessions/{session_id}",
    summary: "Delete a tracing project",
    request: { params: ProjectIdParams },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...notFoundError },
  }),
};

export const sessionRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const { upsert } = c.req.valid("query");
    return c.json(
      await createProject(
        tracesDatabase(c.env, c.get("principal").workspaceId),
        c.get("principal").workspaceId,
        body,
        upsert,
      ),
      200,
    );
  })
  .openapi(routes.list, async (c) => {
    const query = c.req.valid("query");
    const ids = query.id === undefined ? undefined : Array.isArray(query.id) ? query.id : [query.id];
    const projects = await listProjects(
      tracesDatabase(c.env, c.get("principal").workspaceId),
      c.get("principal").workspaceId,
      {
        ids,
        name: query.name,
        nameContains: query.name_contains,
        limit: query.limit,
        offset: query.offset,
      },
    );
    return c.json(projects, 200);
  })
  .openapi(routes.get, async (c) =>
    c.json(
      await getProject(
        tracesDatabase(c.env, c.get("principal").workspaceId),
        c.get("principal").workspaceId,
        c.req.valid("param").session_id,
      ),
      200,
    ),
  )
  .openapi(routes.update, async (c) => {
    const project = await updateProject(
      tracesDatabase(c.env, c.get("principal").workspaceId),
      c.get("principal").workspaceId,
      c.req.valid("param").session_id,
      c.req.valid("json"),
    );
    return c.json(project, 200);
  })
  .openapi(routes.delete, async (c) => {
    const workspaceId = c.get("principal").workspaceId;
    const projectId = c.req.valid("param").session_id;
    await deleteProject(tracesDatabase(c.env, workspaceId), workspaceId, projectId);
    // Its traced data goes too (the rest on the queue, past one invocation's reach).
    await purgeProject(c.env, workspaceId, projectId);
    return c.json({}, 200);
  });
