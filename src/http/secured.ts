import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { unauthorized } from "../core/errors.ts";
import type { AppEnv } from "./app-env.ts";
import { withMiddlewareErrors } from "./responses.ts";
import { API_KEY_SECURITY } from "./schemas.ts";

/** Route guard: the authentication middleware (auth/api-key-auth.ts) must have set a principal. */
export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("principal")) throw unauthorized("Missing API key: send it in the X-Api-Key header");
  return next();
});

/**
 * Marks a route as authenticated: documents the API-key scheme and runs the key check before any
 * route-specific middleware. Auth is attached per route (not per path prefix) so unknown paths still
 * answer 404; a test walks the OpenAPI document to prove every non-public route demands a key. The
 * document also gets the error answers of the auth and request middleware (401, 403, 413, 415, 422, 500).
 */
export function secured<R extends RouteConfig>(route: R, ...middleware: MiddlewareHandler[]): R {
  return {
    ...withMiddlewareErrors(route, { authenticated: true }),
    security: API_KEY_SECURITY,
    middleware: [requireApiKey, ...middleware],
  };
}

type RouteDeclaration = Parameters<typeof createRoute>[0];

/** An authenticated route, declared for `createRouter().openapi(...)`. */
export const securedRoute = <R extends RouteDeclaration>(config: R, ...middleware: MiddlewareHandler[]) =>
  secured(createRoute(config), ...middleware);

/**
 * The route declarer of a route module: its routes share `tags` in the OpenAPI document and run
 * `middleware` after the key check.
 */
export const securedRoutes =
  (tags: string[], ...middleware: MiddlewareHandler[]) =>
  <R extends RouteDeclaration>(config: R) =>
    securedRoute({ tags, ...config }, ...middleware);
