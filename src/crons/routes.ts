import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authFilter, guardMetadata, guardThread } from "../auth/guards.ts";
import { requirePlan } from "../auth/require-plan.ts";
import { filterAsContainment } from "../core/auth-filter.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import type { CronRow } from "../db/schema.ts";
import type { AppEnv } from "../http/app-env.ts";
import { page } from "../http/pagination.ts";
import { createRouter } from "../http/router.ts";
import { conflictError, jsonBody, jsonContent, notFoundError } from "../http/schemas.ts";
import { securedRoute, securedRoutes } from "../http/secured.ts";
import { ThreadIdParam } from "../threads/schemas.ts";
import {
  type CronCount,
  CronCountSchema,
  type CronCreate,
  CronCreateSchema,
  CronIdParam,
  CronPatchSchema,
  CronSchema,
  CronSearchSchema,
} from "./schemas.ts";
import {
  checkSchedule,
  countCronsOf,
  createCron,
  cronFilter,
  cronJson,
  deleteCron,
  findCron,
  searchCrons,
  updateCron,
} from "./service.ts";

const tags = ["Crons"];
const errors = { ...notFoundError };
const route = securedRoutes(tags);
/** Creating a cron needs a plan with crons (403 otherwise); reading, changing and deleting do not. */
const gatedRoute = <R extends Parameters<typeof securedRoute>[0]>(config: R) =>
  securedRoute({ tags, ...config }, requirePlan("crons"));

const routes = {
  createForThread: gatedRoute({
    method: "post",
    path: "/threads/{thread_id}/runs/crons",
    summary: "Create a cron that runs on this thread",
    request: { params: ThreadIdParam, body: jsonBody(CronCreateSchema) },
    responses: { 200: jsonContent(CronSchema, "The cron"), ...errors },
  }),
  create: gatedRoute({
    method: "post",
    path: "/runs/crons",
    summary: "Create a cron that starts a stateless run each time",
    request: { body: jsonBody(CronCreateSchema) },
    responses: { 200: jsonContent(CronSchema, "The cron"), ...errors },
  }),
  search: route({
    method: "post",
    path: "/runs/crons/search",
    summary: "Search crons",
    request: { body: jsonBody(CronSearchSchema) },
    responses: { 200: jsonContent(z.array(CronSchema.partial()), "Crons"), ...errors },
  }),
  count: route({
    method: "post",
    path: "/runs/crons/count",
    summary: "Count crons",
    request: { body: jsonBody(CronCountSchema) },
    responses: { 200: jsonContent(z.number().int(), "Count"), ...errors },
  }),
  get: route({
    method: "get",
    path: "/runs/crons/{cron_id}",
    summary: "Get a cron",
    request: { params: CronIdParam },
    responses: { 200: jsonContent(CronSchema, "The cron"), ...errors },
  }),
  patch: route({
    method: "patch",
    path: "/runs/crons/{cron_id}",
    summary: "Update a cron",
    request: { params: CronIdParam, body: jsonBody(CronPatchSchema) },
    responses: { 200: jsonContent(CronSchema, "The cron"), ...errors, ...conflictError },
  }),
  delete: route({
    method: "delete",
    path: "/runs/crons/{cron_id}",
    summary: "Delete a cron",
    request: { params: CronIdParam },
    responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors },
  }),
};

type Ctx = Context<AppEnv>;

async function create(c: Ctx, body: CronCreate, threadId: string | null) {
  const { workspaceId, keyId } = c.get("principal");
  checkSchedule(body.schedule, body.timezone);
  if (threadId) await guardThread(c, threadId, "threads:read");
  const value = { ...body, thread_id: threadId, metadata: body.metadata ?? {} };
  await authFilter(c, "crons:create", value);
  const cron = await createCron(
    c.env,
    { workspaceId, callerId: keyId, user: c.get("user") },
    { threadId, body, metadata: value.metadata },
  );
  return c.json(cron, 200);
}

/** The cron, if it exists and the `event` handler's filter lets this user see it; else 404. */
async function cronOr404(
  c: Ctx,
  cronId: string,
  event = "crons:read",
  value: Record<string, unknown> = {},
): Promise<CronRow> {
  const row = await findCron(c.env, c.get("principal").workspaceId, cronId);
  await guardMetadata(c, event, Object.assign(value, { cron_id: cronId }), row.metadata, `Cron ${cronId} not found`);
  return row;
}

/** Search and count conditions: the body's, and the auth handler's filter. */
async function filterOf(c: Ctx, body: CronCount) {
  return cronFilter(body, filterAsContainment(await authFilter(c, "crons:search", { ...body })));
}

export const cronRoutes = createRouter()
  .openapi(routes.createForThread, (c) => create(c, c.req.valid("json"), c.req.valid("param").thread_id))
  .openapi(routes.create, (c) => create(c, c.req.valid("json"), null))
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const filter = await filterOf(c, body);
    const { crons, total } = await withFilterLimit(() =>
      searchCrons(c.env, c.get("principal").workspaceId, {
        ...filter,
        limit: body.limit,
        offset: body.offset,
        sortBy: body.sort_by,
        sortOrder: body.sort_order,
      }),
    );
    return c.json(page(c, crons, total, body.offset, body.select), 200);
  })
  .openapi(routes.count, async (c) => {
    const body = c.req.valid("json");
    const total = await withFilterLimit(async () =>
      countCronsOf(c.env, c.get("principal").workspaceId, await filterOf(c, body)),
    );
    return c.json(total, 200);
  })
  .openapi(routes.get, async (c) => c.json(cronJson(await cronOr404(c, c.req.valid("param").cron_id)), 200))
  .openapi(routes.patch, async (c) => {
    const body = c.req.valid("json");
    const value = { ...body, metadata: body.metadata };
    const current = await cronOr404(c, c.req.valid("param").cron_id, "crons:update", value);
    return c.json(await updateCron(c.env, current, body, value.metadata), 200);
  })
  .openapi(routes.delete, async (c) => {
    const { cron_id } = c.req.valid("param");
    await cronOr404(c, cron_id, "crons:delete");
    await deleteCron(c.env, c.get("principal").workspaceId, cron_id);
    return c.json({}, 200);
  });
