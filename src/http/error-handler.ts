import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./app-env.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../observability/log.ts";

/** Maps anything thrown by a route to the Python server's error shape, `{"detail": ...}`. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    return c.json({ detail: err.detail }, err.status, err.headers);
  }
  if (err instanceof HTTPException) {
    // Hono's own validators report unparsable JSON as 400; the Python server's contract is 422.
    if (err.status === 400 && err.message.startsWith("Malformed JSON")) {
      return c.json(
        { detail: [{ type: "json_invalid", loc: ["body"], msg: "Malformed JSON in request body" }] },
        422,
      );
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

export const onNotFound: NotFoundHandler<AppEnv> = (c: Context<AppEnv>) =>
  c.json({ detail: "Not Found" }, 404);

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
