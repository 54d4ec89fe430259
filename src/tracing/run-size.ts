import { utf8Length } from "../core/bytes.ts";
import { MAX_TRACED_RUN_BYTES } from "../core/limits.ts";
import type { RunPatch } from "./schemas.ts";

/**
 * The size limit of a traced run (see `MAX_TRACED_RUN_BYTES`), per payload field: the ingest API
 * refuses a post or patch with a larger field (`too_large`), and the agent tracer, which must never lose a
 * trace to one big payload, stores such a field as a `{"__truncated__": "..."}` marker instead.
 */

/** The fields of a traced run that may be large; each is measured as UTF-8 JSON (`error` as its text). */
const PAYLOADS = ["inputs", "outputs", "extra", "events", "error", "tags"] as const;
type Payload = (typeof PAYLOADS)[number];

/** A post or a patch: both carry the payload fields. */
type SizedRun = Pick<RunPatch, Payload | "id">;

/** The limit in force: `MAX_TRACED_RUN_BYTES`, or a lower `MAX_TRACED_RUN_BYTES` var (never higher: the row must fit). */
export function tracedRunLimit(env: { MAX_TRACED_RUN_BYTES?: string }): number {
  const configured = Number(env.MAX_TRACED_RUN_BYTES);
  return Number.isFinite(configured) && configured > 0
    ? Math.min(configured, MAX_TRACED_RUN_BYTES)
    : MAX_TRACED_RUN_BYTES;
}

function fieldBytes(run: SizedRun, field: Payload): number {
  const value = run[field];
  if (value === undefined || value === null) return 0;
  return utf8Length(typeof value === "string" ? value : JSON.stringify(value));
}

/** The payload fields of `run` over the limit, with their sizes. */
function oversizeFields(run: SizedRun, limit: number): { field: Payload; bytes: number }[] {
  return PAYLOADS.map((field) => ({ field, bytes: fieldBytes(run, field) })).filter(({ bytes }) => bytes > limit);
}

/** Why `run` is too large to trace, naming each field over the limit and the limit, or null when it fits. */
export function oversizeDetail(run: SizedRun, limit: number): string | null {
  const over = oversizeFields(run, limit);
  if (!over.length) return null;
  const fields = over.map(({ field, bytes }) => `${field} is ${bytes} bytes`).join(", ");
  return `Run ${run.id}: ${fields} of JSON; the limit for each field of a traced run is ${limit} bytes (MAX_TRACED_RUN_BYTES)`;
}

/**
 * `run` with every field over the limit replaced by a marker saying so: `inputs`, `outputs`:
 * `{"__truncated__": "<field> of N bytes exceed the L-byte trace limit"}`; `extra`: the same, beside
 * its `metadata` when that is at most half the limit (the ids leading back to the agent run stay);
 * `events`: one `{"name": "__truncated__", "__truncated__": ...}` event; `error`: its first 1,024
 * characters, then `… [<marker>]`; `tags`: the marker as the only tag.
 */
export function truncateOversize<T extends SizedRun>(run: T, limit: number): T {
  const fitted: T = { ...run };
  for (const { field, bytes } of oversizeFields(run, limit)) {
    const text = `${field} of ${bytes} bytes exceed the ${limit}-byte trace limit`;
    if (field === "error") {
      fitted.error = `${String(run.error).slice(0, 1024)}… [${text}]`;
    } else if (field === "events") {
      fitted.events = [{ name: "__truncated__", __truncated__: text }];
    } else if (field === "tags") {
      fitted.tags = [text];
    } else if (field === "extra") {
      const metadata = run.extra?.metadata;
      const keep = metadata !== undefined && utf8Length(JSON.stringify(metadata)) <= limit / 2;
      fitted.extra = keep ? { metadata, __truncated__: text } : { __truncated__: text };
    } else {
      fitted[field] = { __truncated__: text };
    }
  }
  return fitted;
}
