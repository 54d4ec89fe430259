import { z } from "@hono/zod-openapi";
import { exceedsDepth } from "./json-depth.ts";
import { MAX_DATA_DEPTH, MAX_DESCRIPTION_LENGTH, MAX_METADATA_DEPTH, MAX_NAME_LENGTH } from "./limits.ts";

/**
 * Zod pieces shared by the wire schemas of several domains. Every request field that takes
 * arbitrary JSON is one of the JSON types here or in http/schemas.ts, so that no route stores or
 * walks (recursively, in zod, RPC, SQLite JSON functions) a value deeper than the documented limits.
 */

/** A refinement refusing JSON nested deeper than `maxDepth` (checked without recursion). */
export const nestedAtMost =
  (maxDepth: number) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    if (exceedsDepth(value, maxDepth)) ctx.addIssue({ code: "custom", message: `nesting deeper than ${maxDepth} levels` });
  };

/** Metadata, config and context: a JSON object nested at most MAX_METADATA_DEPTH levels. */
export const JsonObject = z.record(z.string(), z.unknown()).superRefine(nestedAtMost(MAX_METADATA_DEPTH));

/** A traced run's serialized payload: any JSON nested at most MAX_DATA_DEPTH levels. */
export const JsonData = z.unknown().superRefine(nestedAtMost(MAX_DATA_DEPTH));

/** A JSON object of data (a store value, a traced run's inputs), nested at most MAX_DATA_DEPTH levels. */
export const JsonDataObject = z.record(z.string(), z.unknown()).superRefine(nestedAtMost(MAX_DATA_DEPTH));

/** Names: at most MAX_NAME_LENGTH characters. */
export const Name = z.string().max(MAX_NAME_LENGTH);

/** Free-text descriptions: at most MAX_DESCRIPTION_LENGTH characters. */
export const Description = z.string().max(MAX_DESCRIPTION_LENGTH);
