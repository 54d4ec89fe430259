import type { RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { requireApiKey } from "./api-key-auth.ts";
import { withMiddlewareErrors } from "../http/responses.ts";
import { API_KEY_SECURITY } from "../http/schemas.ts";

/**
 * Marks a route as authenticated: documents the API-key scheme and runs the key check before any
 * route-specific middleware. Auth is attached per route (not per path prefix) so unknown paths still
 * answer 404; a test walks the OpenAPI document to prove every non-public route demands a key. The
 * document also gets the error answers of the auth and request middleware (401, 403, 413, 415, 422, 500).
 */
export function secured<R extends RouteConfig>(route: R, ...middleware: MiddlewareHandler[]): R {
  return { ...withMiddlewareErrors(route, { authenticated: true }), security: API_KEY_SECURITY, middleware: [requireApiKey, ...middleware] };
}
