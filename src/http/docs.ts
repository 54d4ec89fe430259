import type { Hono } from "hono";
import type { AppEnv } from "./app-env.ts";

/**
 * GET /docs: Swagger UI over /openapi.json. Its script and stylesheet are served by this Worker from
 * the static assets the build step stages (dist/assets/docs), so the page renders with no network.
 */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent Platform API reference</title>
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      persistAuthorization: true,
      tryItOutEnabled: false,
    });
  </script>
</body>
</html>
`;

const DOCS_ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"]);

export function mountDocs(app: Hono<AppEnv>): void {
  app.get("/docs", (c) => c.html(DOCS_HTML));
  app.get("/docs/:asset", async (c) => {
    const asset = c.req.param("asset");
    if (!DOCS_ASSETS.has(asset)) return c.notFound();
    const response = await c.env.ASSETS.fetch(new Request(new URL(`/docs/${asset}`, c.req.url)));
    if (!response.ok) return c.notFound();
    const headers = new Headers(response.headers);
    headers.set("Cache-Control", "public, max-age=86400");
    return new Response(response.body, { status: 200, headers });
  });
}
