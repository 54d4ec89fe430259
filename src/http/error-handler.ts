import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { domainErrorOf, type ErrorKind } from "../core/errors.ts";
import { log } from "../observability/log.ts";
import type { AppEnv } from "./app-env.ts";

/** The one place where a domain error becomes an HTTP status. */
export const STATUS_OF_KIND = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  invalid: 422,
  upgrade_required: 426,
  unavailable: 503,
} as const satisfies Record<ErrorKind, ContentfulStatusCode>;

/** Maps anything thrown by a route to the Python server's error shape, `{"detail": ...}`. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  const domain = domainErrorOf(err);
  if (domain) return c.json({ detail: domain.detail }, STATUS_OF_KIND[domain.kind]);
  if (err instanceof HTTPException) {
    if (err.res) return err.getResponse();
    // Hono's own validators report unparsable JSON as 400; the Python server's contract is 422.
    if (err.status === 400 && err.message.startsWith("Malformed JSON")) {
      return c.json({ detail: [{ type: "json_invalid", loc: ["body"], msg: "Malformed JSON in request body" }] }, 422);
    }
    return c.json({ detail: err.message || defaultMessage(err.status) }, err.status);
  }
  log.error("unhandled error", {
    request_id: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  return c.json({ detail: "Internal Server Error" }, 500);
};

export const onNotFound: NotFoundHandler<AppEnv> = (c: Context<AppEnv>) => c.json({ detail: "Not Found" }, 404);

function defaultMessage(status: number): string {
  switch (status) {
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 413:
      return "Request body too large";
    case 415:
      return "Unsupported Media Type";
    default:
      return "Request failed";
  }
}
