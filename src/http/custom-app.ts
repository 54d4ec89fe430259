/**
 * The deployment's own Hono app (langgraph.json `http.app`), mounted in front of the platform's routes
 * as the official JS server mounts it: its routes are served, and its middleware wraps the platform's
 * routes too (it may, say, rewrite a run's body).
 */
import type { Hono, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { DomainError, unauthorized } from "../core/errors.ts";
import type { HttpConfig } from "../deployment/config.ts";
import type { DeploymentManifest } from "../deployment/manifest.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Mounts `userApp` on `app`. The app's middleware may rewrite a request's JSON body for the platform's
 * routes in either of two ways, and both reach them:
 * - in place, changing the object `await c.req.json()` returned (as the official server's own test
 *   app does): the request's JSON is parsed once and that object is what every later reader gets;
 * - by replacing `c.req.raw` with a new Request: Hono's cache of the body already read is dropped.
 */
export function mountCustomApp(app: Hono<AppEnv>, userApp: Hono): void {
  const seen = new WeakMap<object, { raw: Request; forget(): void }>();
  app.use("*", async (c, next) => {
    // A body that is not JSON is the client's error wherever it is read, the app's middleware included.
    const read = () =>
      c.req.text().then((text) => {
        try {
          return JSON.parse(text) as unknown;
        } catch (cause) {
          throw new DomainError("invalid", `Request body is not valid JSON: ${(cause as Error).message}`);
        }
      });
    let parsed: Promise<unknown> | undefined;
    c.req.json = <T>() => (parsed ??= read()) as Promise<T>;
    seen.set(c.req, { raw: c.req.raw, forget: () => (parsed = undefined) });
    return next();
  });
  app.route("/", userApp);
  app.use("*", async (c, next) => {
    const before = seen.get(c.req);
    if (before && before.raw !== c.req.raw) {
      c.req.bodyCache = {};
      before.forget();
    }
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
