import { createRoute, z } from "@hono/zod-openapi";
import { deployment } from "../deployment/index.ts";
import { publicRoute } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody } from "../http/schemas.ts";
import { securedRoute } from "../http/secured.ts";
import { UiAssetParams, UiComponentRequestSchema, UiGraphParams } from "./schemas.ts";
import { UiCatalog } from "./service.ts";

const tags = ["UI"];
const catalog = new UiCatalog(deployment.ui ?? []);

// The official server answers these two 404s in plain text, and the SDK shows the text as is.
const textNotFound = (description: string) => ({
  404: { description, content: { "text/plain": { schema: z.string() } } },
});

const routes = {
  component: securedRoute({
    method: "post",
    path: "/ui/{graph_id}",
    tags,
    summary: "The HTML fragment that loads a graph's UI component (generative UI, langgraph.json `ui`)",
    request: { params: UiGraphParams, body: jsonBody(UiComponentRequestSchema) },
    responses: {
      200: {
        description:
          "Stylesheet links and a script tag; the script's onload renders the component into the element named by replacing {{shadowRootId}}",
        content: { "text/html": { schema: z.string() } },
      },
      ...textNotFound('`UI not found for agent "<graph_id>"`: the graph has no `ui` entry'),
    },
  }),
  asset: publicRoute(
    createRoute({
      method: "get",
      path: "/ui/{graph_id}/{file}",
      tags,
      summary: "A bundled UI file (entrypoint.js, entrypoint.css); public, as the browser loads it by URL",
      request: { params: UiAssetParams },
      responses: {
        200: {
          description: "The file",
          content: { "text/javascript": { schema: z.string() }, "text/css": { schema: z.string() } },
        },
        ...textNotFound("`File not found`: no such file in the graph's UI bundle"),
      },
    }),
  ),
};

export const uiRoutes = createRouter()
  .openapi(routes.component, (c) => {
    const { graph_id } = c.req.valid("param");
    const { name } = c.req.valid("json");
    // A request always has a Host over HTTP; one made inside the runtime may not, and its URL says the same.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    const html = catalog.fragment(graph_id, name, host);
    if (html === null) return c.text(`UI not found for agent "${graph_id}"`, 404);
    return c.body(html, 200, { "Content-Type": "text/html" });
  })
  .openapi(routes.asset, async (c) => {
    const { graph_id, file } = c.req.valid("param");
    const asset = catalog.asset(graph_id, file);
    const response = asset && (await c.env.ASSETS.fetch(new Request(new URL(asset.path, c.req.url))));
    if (!asset || !response?.ok || !response.body) return c.text("File not found", 404);
    return c.body(response.body, 200, { "Content-Type": asset.contentType });
  });
