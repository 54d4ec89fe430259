import { OpenAPIHono } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { a2aRoutes } from "./a2a/routes.ts";
import { assistantRoutes } from "./assistants/routes.ts";
import { authenticate } from "./auth/api-key-auth.ts";
import { CONSOLE_PATH, mountConsole } from "./console/routes.ts";
import { cronRoutes } from "./crons/routes.ts";
import { deployment } from "./deployment/index.ts";
import type { DeploymentManifest } from "./deployment/manifest.ts";
import { bulkExportRoutes } from "./export/routes.ts";
import type { AppEnv } from "./http/app-env.ts";
import { decodeJsonBody, limitBodySize } from "./http/body-limit.ts";
import { corsMiddleware } from "./http/cors.ts";
import { customApp, customRoutesAuthenticated, mountCustomApp, requireCredentials } from "./http/custom-app.ts";
import { d1Session } from "./http/d1-session.ts";
import { mountDocs } from "./http/docs.ts";
import { onError, onNotFound } from "./http/error-handler.ts";
import { bindLoopback } from "./http/loopback.ts";
import { httpMetrics } from "./http/metrics.ts";
import { checkRequestUrl } from "./http/url-limit.ts";
import { mcpRoutes } from "./mcp/routes.ts";
import { storeRoutes } from "./store/routes.ts";
import { systemRoutes } from "./system/routes.ts";
import { tenancyRoutes } from "./tenancy/routes.ts";
import { protocolRoutes } from "./threads/protocol/routes.ts";
import { threadRoutes } from "./threads/routes.ts";
import { runRoutes } from "./threads/runs/routes.ts";
import { attachmentDownloadRoutes } from "./tracing/attachment-routes.ts";
import { SIGNED_ATTACHMENT_PATH } from "./tracing/attachment-urls.ts";
import { feedbackRoutes } from "./tracing/feedback/routes.ts";
import { sessionRoutes } from "./tracing/projects/routes.ts";
import { tracingRunRoutes } from "./tracing/routes.ts";
import { runStatsRoutes } from "./tracing/stats-routes.ts";
import { tracingRunV2Routes } from "./tracing/v2/routes.ts";
import { uiRoutes } from "./ui/routes.ts";

/** Paths reachable without credentials. Everything else is declared with `secured(...)`. */
export const PUBLIC_PATHS = ["/ok", "/info", "/api/v1/info", "/docs", "/openapi.json"] as const;
/**
 * A request that needs no credentials: the public paths, reads of the UI bundles (the browser loads
 * them by URL), pre-signed attachment downloads (their signature is checked by the route), and the
 * console's pages (it sends the user's credentials with each API call).
 */
export const isPublicRequest = (path: string, method: string) =>
  (PUBLIC_PATHS as readonly string[]).includes(path) ||
  path.startsWith("/docs/") ||
  ((method === "GET" || method === "HEAD") &&
    (UI_ASSET_PATH.test(path) || SIGNED_ATTACHMENT_PATH.test(path) || CONSOLE_PATH.test(path)));
/** `/ui/{graph_id}/{file}`: a bundled UI asset (the browser loads it by URL, with no credentials). */
const UI_ASSET_PATH = /^\/ui\/[^/]+\/[^/]+$/;

/** Paths `http.disable_meta` hides: the server's description, not its health check (/ok), as in Python. */
const META_PATHS = ["/info", "/metrics", "/openapi.json", "/docs"];
const isMetaPath = (path: string) => META_PATHS.includes(path) || path.startsWith("/docs/");

/** The Worker's HTTP app for a deployment (this Worker's own by default; tests pass variants). */
export function createApp(manifest: DeploymentManifest = deployment) {
  const app = new OpenAPIHono<AppEnv>();
  const http = manifest.http;
  const userApp = customApp(manifest);

  app.use("*", requestId({ headerName: "X-Request-Id" }));
  app.use("*", httpMetrics);
  app.use("*", corsMiddleware(http.cors));
  app.use("*", checkRequestUrl);
  app.use("*", limitBodySize);
  // In-process API calls serve the deployment's custom routes; without an app nothing could make one.
  if (userApp) app.use("*", bindLoopback(app));
  if (http.disable_meta) app.use("*", async (c, next) => (isMetaPath(c.req.path) ? onNotFound(c) : next()));
  if (userApp && !customRoutesAuthenticated(http)) mountCustomApp(app, userApp);
  app.use("*", d1Session);
  app.use("*", authenticate(isPublicRequest));
  // After authentication: only a caller with a key makes the Worker inflate a body.
  app.use("*", decodeJsonBody);
  if (userApp && customRoutesAuthenticated(http)) {
    app.use("*", requireCredentials(isPublicRequest));
    mountCustomApp(app, userApp);
  }

  // `http.disable_*` leaves a resource's routes out, as the official servers do.
  const resources = [
    systemRoutes,
    tenancyRoutes,
    ...(http.disable_threads ? [] : [threadRoutes]),
    ...(http.disable_runs ? [] : [runRoutes, protocolRoutes]),
    ...(http.disable_assistants ? [] : [assistantRoutes]),
    ...(http.disable_store ? [] : [storeRoutes]),
    cronRoutes,
    mcpRoutes,
    a2aRoutes,
    sessionRoutes,
    runStatsRoutes,
    tracingRunRoutes,
    tracingRunV2Routes,
    feedbackRoutes,
    attachmentDownloadRoutes,
    bulkExportRoutes,
    ...(http.disable_ui ? [] : [uiRoutes]),
  ];
  for (const routes of resources) app.route("/", routes);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyAuth", {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "A platform API key. Organization-scoped keys may pick a workspace with X-Tenant-Id.",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Agent Platform",
      version: manifest.versions.platform,
      description:
        "LangGraph Platform-compatible Agent Server, tracing API and trace bulk export on Cloudflare Workers. " +
        "Every route except /ok, /info, /docs, /openapi.json, the console (GET /console/...), GET /ui/{graph_id}/{file} and the pre-signed GET /api/v1/attachments/{workspace_id}/{run_id}/{name} needs an X-Api-Key header. " +
        "A response that read or wrote the platform's database carries an x-d1-bookmark header: send it back on the next request to read your own writes (an assistant just created or patched) wherever the request is served.",
    },
  });
  mountDocs(app);
  mountConsole(app);

  app.notFound(onNotFound);
  app.onError(onError);
  return app;
}
