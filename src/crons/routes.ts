import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { nextRunDate, scheduleProblem, timezoneProblem } from "./schedule.ts";
import { countCrons, type CronFilter, deleteCron, getCron, insertCron, searchCrons, updateCron } from "./store.ts";
import { database } from "../db/client.ts";
import type { CronRow } from "../db/schema.ts";
import type { AppEnv } from "../http/app-env.ts";
import { notFound, invalid } from "../core/errors.ts";
import { withFilterLimit } from "../http/filter-limit.ts";
import { page } from "../http/pagination.ts";
import { createRouter } from "../http/router.ts";
import { Identifier, jsonBody, jsonContent, JsonFilter, notFoundError } from "../http/schemas.ts";
import { secured } from "../auth/secured.ts";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from "../core/limits.ts";
import type { Outcome, ThreadJson } from "../threads/types.ts";
import { assistantIdOf, assistantNotFound, resolveAssistant } from "../assistants/resolve.ts";
import { RunCreateSchema } from "../threads/runs/schemas.ts";
import { filterAsContainment } from "../auth/custom-auth.ts";
import { authFilter, guardMetadata, guardThread } from "../auth/guards.ts";
import { Id, ThreadIdParam } from "../threads/schemas.ts";
import { threadStub } from "../threads/client.ts";

const tags = ["Crons"];
const errors = { ...notFoundError };
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));
const JsonObject = z.record(z.string(), z.unknown());
const Schedule = z.string().min(1).max(MAX_NAME_LENGTH);

/** The run-create fields a cron stores and replays on every run. */
const PAYLOAD_FIELDS = [
  "input", "command", "config", "context", "webhook", "interrupt_before", "interrupt_after", "multitask_strategy",
  "stream_mode", "stream_subgraphs", "stream_resumable", "durability", "checkpoint_id", "checkpoint", "if_not_exists", "after_seconds", "metadata",
] as const;

const CronFields = {
  schedule: Schedule.describe("5-field cron expression"),
  timezone: Identifier.default("UTC").describe("IANA time zone"),
  end_time: z.iso.datetime({ offset: true }).nullish(),
  enabled: z.boolean().default(true),
  on_run_completed: z.enum(["delete", "keep"]).nullish().describe("Stateless crons: keep or delete each run's thread"),
  user_id: z.string().max(MAX_ID_LENGTH).nullish(),
};

const CronCreateSchema = RunCreateSchema.omit({ on_completion: true, on_disconnect: true }).extend(CronFields).openapi("CronCreate");

const CronPatchSchema = RunCreateSchema.omit({ assistant_id: true, on_completion: true, on_disconnect: true })
  .partial()
  .extend({
    schedule: Schedule.optional(),
    timezone: Identifier.optional(),
    end_time: z.iso.datetime({ offset: true }).nullish(),
    enabled: z.boolean().optional(),
    on_run_completed: z.enum(["delete", "keep"]).nullish(),
    user_id: z.string().max(MAX_ID_LENGTH).nullish(),
  })
  .openapi("CronPatch");

const CronSchema = z
  .object({
    cron_id: z.string(),
    assistant_id: z.string(),
    thread_id: z.string().nullable(),
    schedule: z.string(),
    timezone: z.string(),
    end_time: z.string().nullable(),
    enabled: z.boolean(),
    on_run_completed: z.enum(["delete", "keep"]).nullable(),
    user_id: z.string().nullable(),
    payload: JsonObject,
    metadata: JsonObject,
    next_run_date: z.string().nullable(),
    disabled_reason: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Cron");

const CronCountSchema = z
  .object({ assistant_id: z.string().max(MAX_ID_LENGTH).nullish(), thread_id: Id.nullish(), enabled: z.boolean().nullish(), metadata: JsonFilter.nullish() })
  .openapi("CronCountRequest");

const CronSearchSchema = CronCountSchema.extend({
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"]).default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  select: z.array(z.enum(CronSchema.keyof().options)).min(1).optional(),
}).openapi("CronSearchRequest");

const CronIdParam = z.object({ cron_id: Id });

const routes = {
  createForThread: route({ method: "post", path: "/threads/{thread_id}/runs/crons", summary: "Create a cron that runs on this thread", request: { params: ThreadIdParam, body: jsonBody(CronCreateSchema) }, responses: { 200: jsonContent(CronSchema, "The cron"), ...errors } }),
  create: route({ method: "post", path: "/runs/crons", summary: "Create a cron that starts a stateless run each time", request: { body: jsonBody(CronCreateSchema) }, responses: { 200: jsonContent(CronSchema, "The cron"), ...errors } }),
  search: route({ method: "post", path: "/runs/crons/search", summary: "Search crons", request: { body: jsonBody(CronSearchSchema) }, responses: { 200: jsonContent(z.array(CronSchema.partial()), "Crons"), ...errors } }),
  count: route({ method: "post", path: "/runs/crons/count", summary: "Count crons", request: { body: jsonBody(CronCountSchema) }, responses: { 200: jsonContent(z.number().int(), "Count"), ...errors } }),
  get: route({ method: "get", path: "/runs/crons/{cron_id}", summary: "Get a cron", request: { params: CronIdParam }, responses: { 200: jsonContent(CronSchema, "The cron"), ...errors } }),
  patch: route({ method: "patch", path: "/runs/crons/{cron_id}", summary: "Update a cron", request: { params: CronIdParam, body: jsonBody(CronPatchSchema) }, responses: { 200: jsonContent(CronSchema, "The cron"), ...errors } }),
  delete: route({ method: "delete", path: "/runs/crons/{cron_id}", summary: "Delete a cron", request: { params: CronIdParam }, responses: { 200: jsonContent(z.object({}), "Deleted"), ...errors } }),
};

type Cron = z.infer<typeof CronSchema>;

function cronJson(row: CronRow): Cron {
  return {
    cron_id: row.cronId,
    assistant_id: row.assistantId,
    thread_id: row.threadId,
    schedule: row.schedule,
    timezone: row.timezone,
    end_time: row.endTime,
    enabled: row.enabled,
    on_run_completed: row.onRunCompleted,
    user_id: row.userId,
    payload: row.payload,
    metadata: row.metadata,
    next_run_date: row.nextRunDate,
    disabled_reason: row.disabledReason,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const invalidField = (field: string, msg: string) => invalid([{ type: "value_error", loc: ["body", field], msg }]);

function checkSchedule(schedule: string, timezone: string): void {
  const problem = timezoneProblem(timezone);
  if (problem) throw invalidField("timezone", problem);
  const scheduleIssue = scheduleProblem(schedule, timezone);
  if (scheduleIssue) throw invalidField("schedule", scheduleIssue);
}

function payloadOf(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(PAYLOAD_FIELDS.filter((field) => body[field] !== undefined).map((field) => [field, body[field]]));
}

async function create(c: Context<AppEnv>, body: z.infer<typeof CronCreateSchema>, threadId: string | null) {
  const { workspaceId, keyId } = c.get("principal");
  checkSchedule(body.schedule, body.timezone);
  if (threadId) await guardThread(c, threadId, "threads:read");
  const value = { ...body, thread_id: threadId, metadata: body.metadata ?? {} };
  await authFilter(c, "crons:create", value);
  // Its runs will use the assistant: a user may schedule only one their `assistants:read` filter lets them see.
  const user = c.get("user");
  const use = user ? { user, event: "assistants:read" as const, value: { assistant_id: assistantIdOf(body.assistant_id) } } : undefined;
  const assistant = await resolveAssistant(c.env, workspaceId, body.assistant_id, use);
  if (!assistant) throw notFound(assistantNotFound(body.assistant_id));
  if (threadId) {
    const thread = (await threadStub(c.env, workspaceId, threadId).get()) as Outcome<ThreadJson>;
    if (!thread.ok) throw notFound(`Thread with ID ${threadId} not found`);
  }
  const now = new Date();
  const next = nextRunDate(body.schedule, body.timezone, now);
  const row = await insertCron(database(c.env), {
    workspaceId,
    cronId: crypto.randomUUID(),
    assistantId: assistant.assistantId,
    threadId,
    schedule: body.schedule,
    timezone: body.timezone,
    payload: payloadOf(body),
    metadata: value.metadata,
    enabled: body.enabled,
    onRunCompleted: threadId ? null : (body.on_run_completed ?? "delete"),
    endTime: body.end_time ? new Date(body.end_time).toISOString() : null,
    userId: body.user_id ?? keyId,
    nextRunDate: body.enabled ? next : null,
    disabledReason: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
  return c.json(cronJson(row), 200);
}

/** The cron, if it exists and the `event` handler's filter lets this user see it; else 404. */
async function cronOr404(c: Context<AppEnv>, cronId: string, event = "crons:read", value: Record<string, unknown> = {}): Promise<CronRow> {
  const row = await getCron(database(c.env), c.get("principal").workspaceId, cronId);
  if (!row) throw notFound(`Cron ${cronId} not found`);
  await guardMetadata(c, event, Object.assign(value, { cron_id: cronId }), row.metadata, `Cron ${cronId} not found`);
  return row;
}

/** The conditions shared by search and count: the body's fields and the auth handler's filter. */
async function cronFilter(
  c: Context<AppEnv>,
  body: { assistant_id?: string | null; thread_id?: string | null; enabled?: boolean | null; metadata?: Record<string, unknown> | null },
): Promise<CronFilter> {
  return {
    assistantId: body.assistant_id ? assistantIdOf(body.assistant_id) : undefined,
    threadId: body.thread_id ?? undefined,
    enabled: body.enabled ?? undefined,
    metadata: body.metadata ?? undefined,
    authMetadata: filterAsContainment(await authFilter(c, "crons:search", { ...body })),
  };
}

export const cronRoutes = createRouter()
  .openapi(routes.createForThread, (c) => create(c, c.req.valid("json"), c.req.valid("param").thread_id))
  .openapi(routes.create, (c) => create(c, c.req.valid("json"), null))
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const filter = await cronFilter(c, body);
    const { rows, total } = await withFilterLimit(() =>
      searchCrons(database(c.env), c.get("principal").workspaceId, {
        ...filter,
        limit: body.limit,
        offset: body.offset,
        sortBy: body.sort_by,
        sortOrder: body.sort_order,
      }),
    );
    return c.json(page(c, rows.map(cronJson), total, body.offset, body.select), 200);
  })
  .openapi(routes.count, async (c) => {
    const body = c.req.valid("json");
    const total = await withFilterLimit(async () => countCrons(database(c.env), c.get("principal").workspaceId, await cronFilter(c, body)));
    return c.json(total, 200);
  })
  .openapi(routes.get, async (c) => c.json(cronJson(await cronOr404(c, c.req.valid("param").cron_id)), 200))
  .openapi(routes.patch, async (c) => {
    const body = c.req.valid("json");
    const value = { ...body, metadata: body.metadata };
    const current = await cronOr404(c, c.req.valid("param").cron_id, "crons:update", value);
    const schedule = body.schedule ?? current.schedule;
    const timezone = body.timezone ?? current.timezone;
    checkSchedule(schedule, timezone);
    const enabled = body.enabled ?? current.enabled;
    const rescheduled = body.schedule !== undefined || body.timezone !== undefined || (enabled && !current.enabled);
    const now = new Date();
    const row = await updateCron(database(c.env), c.get("principal").workspaceId, current.cronId, {
      schedule,
      timezone,
      payload: { ...current.payload, ...payloadOf(body) },
      metadata: value.metadata ? { ...current.metadata, ...value.metadata } : current.metadata,
      enabled,
      disabledReason: enabled ? null : current.disabledReason,
      endTime: body.end_time === undefined ? current.endTime : body.end_time ? new Date(body.end_time).toISOString() : null,
      onRunCompleted: current.threadId ? null : (body.on_run_completed ?? current.onRunCompleted),
      userId: body.user_id === undefined ? current.userId : body.user_id,
      nextRunDate: !enabled ? null : rescheduled || !current.nextRunDate ? nextRunDate(schedule, timezone, now) : current.nextRunDate,
      updatedAt: now.toISOString(),
    });
    return c.json(cronJson(row ?? current), 200);
  })
  .openapi(routes.delete, async (c) => {
    const { cron_id } = c.req.valid("param");
    await cronOr404(c, cron_id, "crons:delete");
    if (!(await deleteCron(database(c.env), c.get("principal").workspaceId, cron_id))) throw notFound(`Cron ${cron_id} not found`);
    return c.json({}, 200);
  });
