import type { Principal } from "../auth/principal.ts";
import { runInput } from "../threads/runs/service.ts";
import type { RunCreateBody } from "../threads/runs/schemas.ts";
import { threadStub } from "../threads/client.ts";
import { database } from "../db/client.ts";
import type { CronRow } from "../db/schema.ts";
import { isDomainError } from "../core/errors.ts";
import { log } from "../observability/log.ts";
import { nextRunDate } from "./schedule.ts";
import { claimCron, disableCron, dueCrons } from "./store.ts";

/**
 * How early a trigger may come and still start the occurrence it was meant for (a Cron Trigger can
 * fire a moment before its minute). Anything further ahead waits for the next tick.
 */
export const EARLY_TRIGGER_TOLERANCE_MS = 5_000;
const BATCH = 100;

/**
 * The minute tick: starts every cron whose occurrence has come (at or before the tick time, or within
 * EARLY_TRIGGER_TOLERANCE_MS after it), once. A due cron is claimed first (its next run moved past
 * the occurrence, compare-and-set), so overlapping or retried ticks never start the same occurrence
 * twice, nor the next one ahead of its time. Missed occurrences (downtime) are not replayed: one run,
 * then the schedule continues from now.
 */
export async function fireDueCrons(env: Env, tickTime: Date): Promise<number> {
  const db = database(env);
  const horizon = new Date(tickTime.getTime() + EARLY_TRIGGER_TOLERANCE_MS).toISOString();
  let started = 0;
  for (const cron of await dueCrons(db, horizon, BATCH)) {
    const at = new Date().toISOString();
    const occurrence = cron.nextRunDate!;
    if (cron.endTime && occurrence > cron.endTime) {
      await disableCron(db, cron.cronId, `end_time ${cron.endTime} passed`, at);
      continue;
    }
    const from = new Date(Math.max(Date.parse(occurrence), tickTime.getTime()));
    if (!(await claimCron(db, cron.cronId, occurrence, nextRunDate(cron.schedule, cron.timezone, from), at))) continue;
    const problem = await startRun(env, cron);
    if (problem) {
      log.warn("cron disabled", { cron_id: cron.cronId, reason: problem });
      await disableCron(db, cron.cronId, problem, at);
      continue;
    }
    started += 1;
  }
  return started;
}

/** Starts one run of the cron through the runs API's own path. Returns why the cron cannot run, if so. */
async function startRun(env: Env, cron: CronRow): Promise<string | null> {
  const principal: Principal = {
    keyId: cron.userId ?? "cron",
    organizationId: "",
    workspaceId: cron.workspaceId,
    keyWorkspaceId: cron.workspaceId,
    role: "member",
  };
  const body = {
    ...cron.payload,
    assistant_id: cron.assistantId,
    metadata: { ...((cron.payload.metadata as Record<string, unknown> | undefined) ?? {}), cron_id: cron.cronId },
    ...(cron.threadId ? {} : { on_completion: cron.onRunCompleted ?? "delete" }),
  } as RunCreateBody;
  try {
    const input = await runInput(env, principal, body, { threadId: cron.threadId ?? undefined, headers: new Headers() });
    const outcome = await threadStub(env, cron.workspaceId, input.threadId).createRun(input);
    if (!outcome.ok) {
      if (outcome.kind === "not_found") return `thread ${cron.threadId} no longer exists`;
      log.warn("cron run not started", { cron_id: cron.cronId, kind: outcome.kind, detail: outcome.detail });
    }
    return null;
  } catch (error) {
    if (isDomainError(error, "not_found")) return `assistant ${cron.assistantId} no longer exists`;
    log.error("cron run failed to start", { cron_id: cron.cronId, error: String(error) });
    return null;
  }
}
