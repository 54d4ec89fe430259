import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/app-env.ts";
import { errorResponse } from "../../http/responses.ts";
import { createRouter } from "../../http/router.ts";
import { jsonBody, jsonContent, notFoundError } from "../../http/schemas.ts";
import { secured } from "../../http/secured.ts";
import {
  FeedbackCreateSchema,
  FeedbackIdParams,
  FeedbackListQuery,
  FeedbackSchema,
  FeedbackUpdateSchema,
} from "./schemas.ts";
import { FeedbackService } from "./service.ts";

/** `/api/v1/feedback`: feedback on traced runs, as the `langsmith` SDKs create, read and list it. */

const tags = ["Tracing feedback"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

const routes = {
  create: route({
    method: "post",
    path: "/api/v1/feedback",
    summary: "Create feedback on a run (or a project); an id this workspace already has is replaced",
    request: { body: jsonBody(FeedbackCreateSchema) },
    responses: {
      200: jsonContent(FeedbackSchema, "The feedback"),
      404: errorResponse("The session_id is not a project of this workspace"),
      422: errorResponse("Neither run_id nor session_id, or an invalid field"),
    },
  }),
  list: route({
    method: "get",
    path: "/api/v1/feedback",
    summary: "List feedback, newest first, by run, key, source type and project (offset paging)",
    request: { query: FeedbackListQuery },
    responses: { 200: jsonContent(z.array(FeedbackSchema), "Feedback") },
  }),
  get: route({
    method: "get",
    path: "/api/v1/feedback/{feedback_id}",
    summary: "Get a feedback",
    request: { params: FeedbackIdParams },
    responses: { 200: jsonContent(FeedbackSchema, "The feedback"), ...notFoundError },
  }),
  update: route({
    method: "patch",
    path: "/api/v1/feedback/{feedback_id}",
    summary: "Update a feedback's score, value, comment or correction (null leaves a field as it is)",
    request: { params: FeedbackIdParams, body: jsonBody(FeedbackUpdateSchema) },
    responses: { 200: jsonContent(FeedbackSchema, "The feedback"), ...notFoundError },
  }),
  delete: route({
    method: "delete",
    path: "/api/v1/feedback/{feedback_id}",
    summary: "Delete a feedback",
    request: { params: FeedbackIdParams },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...notFoundError },
  }),
};

const service = (c: Context<AppEnv>) => new FeedbackService(c.env, c.get("principal").workspaceId);

export const feedbackRoutes = createRouter()
  .openapi(routes.create, async (c) => c.json(await service(c).create(c.req.valid("json")), 200))
  .openapi(routes.list, async (c) => c.json(await service(c).list(c.req.valid("query")), 200))
  .openapi(routes.get, async (c) => c.json(await service(c).get(c.req.valid("param").feedback_id), 200))
  .openapi(routes.update, async (c) =>
    c.json(await service(c).update(c.req.valid("param").feedback_id, c.req.valid("json")), 200),
  )
  .openapi(routes.delete, async (c) => {
    await service(c).delete(c.req.valid("param").feedback_id);
    return c.json({}, 200);
  });
