import { createMiddleware } from "hono/factory";
import { DomainError } from "../core/errors.ts";
import { MAX_URL_BYTES } from "../core/limits.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Refuses URLs longer than MAX_URL_BYTES with a JSON 414, before anything parses the query. The
 * URL of a Request is already percent-encoded ASCII, so its length is its size in bytes.
 */
export const limitUrlLength = createMiddleware<AppEnv>(async (c, next) => {
  const length = c.req.url.length;
  if (length > MAX_URL_BYTES)
    throw new DomainError("uri_too_long", `The request URL is ${length} bytes; the limit is ${MAX_URL_BYTES} bytes`);
  await next();
});
