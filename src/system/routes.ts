import { createRoute, z } from "@hono/zod-openapi";
import { requireOrganizationAdmin } from "../auth/require-admin.ts";
import { customAuthEnabled } from "../deployment/custom-auth.ts";
import { deployment } from "../deployment/index.ts";
import { collectMetrics } from "../http/metrics.ts";
import { errorResponse, publicRoute } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { jsonContent } from "../http/schemas.ts";
import { secured } from "../http/secured.ts";
import { renderPrometheus } from "../observability/metrics.ts";
import { FEATURES } from "./features.ts";

const tags = ["System"];

const InfoSchema = z
  .object({
    version: z.string(),
    langgraph_js_version: z.string(),
    context: z.literal("js"),
    flags: z.record(z.string(), z.boolean()),
    metadata: z.object({ graphs: z.array(z.string()), config_path: z.string() }),
  })
  .openapi("ServerInfo");

const routes = {
  ok: publicRoute(
    createRoute({
      method: "get",
      path: "/ok",
      tags,
      summary: "Health check",
      responses: { 200: jsonContent(z.object({ ok: z.literal(true) }), "The server is up") },
    }),
  ),
  info: publicRoute(
    createRoute({
      method: "get",
      path: "/info",
      tags,
      summary: "Server version and feature flags",
      responses: { 200: jsonContent(InfoSchema, "Version, feature flags and deployed graphs") },
    }),
  ),
  // The figures cover every workspace's traffic, so only organization admins may read them.
  metrics: secured(
    createRoute({
      method: "get",
      path: "/metrics",
      tags,
      summary:
        "Prometheus metrics: request counts and latency histograms by route and status (organization-admin keys only)",
      responses: {
        200: { description: "Prometheus text exposition format", content: { "text/plain": { schema: z.string() } } },
        503: errorResponse("A metrics shard did not answer: the totals would be incomplete"),
      },
    }),
    requireOrganizationAdmin,
  ),
};

export const systemRoutes = createRouter()
  .openapi(routes.ok, (c) => c.json({ ok: true as const }, 200))
  .openapi(routes.info, (c) =>
    c.json(
      {
        version: deployment.versions.platform,
        langgraph_js_version: deployment.versions.langgraph_js,
        context: "js" as const,
        flags: {
          ...FEATURES,
          custom_auth: customAuthEnabled,
          a2a: FEATURES.a2a && !deployment.http.disable_a2a,
          mcp: FEATURES.mcp && !deployment.http.disable_mcp,
        },
        metadata: { graphs: deployment.graphs.map((g) => g.id), config_path: deployment.configPath },
      },
      200,
    ),
  )
  .openapi(routes.metrics, async (c) => {
    const body = renderPrometheus(await collectMetrics(c.env));
    return c.text(body, 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
  });
