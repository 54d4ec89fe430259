/**
 * The deployment's own Hono app (langgraph.json `http.app`), mounted in front of the platform's routes
 * as the official JS server mounts it: its routes are served, and its middleware wraps the platform's
 * routes too (it may, say, rewrite a run's body).
 */
import type { Hono, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { unauthorized } from "../core/errors.ts";
import type { HttpConfig } from "../deployment/config.ts";
import type { DeploymentManifest } from "../deployment/manifest.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Mounts `userApp` on `app`. A middleware of the app that rewrites a request replaces `c.req.raw`;
 * Hono keeps the body it already read in `c.req.bodyCache`, so the platform's routes would read the
 * old body: when the request was replaced, that cache is dropped before the platform's routes run.
 */
export function mountCustomApp(app: Hono<AppEnv>, userApp: Hono): void {
  const before = new WeakMap<object, Request>();
  app.use("*", async (c, next) => {
    before.set(c.req, c.req.raw);
    return next();
  });
  app.route("/", userApp);
  app.use("*", async (c, next) => {
    if (before.get(c.req) !== c.req.raw) c.req.bodyCache = {};
    return next();
  });
}

/** The deployment's app, or null when it declares none. */
export function customApp(manifest: Pick<DeploymentManifest, "httpApp">): Hono | null {
  if (!manifest.httpApp) return null;
  return manifest.httpApp.module[manifest.httpApp.exportName] as Hono;
}

/**
 * Whether the platform's authentication applies to the app's routes: yes unless
 * `http.enable_custom_route_auth` is false. Then the app is mounted before authentication, so its
 * middleware sees every request first and its routes are public.
 */
export function customRoutesAuthenticated(http: HttpConfig): boolean {
  return http.enable_custom_route_auth !== false;
}

/**
 * In front of an authenticated custom app: a request that is not public must carry credentials
 * (the API-key middleware only records a key; the platform's own routes check it per route).
 */
export function requireCredentials(isPublic: (path: string, method: string) => boolean): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!isPublic(c.req.path, c.req.method) && !c.get("principal")) {
      throw unauthorized("Missing API key: send it in the X-Api-Key header");
    }
    return next();
  });
}
