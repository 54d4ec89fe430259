import { utf8Length } from "./bytes.ts";
import { invalid } from "./errors.ts";
import { MAX_ERROR_MESSAGE_LENGTH, MAX_JSON_FIELD_BYTES } from "./limits.ts";

/** Measuring stored JSON against the row bounds of `limits.ts`. */

/** UTF-8 bytes of `value` as JSON (0 for undefined), exactly: sizes of several columns add up. */
export function jsonBytes(value: unknown): number {
  if (value === undefined) return 0;
  return utf8Length(JSON.stringify(value) ?? "");
}

/**
 * The scale of the row bounds in force: 1, or less when the `MAX_JSON_FIELD_BYTES` var is lower than
 * `MAX_JSON_FIELD_BYTES` (never more: rows must fit in 2 MB). Tests lower it to keep bodies small.
 */
function scale(env: { MAX_JSON_FIELD_BYTES?: string }): number {
  const configured = Number(env.MAX_JSON_FIELD_BYTES);
  return Number.isFinite(configured) && configured > 0 ? Math.min(configured / MAX_JSON_FIELD_BYTES, 1) : 1;
}

/** `bound` (a row bound of `limits.ts`) as the `MAX_JSON_FIELD_BYTES` var scales it. */
export function rowBound(env: { MAX_JSON_FIELD_BYTES?: string }, bound: number): number {
  return Math.floor(bound * scale(env));
}

/** Why a JSON value at `loc` is too large for its column, or null when it fits. */
export function oversize(loc: (string | number)[], value: unknown, limit: number): string | null {
  const bytes = jsonBytes(value);
  return bytes > limit ? `${loc.join(".")} is ${bytes} bytes of JSON; the limit is ${limit} bytes` : null;
}

/**
 * Refuses (invalid, 422) the fields of `fields` whose JSON exceeds `limit` bytes, naming each one
 * (located under `body`), its size and the limit.
 */
export function checkJsonSizes(fields: Record<string, unknown>, limit: number, loc: string[] = ["body"]): void {
  const issues = Object.entries(fields).flatMap(([field, value]) => {
    const msg = oversize([field], value, limit);
    return msg ? [{ type: "too_long", loc: [...loc, field], msg }] : [];
  });
  if (issues.length) throw invalid(issues);
}

/** An error message as rows keep it: at most MAX_ERROR_MESSAGE_LENGTH characters (an exception may quote megabytes). */
export function storedErrorMessage(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_LENGTH ? `${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}…` : message;
}
