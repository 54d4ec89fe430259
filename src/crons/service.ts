import { assistantIdOf, assistantNotFound, resolveAssistant } from "../assistants/resolve.ts";
import { mapInBatches } from "../core/batches.ts";
import { conflict, invalid, isDomainError, notFound } from "../core/errors.ts";
import { checkJsonSizes, rowBound } from "../core/json-size.ts";
import {
  cronFiringsPerAlarm,
  MAX_CRON_PAYLOAD_BYTES,
  MAX_JSON_FIELD_BYTES,
  WORKER_CONNECTIONS,
} from "../core/limits.ts";
import { database } from "../db/client.ts";
import type { CronRow } from "../db/schema.ts";
import type { AuthUser } from "../deployment/custom-auth.ts";
import { log } from "../observability/log.ts";
import { planAllows, workspacePlans } from "../tenancy/plans.ts";
import { threadStub } from "../threads/client.ts";
import { planRun, startRun } from "../threads/runs/service.ts";
import type { WorkspaceDatabase } from "../workspace/database.ts";
import type { PartitionAlarm } from "../workspace/workspace-do.ts";
import { nextRunDate, scheduleProblem, timezoneProblem } from "./schedule.ts";
import { type Cron, type CronCount, type CronCreate, type CronPatch, type CronPayload, payloadOf } from "./schemas.ts";
import {
  armTime,
  type CronFilter,
  type CronSearch,
  claimCron,
  countCrons,
  cronsDatabase,
  type DueCron,
  deleteCron as deleteCronRow,
  disableCron,
  dueCrons,
  getCron,
  insertCron,
  nextDue,
  replaceCron,
  searchCrons as searchCronRows,
} from "./store.ts";

/**
 * Crons: scheduled runs. Their CRUD (the caller authorizes first, at the edge), and the alarm of each
 * workspace's crons partition, which starts the due ones through the same run creation as the API.
 * Every write that schedules a run arms that alarm at the run's time.
 */

export function cronJson(row: CronRow): Cron {
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

/** Refuses (invalid) a timezone or schedule that cannot be used. */
export function checkSchedule(schedule: string, timezone: string): void {
  const problem = timezoneProblem(timezone);
  if (problem) throw invalidField("timezone", problem);
  const scheduleIssue = scheduleProblem(schedule, timezone);
  if (scheduleIssue) throw invalidField("schedule", scheduleIssue);
}

/** Who creates a cron: its workspace, its default user (an API key's id) and the custom-auth user. */
export interface CronCaller {
  workspaceId: string;
  callerId: string;
  user?: AuthUser;
}

/**
 * Creates a cron on `threadId` (or one starting stateless runs). The schedule is already checked;
 * `metadata` is the cron's own, as the authorization handler left it (the payload keeps the request's).
 */
export async function createCron(
  env: Env,
  caller: CronCaller,
  request: { threadId: string | null; body: CronCreate; metadata: Record<string, unknown> },
): Promise<Cron> {
  const { threadId, body } = request;
  const { workspaceId, user } = caller;
  // Its runs will use the assistant: a user may schedule only one their `assistants:read` filter lets them see.
  const use = user
    ? { user, event: "assistants:read" as const, value: { assistant_id: assistantIdOf(body.assistant_id) } }
    : undefined;
  const assistant = await resolveAssistant(env, workspaceId, body.assistant_id, use);
  if (!assistant) throw notFound(assistantNotFound(body.assistant_id));
  if (threadId) {
    const thread = await threadStub(env, workspaceId, threadId).get();
    if (!thread.ok) throw notFound(`Thread with ID ${threadId} not found`);
  }
  const now = new Date();
  const next = nextRunDate(body.schedule, body.timezone, now);
  const payload = payloadOf(body);
  checkCronSizes(env, payload, request.metadata);
  const nextRun = body.enabled ? next : null;
  const row = await insertCron(cronsDatabase(env, workspaceId, armTime({ nextRunDate: nextRun })), {
    workspaceId,
    cronId: crypto.randomUUID(),
    assistantId: assistant.assistantId,
    threadId,
    schedule: body.schedule,
    timezone: body.timezone,
    payload,
    metadata: request.metadata,
    enabled: body.enabled,
    onRunCompleted: threadId ? null : (body.on_run_completed ?? "delete"),
    endTime: body.end_time ? new Date(body.end_time).toISOString() : null,
    userId: body.user_id ?? caller.callerId,
    nextRunDate: nextRun,
    disabledReason: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
  return cronJson(row);
}

/** Refuses (invalid) a payload or metadata too large for the cron's row, as stored (after a patch's merge). */
function checkCronSizes(env: Env, payload: CronPayload, metadata: Record<string, unknown>): void {
  const fieldLimit = rowBound(env, MAX_JSON_FIELD_BYTES);
  // The fields each run is created with get the run's own bounds (see `planRun`).
  checkJsonSizes({ metadata: payload.metadata, config: payload.config, context: payload.context }, fieldLimit);
  checkJsonSizes({ payload }, rowBound(env, MAX_CRON_PAYLOAD_BYTES));
  checkJsonSizes({ metadata }, fieldLimit);
}

const cronNotFound = (cronId: string) => `Cron ${cronId} not found`;

/** The workspace's cron, or a not-found error. */
export async function findCron(env: Env, workspaceId: string, cronId: string): Promise<CronRow> {
  const row = await getCron(cronsDatabase(env, workspaceId), workspaceId, cronId);
  if (!row) throw notFound(cronNotFound(cronId));
  return row;
}

/** Concurrent patches each get a turn: every round at least one of them lands. */
const MAX_PATCH_ATTEMPTS = 32;

/**
 * Applies a patch to `current`: a new schedule, or re-enabling, plans the next run from now.
 * `metadata` (as the authorization handler left it) is merged into the cron's. The row is
 * compared-and-set, and the merge redone on the fresh row when a concurrent write landed first,
 * so parallel patches all keep their keys.
 */
export async function updateCron(
  env: Env,
  first: CronRow,
  body: CronPatch,
  metadata: Record<string, unknown> | null | undefined,
): Promise<Cron> {
  const db = cronsDatabase(env, first.workspaceId);
  let current: CronRow | undefined = first;
  for (let attempt = 0; attempt < MAX_PATCH_ATTEMPTS && current; attempt++) {
    const next = patched(current, body, metadata);
    checkCronSizes(env, next.payload, next.metadata);
    // A new schedule or a re-enable arms the alarm at the next run, in the same call.
    const row = await replaceCron(cronsDatabase(env, first.workspaceId, armTime(next)), current, next);
    if (row) return cronJson(row);
    current = await getCron(db, first.workspaceId, first.cronId);
  }
  if (!current) throw notFound(cronNotFound(first.cronId));
  throw conflict(`Cron ${first.cronId} changed concurrently too often; retry the update`);
}

/** The row `current` becomes under `body`; its updated_at always advances, so a compare-and-set on it sees every patch. */
function patched(current: CronRow, body: CronPatch, metadata: Record<string, unknown> | null | undefined) {
  const schedule = body.schedule ?? current.schedule;
  const timezone = body.timezone ?? current.timezone;
  checkSchedule(schedule, timezone);
  const enabled = body.enabled ?? current.enabled;
  const rescheduled = body.schedule !== undefined || body.timezone !== undefined || (enabled && !current.enabled);
  const now = new Date(Math.max(Date.now(), Date.parse(current.updatedAt) + 1));
  return {
    schedule,
    timezone,
    payload: { ...current.payload, ...payloadOf(body) },
    metadata: metadata ? { ...current.metadata, ...metadata } : current.metadata,
    enabled,
    disabledReason: enabled ? null : current.disabledReason,
    endTime:
      body.end_time === undefined ? current.endTime : body.end_time ? new Date(body.end_time).toISOString() : null,
    onRunCompleted: current.threadId ? null : (body.on_run_completed ?? current.onRunCompleted),
    userId: body.user_id === undefined ? current.userId : body.user_id,
    nextRunDate: !enabled
      ? null
      : rescheduled || !current.nextRunDate
        ? nextRunDate(schedule, timezone, now)
        : current.nextRunDate,
    updatedAt: now.toISOString(),
  };
}

export async function deleteCron(env: Env, workspaceId: string, cronId: string): Promise<void> {
  if (!(await deleteCronRow(cronsDatabase(env, workspaceId), workspaceId, cronId)))
    throw notFound(cronNotFound(cronId));
}

/** The conditions shared by search and count: the request's fields and the auth handler's filter (as containment). */
export function cronFilter(body: CronCount, authMetadata: Record<string, unknown> | undefined): CronFilter {
  return {
    assistantId: body.assistant_id ? assistantIdOf(body.assistant_id) : undefined,
    threadId: body.thread_id ?? undefined,
    enabled: body.enabled ?? undefined,
    metadata: body.metadata ?? undefined,
    authMetadata,
  };
}

export async function searchCrons(
  env: Env,
  workspaceId: string,
  search: CronSearch,
): Promise<{ crons: Cron[]; total: number }> {
  const { rows, total } = await searchCronRows(cronsDatabase(env, workspaceId), workspaceId, search);
  return { crons: rows.map(cronJson), total };
}

export function countCronsOf(env: Env, workspaceId: string, filter: CronFilter): Promise<number> {
  return countCrons(cronsDatabase(env, workspaceId), workspaceId, filter);
}

/**
 * How early a firing may come and still start the occurrence it was meant for (an alarm or a clock
 * a moment ahead). Anything further ahead waits for its own time.
 */
export const EARLY_TRIGGER_TOLERANCE_MS = 5_000;

/** What one pass over a workspace's due crons did, and when the next should run (epoch ms), or null. */
export interface CronFiring {
  started: number;
  next: number | null;
}

/**
 * Starts every cron of the workspace whose occurrence has come (at or before `now`, or within
 * EARLY_TRIGGER_TOLERANCE_MS after it), once, at most `cronFiringsPerAlarm(env)` of them; the answer's
 * `next` is now when more are due (the alarm runs again at once), else the soonest next run. A due
 * cron is claimed first (its next run moved past the occurrence, compare-and-set), so overlapping or
 * retried passes never start the same occurrence twice, nor the next one ahead of its time. Missed
 * occurrences (the object was unreachable) are not replayed: one run, then the schedule continues
 * from now. The cron of an organization whose plan no longer has crons stays as it is but starts
 * nothing: its occurrences pass unrun until the plan allows crons again.
 */
export async function fireDueCrons(
  env: Env,
  db: WorkspaceDatabase,
  workspaceId: string,
  now: Date,
): Promise<CronFiring> {
  const horizon = new Date(now.getTime() + EARLY_TRIGGER_TOLERANCE_MS).toISOString();
  const limit = cronFiringsPerAlarm(env);
  const due = await dueCrons(db, horizon, limit + 1);
  const firing = due.slice(0, limit);
  let started = 0;
  if (firing.length) {
    const plan = (await workspacePlans(database(env), env, [workspaceId]))(workspaceId);
    const allowed = planAllows(plan, "crons");
    const outcomes = await mapInBatches(firing, WORKER_CONNECTIONS, (cron) =>
      fireCron(env, db, workspaceId, cron, now, allowed),
    );
    started += outcomes.filter(Boolean).length;
  }
  return { started, next: due.length > limit ? Date.now() : await nextDue(db) };
}

/** Fires one due cron (see fireDueCrons); true when a run was started. */
async function fireCron(
  env: Env,
  db: WorkspaceDatabase,
  workspaceId: string,
  due: DueCron,
  now: Date,
  allowed: boolean,
): Promise<boolean> {
  const cron = await getCron(db, workspaceId, due.cronId);
  // Patched, disabled or deleted since the scan: that write decided its next run.
  if (!cron?.enabled || cron.nextRunDate !== due.nextRunDate) return false;
  const at = new Date().toISOString();
  const occurrence = due.nextRunDate;
  if (cron.endTime && occurrence > cron.endTime) {
    await disableCron(db, cron.cronId, `end_time ${cron.endTime} passed`, at);
    return false;
  }
  const from = new Date(Math.max(Date.parse(occurrence), now.getTime()));
  let next: string;
  try {
    next = nextRunDate(cron.schedule, cron.timezone, from);
  } catch (error) {
    // A schedule that no longer evaluates would keep the alarm failing for every cron of the workspace.
    await disableCron(db, cron.cronId, `schedule cannot be evaluated: ${String(error)}`, at);
    return false;
  }
  if (!(await claimCron(db, cron.cronId, occurrence, next, at))) return false;
  // Claimed all the same, so the occurrence passes instead of staying due.
  if (!allowed) return false;
  const problem = await startCronRun(env, cron);
  if (problem) {
    log.warn("cron disabled", { cron_id: cron.cronId, reason: problem });
    await disableCron(db, cron.cronId, problem, at);
    return false;
  }
  return true;
}

/** The crons partition's alarm: fires the workspace's due crons, and comes back for the next. */
export const cronAlarm: PartitionAlarm = async (env, partition, db) =>
  (await fireDueCrons(env, db, partition.workspaceId, new Date())).next;

/** Starts one run of the cron through the API's own run creation. Returns why the cron cannot run, if so. */
async function startCronRun(env: Env, cron: CronRow): Promise<string | null> {
  const run = {
    ...cron.payload,
    assistant_id: cron.assistantId,
    metadata: { ...(cron.payload.metadata ?? {}), cron_id: cron.cronId },
    ...(cron.threadId ? {} : { on_completion: cron.onRunCompleted ?? "delete" }),
  };
  const caller = { workspaceId: cron.workspaceId, callerId: cron.userId ?? "cron" };
  try {
    const plan = await planRun(env, { caller, threadId: cron.threadId ?? undefined, run });
    if (!plan.ok) return `assistant ${cron.assistantId} no longer exists`;
    try {
      await startRun(env, plan.input);
    } catch (error) {
      // Starting a planned run misses nothing but its thread; anything else (a busy thread) skips this occurrence.
      if (isDomainError(error, "not_found")) return `thread ${cron.threadId} no longer exists`;
      if (!isDomainError(error)) throw error;
      log.warn("cron run not started", { cron_id: cron.cronId, kind: error.kind, detail: error.message });
    }
    return null;
  } catch (error) {
    log.error("cron run failed to start", { cron_id: cron.cronId, error: String(error) });
    return null;
  }
}
