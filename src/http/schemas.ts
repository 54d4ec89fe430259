import { z } from "@hono/zod-openapi";
import { isPathKey } from "../db/json-path.ts";
import { findKey } from "../core/json-depth.ts";
import { MAX_GRAPH_DATA_DEPTH, MAX_ID_LENGTH, MAX_METADATA_DEPTH } from "../core/limits.ts";
import { JsonObject, nestedAtMost } from "../core/schemas.ts";

// Shared wire pieces that domain modules use too live in core/schemas.ts; re-exported for the routes.
export { Description, JsonData, JsonDataObject, JsonObject, Name, nestedAtMost } from "../core/schemas.ts";

/** `{"detail": ...}`: every error response of the API. */
export const ErrorSchema = z
  .object({
    detail: z.union([
      z.string(),
      z.array(z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() })),
    ]),
  })
  .openapi("ErrorResponse");

const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorSchema } } });

export const notFoundError = { 404: error("Not found") } as const;
export const conflictError = { 409: error("Conflict") } as const;

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A required JSON request body (a missing body validates as `{}`, so defaults still apply). */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

/** Name of the security scheme registered in the OpenAPI document. */
export const API_KEY_SECURITY = [{ ApiKeyAuth: [] }];

/**
 * More JSON types (see core/schemas.ts): every request field that takes arbitrary JSON is one of
 * them, so no route stores or walks a value deeper than the documented limits.
 */

/** Context-like values that may be any JSON, nested at most MAX_METADATA_DEPTH levels. */
export const JsonSetting = z.unknown().superRefine(nestedAtMost(MAX_METADATA_DEPTH));

/** Graph input, commands and state values: any JSON nested at most MAX_GRAPH_DATA_DEPTH levels. */
export const JsonGraphData = z.unknown().superRefine(nestedAtMost(MAX_GRAPH_DATA_DEPTH));

/**
 * A containment filter on stored JSON (`{"metadata": {...}}`): nested at most MAX_METADATA_DEPTH
 * levels, and every key writable as a SQLite JSON path step.
 */
export const JsonFilter = JsonObject.superRefine((value, ctx) => {
  const key = findKey(value, (k) => !isPathKey(k));
  if (key !== undefined) ctx.addIssue({ code: "custom", message: `filter key ${JSON.stringify(key)} contains a NUL character, which no JSON path can hold` });
});

/** Client-chosen identifiers (graph and assistant ids, checkpoint ids, node names): 1 to MAX_ID_LENGTH characters. */
export const Identifier = z.string().min(1).max(MAX_ID_LENGTH);

