import { OpenAPIHono } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { a2aRoutes } from "./a2a/routes.ts";
import { assistantRoutes } from "./assistants/routes.ts";
import { authenticate } from "./auth/api-key-auth.ts";
import { cronRoutes } from "./crons/routes.ts";
import { deployment } from "./deployment/index.ts";
import { bulkExportRoutes } from "./export/routes.ts";
import type { AppEnv } from "./http/app-env.ts";
import { limitBodySize } from "./http/body-limit.ts";
import { corsMiddleware } from "./http/cors.ts";
import { mountDocs } from "./http/docs.ts";
import { onError, onNotFound } from "./http/error-handler.ts";
import { httpMetrics } from "./http/metrics.ts";
import { limitUrlLength } from "./http/url-limit.ts";
import { mcpRoutes } from "./mcp/routes.ts";
import { storeRoutes } from "./store/routes.ts";
import { systemRoutes } from "./system/routes.ts";
import { tenancyRoutes } from "./tenancy/routes.ts";
import { protocolRoutes } from "./threads/protocol/routes.ts";
import { threadRoutes } from "./threads/routes.ts";
import { runRoutes } from "./threads/runs/routes.ts";
import { sessionRoutes } from "./tracing/projects/routes.ts";
import { tracingRunRoutes } from "./tracing/routes.ts";
import { uiRoutes } from "./ui/routes.ts";

/** Paths reachable without credentials. Everything else is declared with `secured(...)`. */
export const PUBLIC_PATHS = ["/ok", "/info", "/api/v1/info", "/docs", "/openapi.json"] as const;
/** A request that needs no credentials: the public paths, and reads of the UI bundles (the browser loads them by URL). */
export const isPublicRequest = (path: string, method: string) =>
  (PUBLIC_PATHS as readonly string[]).includes(path) ||
  path.startsWith("/docs/") ||
  ((method === "GET" || method === "HEAD") && path.startsWith("/ui/"));

export function createApp() {
  const app = new OpenAPIHono<AppEnv>();

  app.use("*", requestId({ headerName: "X-Request-Id" }));
  app.use("*", httpMetrics);
  app.use("*", corsMiddleware(deployment.http.cors));
  app.use("*", limitUrlLength);
  app.use("*", limitBodySize);
  app.use("*", authenticate(isPublicRequest));

  const resources = [
    systemRoutes,
    tenancyRoutes,
    threadRoutes,
    runRoutes,
    protocolRoutes,
    assistantRoutes,
    storeRoutes,
    cronRoutes,
    mcpRoutes,
    a2aRoutes,
    sessionRoutes,
    tracingRunRoutes,
    bulkExportRoutes,
    uiRoutes,
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
      version: deployment.versions.platform,
      description:
        "LangGraph Platform-compatible Agent Server, tracing API and trace bulk export on Cloudflare Workers. " +
        "Every route except /ok, /info, /docs, /openapi.json and GET /ui/{graph_id}/{file} needs an X-Api-Key header.",
    },
  });
  mountDocs(app);

  app.notFound(onNotFound);
  app.onError(onError);
  return app;
}
