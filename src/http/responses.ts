import type { RouteConfig, z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
import { MAX_URL_BYTES } from "../core/limits.ts";
import { D1_BOOKMARK_HEADER } from "../db/client.ts";
import { ErrorSchema } from "./schemas.ts";

/**
 * The OpenAPI document is the contract: every status the server can send for a route is listed
 * there. Routes declare what their handlers answer (200, 404, 409…); the answers of the shared
 * middleware are added here, in one place, for every route.
 */

/** A `{"detail": ...}` error response, with the shared `ErrorResponse` schema. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorSchema } },
});

type Responses = RouteConfig["responses"];

const hasJsonBody = (route: RouteConfig) => Boolean(route.request?.body?.content?.["application/json"]);
const hasRequestSchema = (route: RouteConfig) =>
  Boolean(route.request?.params || route.request?.query || route.request?.body);
/** The body limit applies to every request that carries a body; GET and HEAD requests carry none. */
const takesBody = (route: RouteConfig) => route.method !== "get" && route.method !== "head";

/** The error answers of the middleware stack that apply to `route`. */
function middlewareErrors(route: RouteConfig, authenticated: boolean): Responses {
  return {
    400: errorResponse(`An ${D1_BOOKMARK_HEADER} header that is no D1 bookmark`),
    ...(authenticated && {
      401: errorResponse("Missing, invalid, revoked or expired API key"),
      403: errorResponse("The key may not perform this operation, or act in the workspace named by X-Tenant-Id"),
    }),
    414: errorResponse(`Request URL longer than ${MAX_URL_BYTES} bytes`),
    ...(takesBody(route) && {
      413: errorResponse("Request body, or the body once decompressed, larger than MAX_BODY_BYTES (10 MiB by default)"),
    }),
    ...(hasJsonBody(route) && {
      415: errorResponse(
        "A body sent without a JSON Content-Type (application/json), or with a Content-Encoding other than gzip, deflate or zstd",
      ),
    }),
    ...(hasRequestSchema(route) && {
      422: errorResponse(
        "Validation error: malformed JSON, or a path, query or body field that does not validate; `detail` lists each",
      ),
    }),
    500: errorResponse("Internal error (a bug: please report it with the X-Request-Id header)"),
  };
}

/**
 * Adds the middleware's error responses to a route's own. The route's declarations win, so a route
 * whose handler answers one of these statuses differently (a JSON-RPC error, say) documents that.
 */
export function withMiddlewareErrors<R extends RouteConfig>(route: R, options: { authenticated: boolean }): R {
  return { ...route, responses: { ...middlewareErrors(route, options.authenticated), ...route.responses } };
}

/** A route anyone may call, without an API key. */
export const publicRoute = <R extends RouteConfig>(route: R): R =>
  withMiddlewareErrors(route, { authenticated: false });

/**
 * A JSON answer that already exists as bytes (a Durable Object's reply), sent as is: parsing it only
 * to serialize it again would be waste. The caller names the route's schema the bytes conform to.
 */
export function jsonBytes<S extends z.ZodType>(
  c: Context,
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): TypedResponse<JSONParsed<z.output<S>>, 200, "json"> {
  // The one cast: bytes carry no type, so the route's schema is taken at its word.
  return c.body(body, 200, { "Content-Type": "application/json", ...headers }) as unknown as TypedResponse<
    JSONParsed<z.output<S>>,
    200,
    "json"
  >;
}

/**
 * A server-sent event stream. Its routes document `text/event-stream`, which types as a plain
 * `Response`: no schema to honour, so no cast. `headers` add to (or replace) the two every stream sends.
 */
export function sse(c: Context, stream: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Response {
  return c.body(stream, 200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", ...headers });
}

/** An empty 204 answer, for routes that document it without content (they accept a plain `Response`). */
export function noContent(c: Context): Response {
  return c.body(null, 204);
}
