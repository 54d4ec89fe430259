/**
 * Run times with microseconds, end to end. The SDKs send `…T10:00:00.123456Z` (JS pads its
 * milliseconds with a per-parent counter, Python has real microseconds), and `dotted_order` carries
 * the same six digits; `Date` stops at milliseconds, so times are parsed and printed here instead.
 *
 * The stored form is `YYYY-MM-DDTHH:MM:SS.ffffffZ`, always UTC and always 27 characters, so text
 * order is time order in the shards' SQL (bounds and filter times are normalised to it too).
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** Microseconds since the epoch of an ISO-8601 time (no zone means UTC), or undefined. Digits past the sixth are dropped. */
export function epochMicros(text: string): number | undefined {
  const match = ISO.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const millis = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 2026-02-30 over to March: refuse what does not come back unchanged.
  const check = new Date(millis);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    return undefined;
  const offsetMinutes =
    match[9] === undefined ? 0 : (match[9] === "-" ? -1 : 1) * (Number(match[10]) * 60 + Number(match[11] ?? 0));
  const fraction = Number((match[7] ?? "").slice(0, 6).padEnd(6, "0"));
  return (millis - offsetMinutes * 60_000) * 1000 + fraction;
}

/** The stored form of a time given in microseconds since the epoch. */
export function formatMicros(micros: number): string {
  const millis = Math.floor(micros / 1000);
  const extra = micros - millis * 1000;
  // toISOString() ends in `.mmmZ`: three more digits go before the Z.
  return `${new Date(millis).toISOString().slice(0, -1)}${String(extra).padStart(3, "0")}Z`;
}

/**
 * A client's time in the stored form: ISO-8601 text with any number of fraction digits and any zone,
 * or epoch milliseconds (the JS SDK's `end_time`, possibly fractional). Other text `Date` can read
 * keeps millisecond precision. Undefined when it is not a time.
 */
export function toStoredTime(value: string | number): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? formatMicros(Math.round(value * 1000)) : undefined;
  const micros = epochMicros(value);
  if (micros !== undefined) return formatMicros(micros);
  // ISO text that names no real time (2026-02-30) is refused rather than rolled over as Date would.
  if (ISO.test(value.trim())) return undefined;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? undefined : formatMicros(millis * 1000);
}

/** Seconds from `start` to `end` (stored or any ISO form), to the microsecond; never negative. */
export function secondsBetween(start: string, end: string): number {
  const from = epochMicros(start) ?? Date.parse(start) * 1000;
  const to = epochMicros(end) ?? Date.parse(end) * 1000;
  return Math.max(0, to - from) / 1e6;
}

/** A time read back from storage in the stored form; rows written before microseconds hold `toISOString()` text. */
export const storedForm = (text: string): string => (text.length === 27 ? text : (toStoredTime(text) ?? text));
