import { z } from "@hono/zod-openapi";
import { isPathKey } from "../db/json-path.ts";
import { exceedsDepth, findKey } from "./json-depth.ts";
import { oversize } from "./json-size.ts";
import {
  MAX_DATA_DEPTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_FILTER_BYTES,
  MAX_GRAPH_DATA_DEPTH,
  MAX_ID_LENGTH,
  MAX_METADATA_DEPTH,
  MAX_NAME_LENGTH,
} from "./limits.ts";

/** Wire pieces every domain's `schemas.ts` builds on: bounded JSON, identifiers, names, query flags. */

/** A refinement refusing JSON nested deeper than `maxDepth` (checked without recursion). */
export const nestedAtMost =
  (maxDepth: number) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    if (exceedsDepth(value, maxDepth))
      ctx.addIssue({ code: "custom", message: `nesting deeper than ${maxDepth} levels` });
  };

/**
 * Every request field that takes arbitrary JSON is one of these types, so that no route stores or
 * walks (recursively, in zod, RPC, SQLite JSON functions) a value deeper than the documented limits.
 */

/** Metadata, config and context: a JSON object nested at most MAX_METADATA_DEPTH levels. */
export const JsonObject = z.record(z.string(), z.unknown()).superRefine(nestedAtMost(MAX_METADATA_DEPTH));

/** Context-like values that may be any JSON, nested at most MAX_METADATA_DEPTH levels. */
export const JsonSetting = z.unknown().superRefine(nestedAtMost(MAX_METADATA_DEPTH));

/**
 * `schema` whose JSON is at most `maxBytes` UTF-8 bytes (422 naming the field, its size and the
 * limit above): for free-form JSON stored in a D1 or Durable Object row, which holds at most
 * 2,000,000 bytes, and for filters bound as SQL parameters.
 */
export const jsonWithin = <T extends z.ZodType>(schema: T, maxBytes: number, what = "value") =>
  schema.superRefine((value, ctx) => {
    const problem = oversize([what], value, maxBytes);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Graph input, commands and state values: any JSON nested at most MAX_GRAPH_DATA_DEPTH levels. */
export const JsonGraphData = z.unknown().superRefine(nestedAtMost(MAX_GRAPH_DATA_DEPTH));

/** A traced run's serialized payload: any JSON nested at most MAX_DATA_DEPTH levels. */
export const JsonData = z.unknown().superRefine(nestedAtMost(MAX_DATA_DEPTH));

/** A JSON object of data (a store value, a traced run's inputs), nested at most MAX_DATA_DEPTH levels. */
export const JsonDataObject = z.record(z.string(), z.unknown()).superRefine(nestedAtMost(MAX_DATA_DEPTH));

/**
 * A containment filter on stored JSON (`{"metadata": {...}}`): nested at most MAX_METADATA_DEPTH
 * levels, at most MAX_FILTER_BYTES of JSON, and every key writable as a SQLite JSON path step.
 */
export const JsonFilter = jsonWithin(JsonObject, MAX_FILTER_BYTES, "filter").superRefine((value, ctx) => {
  const key = findKey(value, (k) => !isPathKey(k));
  if (key !== undefined)
    ctx.addIssue({
      code: "custom",
      message: `filter key ${JSON.stringify(key)} contains a NUL character, which no JSON path can hold`,
    });
});

/** `String.prototype.isWellFormed` (ES2024, in workerd and Node 20; the project's lib is ES2023). */
export const isWellFormed = (value: string): boolean =>
  (value as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Why a string with a lone surrogate is refused. */
export const LONE_SURROGATE = "contains a lone UTF-16 surrogate (not valid Unicode), which cannot be stored as UTF-8";

/**
 * A string with no lone surrogate (well-formed UTF-16). D1 and Durable Object SQLite store text as
 * UTF-8, which turns a lone surrogate into U+FFFD: a key or id holding one would be stored under
 * another string, and could never be read or deleted by the one that wrote it.
 */
export const WellFormedString = z.string().refine(isWellFormed, { message: LONE_SURROGATE });

/** Client-chosen identifiers (graph and assistant ids, checkpoint ids, node names): 1 to MAX_ID_LENGTH characters. */
export const Identifier = WellFormedString.min(1).max(MAX_ID_LENGTH);

/** Names: at most MAX_NAME_LENGTH characters. */
export const Name = z.string().max(MAX_NAME_LENGTH);

/** Free-text descriptions: at most MAX_DESCRIPTION_LENGTH characters. */
export const Description = z.string().max(MAX_DESCRIPTION_LENGTH);

/**
 * A boolean query parameter: `true`/`True`/`1` or `false`/`False`/`0` (Python's `requests` writes
 * `True`); absent is false.
 */
export const BoolQuery = z
  .enum(["true", "True", "1", "false", "False", "0"])
  .optional()
  .transform((v) => v === "true" || v === "True" || v === "1");
