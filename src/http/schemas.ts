import { z } from "@hono/zod-openapi";

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
