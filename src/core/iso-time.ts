/**
 * ISO-8601 times, parsed in one place. `Date.parse` stops at milliseconds, reads years 0–99 as
 * 1900–1999 and rolls an impossible date (2026-02-30) over into the next month; the SDKs send
 * microseconds and a run's times must survive to the export's nanoseconds. Tracing keeps microseconds
 * (tracing/times.ts), the export writes nanoseconds (export/columns.ts), both from this parser.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** A time as whole milliseconds since the epoch and the nanoseconds past them (0–999,999). */
export type IsoInstant = { millis: number; nanos: number };

/** Whether `text` has the shape of an ISO-8601 time, a real one or not (2026-02-30 has it). */
export const isIsoShaped = (text: string): boolean => ISO.test(text.trim());

/**
 * An ISO-8601 time (`T`, `t` or a space between date and time; `.` or `,` before up to nine fraction
 * digits; `Z`, `±HH`, `±HHMM` or `±HH:MM`, or no zone for UTC), or undefined when it is not one or
 * names no real time.
 */
export function parseIsoTime(text: string): IsoInstant | undefined {
  const match = ISO.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const check = new Date(utcMillis(year, month, day, hour, minute, second, 0));
  // A date that does not exist (2026-02-30) rolls over: refuse what does not come back unchanged.
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  const [offsetHours, offsetMinutes] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  // An offset is at most ±23:59 (ISO 8601); +25:00 names no zone.
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = match[9] === undefined ? 0 : (match[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  const fraction = (match[7] ?? "").padEnd(9, "0");
  return {
    millis: check.getTime() - offset * 60_000 + Number(fraction.slice(0, 3)),
    nanos: Number(fraction.slice(3)),
  };
}

/** Date.UTC, except that years 0–99 are those years, not 1900–1999. */
export function utcMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  milli: number,
): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, milli);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.setUTCHours(hour, minute, second, milli);
}
