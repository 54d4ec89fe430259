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
  // setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, 0);
  const millis = check.getTime();
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
  return storable(typeof value === "number" ? Math.round(value * 1000) : textMicros(value));
}

function textMicros(value: string): number | undefined {
  const micros = epochMicros(value);
  if (micros !== undefined) return micros;
  // ISO text that names no real time (2026-02-30) is refused rather than rolled over as Date would.
  if (ISO.test(value.trim())) return undefined;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? undefined : millis * 1000;
}

/** Years 0000–9999 only: the stored form has four year digits (and `dotted_order` is built from it). */
const YEAR_ZERO_MICROS = -62_167_219_200_000 * 1000; // 0000-01-01T00:00:00Z
const MAX_MICROS = (Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1) * 1000 - 1;

function storable(micros: number | undefined): string | undefined {
  if (micros === undefined || !Number.isFinite(micros)) return undefined;
  return micros < YEAR_ZERO_MICROS || micros > MAX_MICROS ? undefined : formatMicros(micros);
}

/** Seconds from `start` to `end` (stored or any ISO form), to the microsecond; never negative. */
export function secondsBetween(start: string, end: string): number {
  const from = epochMicros(start) ?? Date.parse(start) * 1000;
  const to = epochMicros(end) ?? Date.parse(end) * 1000;
  return Math.max(0, to - from) / 1e6;
}

/** A time read back from storage in the stored form; rows written before microseconds hold `toISOString()` text. */
export const storedForm = (text: string): string => (text.length === 27 ? text : (toStoredTime(text) ?? text));
