import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../../db/client.ts";
import { createRouter } from "../../http/router.ts";
import { conflictError, Description, jsonBody, jsonContent, JsonObject, Name, notFoundError } from "../../http/schemas.ts";
import { MAX_NAME_LENGTH } from "../../core/limits.ts";
import { secured } from "../../auth/secured.ts";
import { isoTime } from "../schemas.ts";
import { createProject, deleteProject, getProject, listProjects, updateProject } from "./service.ts";

/** `/api/v1/sessions`: tracing projects, as the `langsmith` SDKs create and read them. */

const tags = ["Tracing projects"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

const ProjectId = z.uuid().transform((id) => id.toLowerCase());

const SessionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    extra: z.record(z.string(), z.unknown()).nullable(),
    tenant_id: z.string(),
    reference_dataset_id: z.string().nullable(),
    default_dataset_id: z.string().nullable(),
    trace_tier: z.string().nullable(),
    start_time: z.string(),
    end_time: z.string().nullable(),
  })
  .openapi("TracerSession");

const editable = {
  description: Description.nullish(),
  extra: JsonObject.nullish(),
  default_dataset_id: z.uuid().nullish(),
  trace_tier: z.enum(["longlived", "shortlived"]).nullish(),
  end_time: isoTime.nullish(),
};

const CreateSchema = z
  .object({ id: ProjectId.optional(), name: z.string().trim().min(1).max(MAX_NAME_LENGTH), start_time: isoTime.optional(), reference_dataset_id: z.uuid().nullish(), ...editable })
  .openapi("TracerSessionCreate");
const UpdateSchema = z.object({ name: z.string().trim().min(1).max(MAX_NAME_LENGTH).optional(), ...editable }).openapi("TracerSessionUpdate");

const IdParam = z.object({ session_id: ProjectId });

const routes = {
  create: route({
    method: "post",
    path: "/api/v1/sessions",
    summary: "Create a tracing project (`upsert=true` returns and updates an existing one of that name)",
    request: { query: z.object({ upsert: z.enum(["true", "false"]).default("false") }), body: jsonBody(CreateSchema) },
    responses: { 200: jsonContent(SessionSchema, "The project"), ...conflictError },
  }),
  list: route({
    method: "get",
    path: "/api/v1/sessions",
    summary: "List tracing projects (an array, ordered by name)",
    request: {
      query: z.object({
        id: z.union([ProjectId, z.array(ProjectId)]).optional(),
        name: Name.optional(),
        name_contains: Name.optional(),
        limit: z.coerce.number().int().min(1).max(100).default(100),
        offset: z.coerce.number().int().min(0).default(0),
      }),
    },
    responses: { 200: jsonContent(z.array(SessionSchema), "Projects") },
  }),
  get: route({ method: "get", path: "/api/v1/sessions/{session_id}", summary: "Get a tracing project", request: { params: IdParam }, responses: { 200: jsonContent(SessionSchema, "The project"), ...notFoundError } }),
  update: route({
    method: "patch",
    path: "/api/v1/sessions/{session_id}",
    summary: "Update a tracing project",
    request: { params: IdParam, body: jsonBody(UpdateSchema) },
    responses: { 200: jsonContent(SessionSchema, "The project"), ...notFoundError, ...conflictError },
  }),
  delete: route({
    method: "delete",
    path: "/api/v1/sessions/{session_id}",
    summary: "Delete a tracing project",
    request: { params: IdParam },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...notFoundError },
  }),
};

export const sessionRoutes = createRouter()
  .openapi(routes.create, async (c) => {
    const body = c.req.valid("json");
    const upsert = c.req.valid("query").upsert === "true";
    return c.json(await createProject(database(c.env), c.get("principal").workspaceId, body, upsert), 200);
  })
  .openapi(routes.list, async (c) => {
    const query = c.req.valid("query");
    const ids = query.id === undefined ? undefined : Array.isArray(query.id) ? query.id : [query.id];
    const projects = await listProjects(database(c.env), c.get("principal").workspaceId, { ids, name: query.name, nameContains: query.name_contains, limit: query.limit, offset: query.offset });
    return c.json(projects, 200);
  })
  .openapi(routes.get, async (c) => c.json(await getProject(database(c.env), c.get("principal").workspaceId, c.req.valid("param").session_id), 200))
  .openapi(routes.update, async (c) => {
    const project = await updateProject(database(c.env), c.get("principal").workspaceId, c.req.valid("param").session_id, c.req.valid("json"));
    return c.json(project, 200);
  })
  .openapi(routes.delete, async (c) => {
    await deleteProject(database(c.env), c.get("principal").workspaceId, c.req.valid("param").session_id);
    return c.json({}, 200);
  });
