import { log } from "../observability/log.ts";

/** A job run on every tick of the Worker's minute Cron Trigger. */
export type TickJob = (env: Env, scheduledTime: Date) => Promise<void>;

/** Runs every job; one failing job is logged and does not stop the others. */
export async function runTick(env: Env, scheduledTime: Date, jobs: Record<string, TickJob>): Promise<string[]> {
  const failed: string[] = [];
  await Promise.all(
    Object.entries(jobs).map(async ([name, job]) => {
      try {
        await job(env, scheduledTime);
      } catch (error) {
        failed.push(name);
        log.error("cron job failed", { job: name, scheduled_time: scheduledTime.toISOString(), error: String(error) });
      }
    }),
  );
  return failed;
}
