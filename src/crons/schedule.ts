import { CronExpressionParser } from "cron-parser";

/** Why a schedule cannot be used, or null: standard 5-field cron expressions only. */
export function scheduleProblem(schedule: string, timezone: string): string | null {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5)
    return `schedule must have 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}: "${schedule}"`;
  if (timezoneProblem(timezone)) return timezoneProblem(timezone);
  try {
    CronExpressionParser.parse(schedule, { tz: timezone, strict: false });
    return null;
  } catch (error) {
    return `Invalid schedule "${schedule}": ${(error as Error).message}`;
  }
}

export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return null;
  } catch {
    return `Unknown timezone "${timezone}": use an IANA name such as "UTC" or "Europe/Paris"`;
  }
}

/** The first time the schedule fires strictly after `after`, as ISO-8601 UTC. */
export function nextRunDate(schedule: string, timezone: string, after: Date): string {
  return CronExpressionParser.parse(schedule, { tz: timezone, currentDate: after }).next().toDate().toISOString();
}
