/** Object keys as steps of SQLite JSON paths (`$."key"`), shared by every query that filters JSON. */

export class JsonPathKeyError extends Error {}

/**
 * Whether a key can be written in a JSON path: SQLite reads the path as a C string, so a NUL would
 * end it early ("bad JSON path"). Every other character can be quoted.
 */
export const isPathKey = (key: string): boolean => !key.includes("\0");

/** `$."a\"b"`-style step for one key; a JsonPathKeyError when the key cannot be written. */
export function pathStep(key: string): string {
  if (!isPathKey(key))
    throw new JsonPathKeyError(
      `filter key ${JSON.stringify(key)} contains a NUL character, which no JSON path can hold`,
    );
  // SQLite JSON paths escape with backslashes inside a quoted key.
  return `."${key.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
