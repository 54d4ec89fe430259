/**
 * Run times with microseconds, end to end. The SDKs send `…T10:00:00.123456Z` (JS pads its
 * milliseconds with a per-parent counter, Python has real microseconds), and `dotted_order` carries
 * the same six digits; `Date` stops at milliseconds, so times are parsed and printed here instead.
 *
 * The stored form is `YYYY-MM-DDTHH:MM:SS.ffffffZ`, always UTC and always 27 characters, so text
 * order is time order in the shards' SQL (bounds and filter times are normalised to it too).
 */

import { isIsoShaped, parseIsoTime } from "../core/iso-time.ts";
import { RUN_TIME_RANGE } from "../core/limits.ts";

/**
 * A time as whole milliseconds since the epoch (exact as a double for every year 0000–9999) and the
 * microseconds past them (0–999). Microseconds alone pass 2^53 in 2255, where a double stops
 * counting them exactly.
 */
type Instant = { millis: number; micros: number };

/** An ISO-8601 time (no zone means UTC; see core/iso-time.ts), or undefined. Digits past the sixth are dropped. */
function parseIso(text: string): Instant | undefined {
  const instant = parseIsoTime(text);
  return instant && { millis: instant.millis, micros: Math.floor(instant.nanos / 1000) };
}

/** Microseconds since the epoch of an ISO-8601 time (no zone means UTC), or undefined; exact until 2255. */
export function epochMicros(text: string): number | undefined {
  const instant = parseIso(text);
  return instant && instant.millis * 1000 + instant.micros;
}

/** The stored form of a time given in microseconds since the epoch (exact until 2255; see Instant). */
export function formatMicros(micros: number): string {
  const millis = Math.floor(micros / 1000);
  return format({ millis, micros: micros - millis * 1000 });
}

/** The stored form: toISOString() ends in `.mmmZ`, three more digits go before the Z. */
const format = ({ millis, micros }: Instant): string =>
  `${new Date(millis).toISOString().slice(0, -1)}${String(micros).padStart(3, "0")}Z`;

/**
 * A client's time in the stored form: ISO-8601 text with any number of fraction digits and any zone,
 * or epoch milliseconds (the JS SDK's `end_time`, possibly fractional). Other text `Date` can read
 * keeps millisecond precision. Undefined when it is not a time of the years 0000–9999.
 */
export function toStoredTime(value: string | number): string | undefined {
  const instant = instantOf(value);
  return instant && storable(instant) ? format(instant) : undefined;
}

/** A client's time: ISO text or epoch milliseconds. */
const instantOf = (value: string | number): Instant | undefined =>
  typeof value === "number" ? fromEpochMillis(value) : textInstant(value);

function fromEpochMillis(value: number): Instant | undefined {
  if (!Number.isFinite(value)) return undefined;
  const millis = Math.floor(value);
  const micros = Math.round((value - millis) * 1000);
  return micros === 1000 ? { millis: millis + 1, micros: 0 } : { millis, micros };
}

function textInstant(value: string): Instant | undefined {
  const instant = parseIso(value);
  if (instant) return instant;
  // ISO text that names no real time (2026-02-30) is refused rather than rolled over as Date would.
  if (isIsoShaped(value)) return undefined;
  const millis = Date.parse(value);
  return Number.isNaN(millis) ? undefined : { millis, micros: 0 };
}

/** Years 0000–9999 only: the stored form has four year digits (and `dotted_order` is built from it). */
const YEAR_ZERO_MILLIS = -62_167_219_200_000; // 0000-01-01T00:00:00Z
const YEAR_10000_MILLIS = 253_402_300_800_000; // 10000-01-01T00:00:00Z

const storable = ({ millis }: Instant): boolean => millis >= YEAR_ZERO_MILLIS && millis < YEAR_10000_MILLIS;

/**
 * A run's time in the stored form, or why it cannot be one: not a time, or outside the years every
 * export format holds (`RUN_TIME_RANGE`, v1 Parquet's nanoseconds since 1970 in 64 bits).
 */
export function toRunTime(value: string | number): { time: string } | { problem: string } {
  const instant = instantOf(value);
  if (instant === undefined)
    return { problem: `not an ISO-8601 time or epoch milliseconds: ${JSON.stringify(value).slice(0, 100)}` };
  const time = storable(instant) ? format(instant) : undefined;
  if (time === undefined || time < RUN_TIME_RANGE.from || time >= RUN_TIME_RANGE.until)
    return {
      problem: `${time ?? JSON.stringify(value).slice(0, 100)} is outside the run times this platform stores and exports exactly, ${RUN_TIME_RANGE.from} up to (not including) ${RUN_TIME_RANGE.until}`,
    };
  return { time };
}

/**
 * Whether a run's stored `end` is before its stored `start`. Within the start's millisecond it is not:
 * the JS SDK pads its millisecond start_time with a counter as microseconds (see dotted_order) and
 * sends end_time as whole epoch milliseconds, so a run shorter than 1 ms ends "before" it starts.
 */
export const endsBeforeStart = (start: string, end: string): boolean => end < start.slice(0, 23);

/** Seconds from `start` to `end` (stored or any ISO form), to the microsecond; never negative. */
export function secondsBetween(start: string, end: string): number {
  const from = parseIso(start) ?? { millis: Date.parse(start), micros: 0 };
  const to = parseIso(end) ?? { millis: Date.parse(end), micros: 0 };
  return Math.max(0, (to.millis - from.millis) * 1000 + (to.micros - from.micros)) / 1e6;
}

/** A time read back from storage in the stored form; rows written before microseconds hold `toISOString()` text. */
export const storedForm = (text: string): string => (text.length === 27 ? text : (toStoredTime(text) ?? text));
