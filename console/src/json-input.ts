/** JSON typed by a person in a form: one set of checks and messages for every page. */

export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Parses what a person typed where a JSON object is expected. The error names the field and says
 * what is wrong in words, so a form can show it next to the field and send nothing.
 */
export function parseJsonObject(text: string, what: string): { value: JsonObject } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { error: `${what} is not valid JSON: ${(error as Error).message}` };
  }
  if (!isPlainObject(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
    return { error: `${what} must be a JSON object ({"key": value}), not ${kind}` };
  }
  return { value: parsed };
}

/** A value typed in a form: JSON when it parses, else the text as a plain string. */
export function parseJsonOrString(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
