/**
 * Telling JSON objects apart from the other values a parsed body, a config or a checkpoint may hold.
 * One home, so every reader agrees on what counts as an object.
 */

/** A non-null object that is not an array: a JSON object, or any class instance. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** An object literal (its prototype is Object.prototype or null): not a Date, a Map or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
