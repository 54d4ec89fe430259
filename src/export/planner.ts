import { and, asc, eq, gte, lte } from "drizzle-orm";
import { chunked } from "../core/batches.ts";
import { isDomainError } from "../core/errors.ts";
import { QUEUE_SEND_BATCH } from "../core/limits.ts";
import { type Database, database } from "../db/client.ts";
import { type BulkExportRow, traceShards } from "../db/schema.ts";
import { log } from "../observability/log.ts";
import { type PlanEnv, planAllows, workspacePlans } from "../tenancy/plans.ts";
import { tracesDatabase } from "../tracing/directory.ts";
import type { WorkspaceBindings } from "../workspace/database.ts";
import type { FormatVersion } from "./columns.ts";
import { type destinationTarget, getDestination } from "./destinations.ts";
import { finishExportIfDone, partitionFolder } from "./manifest.ts";
import type { ParquetCompression } from "./parquet.ts";
import { EXPORT_RUN_MESSAGE, type ExportRunMessage, writerLimits } from "./partition-writer.ts";
import type { ExportInput } from "./schemas.ts";
import { createExport } from "./service.ts";
import {
  advanceSchedule,
  claimExport,
  exportsIn,
  exportsStartedBy,
  failExport,
  failSchedule,
  insertExportRuns,
  runningExportIds,
  scheduledExports,
  stalledRunIds,
  timeOutExportRows,
  touchExportRun,
  workspacesWithExportsIn,
} from "./store.ts";

/**
 * The export side of the minute tick. The tick only lists the workspaces with active exports and
 * enqueues one planning message per workspace (`exportTick`); each message plans its workspace, in
 * order: time out exports running for 24 h, spawn the due windows of scheduled exports, start
 * Created exports (one export run per project day, within the per-workspace concurrency limit) and
 * finish exports whose runs all ended (`planWorkspaceExports`). No invocation does every tenant's
 * work. `now` is the tick's scheduled time, so tests drive it with any clock.
 */

const DAY_MS = 86_400_000;
/** A run not touched for this long while its export runs has lost its queue message: send another. */
const STALLED_MS = 5 * 60_000;

/**
 * A UUID determined by `name` (SHA-256, shaped as a version-8 UUID): planning or spawning the same
 * thing twice yields the same id, so a retried or overlapping tick inserts nothing new.
 */
export async function stableId(name: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(name))).slice(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
const HOUR_MS = 3_600_000;
/** Runtime limit of an export: LangSmith gives each bulk export 24 hours. */
export const EXPORT_TIMEOUT_MS = 24 * HOUR_MS;
/** A spawned export starts this long after its window ends (LangSmith waits 10 minutes), so late runs can land. */
export const SPAWN_DELAY_MS = 10 * 60_000;
/** Catching up a schedule that starts far in the past spawns at most this many windows per tick. */
const MAX_SPAWNS_PER_TICK = 48;

type PlannerEnv = Parameters<typeof destinationTarget>[1] &
  Pick<Env, "DB" | "QUEUE"> &
  WorkspaceBindings &
  Partial<Pick<Env, "EXPORT_MAX_CONCURRENT_PER_WORKSPACE" | "EXPORT_MAX_RETRIES">> &
  PlanEnv;

/** A queue message: plan one workspace's exports at the tick's time. */
export const EXPORT_PLAN_MESSAGE = "export-plan";
export type ExportPlanMessage = { kind: typeof EXPORT_PLAN_MESSAGE; workspaceId: string; at: string };
/** A queue message: enqueue the planning of the workspaces after `after` (the tick's continuation). */
export const EXPORT_PLAN_PAGE_MESSAGE = "export-plan-page";
export type ExportPlanPageMessage = { kind: typeof EXPORT_PLAN_PAGE_MESSAGE; after: string; at: string };

/**
 * Workspaces one invocation enqueues planning for: one D1 query and 10 `sendBatch` calls of 100
 * messages (a Queues batch holds at most 100), far below the 1,000 subrequests of an invocation.
 * More continue in an `export-plan-page` message, so any number of workspaces is reached.
 */
export const EXPORT_PLAN_WORKSPACES_PER_INVOCATION = 1000;

/** Statuses of exports that still have planning to do. */
const ACTIVE = ["IntervalScheduled", "Created", "Running"];

/** The minute tick's export work: one planning message per workspace with active exports. */
export async function exportTick(env: PlannerEnv, now: Date): Promise<void> {
  await enqueueExportPlans(env, now, null);
}

/** Enqueues the planning of the workspaces with active exports after `after`, one page of them. */
export async function enqueueExportPlans(env: PlannerEnv, now: Date, after: string | null): Promise<number> {
  const db = database(env);
  const rows = await workspacesWithExportsIn(db, ACTIVE, after, EXPORT_PLAN_WORKSPACES_PER_INVOCATION);
  const at = now.toISOString();
  const messages = rows.map(({ workspaceId }) => ({
    body: { kind: EXPORT_PLAN_MESSAGE, workspaceId, at } satisfies ExportPlanMessage,
  }));
  for (const batch of chunked(messages, QUEUE_SEND_BATCH)) await env.QUEUE.sendBatch(batch);
  if (rows.length === EXPORT_PLAN_WORKSPACES_PER_INVOCATION)
    await env.QUEUE.send({
      kind: EXPORT_PLAN_PAGE_MESSAGE,
      after: rows.at(-1)!.workspaceId,
      at,
    } satisfies ExportPlanPageMessage);
  return rows.length;
}

/** Plans one workspace's exports (see the top of this file). */
export async function planWorkspaceExports(
  env: PlannerEnv,
  workspaceId: string,
  now: Date,
  fetcher?: typeof fetch,
): Promise<void> {
  const db = database(env);
  await timeOutExports(db, workspaceId, now);
  await spawnScheduledWindows(db, env, workspaceId, now);
  await startCreatedExports(db, env, workspaceId, now);
  await requeueStalledRuns(db, env, workspaceId, now);
  const running = await runningExportIds(db, workspaceId);
  const { maxRetries } = writerLimits(env);
  // Side by side: one slow bucket must not hold up the others (or the rest of the tick).
  await Promise.all(
    running.map(({ id }) =>
      finishExportIfDone(db, env, id, maxRetries, fetcher).catch((error) =>
        log.warn("finishing an export failed; retried next tick", { export_id: id, error: String(error) }),
      ),
    ),
  );
}

/**
 * A queue message can be lost for good (a consumer killed past the queue's retries). An unfinished
 * run of a running export that has not moved for a while gets a fresh message; a duplicate is
 * harmless, since the writer records each file with a compare-and-set.
 */
async function requeueStalledRuns(db: Database, env: PlannerEnv, workspaceId: string, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - STALLED_MS).toISOString();
  const stalled = await stalledRunIds(db, workspaceId, cutoff);
  for (const { id } of stalled) {
    await touchExportRun(db, id, now.toISOString());
    await env.QUEUE.send({ kind: EXPORT_RUN_MESSAGE, runId: id } satisfies ExportRunMessage);
    log.warn("export run stalled; sent it a new message", { run_id: id });
  }
}

async function timeOutExports(db: Database, workspaceId: string, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - EXPORT_TIMEOUT_MS).toISOString();
  const stale = await exportsStartedBy(db, workspaceId, cutoff);
  const at = now.toISOString();
  for (const { id } of stale) {
    await timeOutExportRows(db, id, "the export did not finish within 24 hours of starting", at);
    log.warn("bulk export timed out", { export_id: id });
  }
}

/**
 * Scheduled exports spawn contiguous windows `[w, w + interval)` from their start_time, each once
 * `now` is past the window's end plus the spawn delay. A cancelled schedule is no longer
 * IntervalScheduled, so it spawns nothing more; what it already spawned carries on. A schedule whose
 * organization's plan no longer has bulk export pauses: its windows wait, unspawned, and are caught
 * up (48 per tick) once the plan allows bulk export again.
 */
async function spawnScheduledWindows(
  db: Database,
  env: PlanEnv & WorkspaceBindings,
  workspaceId: string,
  now: Date,
): Promise<void> {
  const schedules = await scheduledExports(db, workspaceId);
  const planOf = await workspacePlans(
    db,
    env,
    schedules.map((schedule) => schedule.workspaceId),
  );
  for (const schedule of schedules) {
    if (!planAllows(planOf(schedule.workspaceId), "bulk_export")) continue;
    const interval = (schedule.intervalHours ?? 0) * HOUR_MS;
    if (interval <= 0 || !schedule.nextWindowStart) continue;
    let windowStart = Date.parse(schedule.nextWindowStart);
    for (
      let spawned = 0;
      spawned < MAX_SPAWNS_PER_TICK && windowStart + interval + SPAWN_DELAY_MS <= now.getTime();
      spawned++
    ) {
      const input: ExportInput = {
        bulk_export_destination_id: schedule.destinationId,
        session_id: schedule.sessionId,
        start_time: new Date(windowStart).toISOString(),
        end_time: new Date(windowStart + interval).toISOString(),
        filter: schedule.filter,
        export_fields: schedule.exportFields,
        format_version: schedule.formatVersion as FormatVersion,
        compression: schedule.compression as ParquetCompression,
      };
      const next = new Date(windowStart + interval).toISOString();
      try {
        // The child's id is fixed by the window, so a window spawned twice is one export.
        await createExport(
          db,
          tracesDatabase(env, schedule.workspaceId),
          schedule.workspaceId,
          input,
          { id: schedule.id },
          await stableId(`${schedule.id}/${input.start_time}`),
        );
      } catch (error) {
        // Only a destination or project that is gone ends the schedule; anything else is retried next tick.
        if (isDomainError(error, "not_found")) {
          await failSchedule(
            db,
            schedule.id,
            `spawning the window at ${input.start_time} failed: ${error.message}`,
            now.toISOString(),
          );
        } else {
          log.warn("spawning a scheduled export window failed; retried next tick", {
            export_id: schedule.id,
            window: input.start_time,
            error: String(error),
          });
        }
        break;
      }
      // Compare-and-set: a cancelled schedule, or one another tick advanced, stops here.
      if (!(await advanceSchedule(db, schedule.id, input.start_time, next, now.toISOString()))) break;
      windowStart += interval;
    }
  }
}

function concurrencyLimit(env: Partial<Pick<Env, "EXPORT_MAX_CONCURRENT_PER_WORKSPACE">>): number {
  const value = Number(env.EXPORT_MAX_CONCURRENT_PER_WORKSPACE);
  return Number.isInteger(value) && value > 0 ? value : 3;
}

/**
 * Starts Created exports, oldest first, while their workspace runs fewer than the limit: one export
 * run per UTC day of the window that holds runs of the project, then one queue message per run.
 */
async function startCreatedExports(db: Database, env: PlannerEnv, workspaceId: string, now: Date): Promise<void> {
  const created = await exportsIn(db, workspaceId, "Created");
  if (!created.length) return;
  const limit = concurrencyLimit(env);
  const running = new Map<string, number>();
  // Every running export here is of this workspace.
  running.set(workspaceId, (await runningExportIds(db, workspaceId)).length);
  for (const exported of created) {
    if ((running.get(exported.workspaceId) ?? 0) >= limit) continue;
    running.set(exported.workspaceId, (running.get(exported.workspaceId) ?? 0) + 1);
    try {
      await startExport(db, env, exported, now);
    } catch (error) {
      const at = now.toISOString();
      await failExport(
        db,
        exported.id,
        `starting the export failed: ${error instanceof Error ? error.message : String(error)}`,
        at,
      );
    }
  }
}

async function startExport(db: Database, env: PlannerEnv, exported: BulkExportRow, now: Date): Promise<void> {
  const end = exported.endTime!;
  // The first and last UTC day of [start, end): bounds on the shard index, never a list of every day.
  const firstDay = exported.startTime.slice(0, 10);
  const lastDay = new Date(Date.parse(end) - 1).toISOString().slice(0, 10);
  // The shard directory is in the workspace's traces partition.
  const days = await tracesDatabase(env, exported.workspaceId)
    .select({ day: traceShards.day })
    .from(traceShards)
    .where(
      and(
        eq(traceShards.workspaceId, exported.workspaceId),
        eq(traceShards.projectId, exported.sessionId),
        gte(traceShards.day, firstDay),
        lte(traceShards.day, lastDay),
      ),
    )
    .orderBy(asc(traceShards.day))
    .all();
  // Only the config: no credentials are decrypted to plan.
  const { config } = await getDestination(db, exported.workspaceId, exported.destinationId);
  const at = now.toISOString();
  const runs = await Promise.all(
    days.map(async ({ day }) => {
      const dayStart = `${day}T00:00:00.000Z`;
      const dayEnd = new Date(Date.parse(dayStart) + DAY_MS).toISOString();
      return {
        id: await stableId(`${exported.id}/${day}`),
        exportId: exported.id,
        workspaceId: exported.workspaceId,
        sessionId: exported.sessionId,
        day,
        startTime: exported.startTime > dayStart ? exported.startTime : dayStart,
        // biome-ignore lint/complexity/useMathMinMax: ISO timestamps, compared as strings.
        endTime: end < dayEnd ? end : dayEnd,
        status: "Created",
        retryNumber: 0,
        errors: {},
        rowsWritten: 0,
        bytesWritten: 0,
        files: [],
        cursor: null,
        prefix: partitionFolder(config, exported, day),
        createdAt: at,
        updatedAt: at,
        finishedAt: null,
      };
    }),
  );
  // The runs exist before the export is Running, so nothing can see a Running export without its
  // runs. Their ids are fixed by (export, day): planning again inserts nothing.
  await insertExportRuns(db, runs);
  const claimed = await claimExport(db, exported.id, at);
  // Only the tick that claimed the export sends its messages.
  if (!claimed || !runs.length) return;
  const messages = runs.map((run) => ({
    body: { kind: EXPORT_RUN_MESSAGE, runId: run.id } satisfies ExportRunMessage,
  }));
  for (const batch of chunked(messages, QUEUE_SEND_BATCH)) await env.QUEUE.sendBatch(batch);
}
