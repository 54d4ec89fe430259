import type { Context, Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";

/**
 * GET /console/*: the web console, a single-page app served from the Worker's static assets
 * (dist/assets/console, bundled at build time). Its hashed bundles are cached for good; every other
 * console path is the app's shell, which routes in the browser. The pages need no credentials: the
 * console signs in by sending the user's key with each API call, as the SDKs do.
 */
export const CONSOLE_PATH = /^\/console(\/.*)?$/;

/** A bundle file name as the build writes it: `app-<hash>.js` or `.css`. */
const BUNDLE_FILE = /^\/console\/assets\/[A-Za-z0-9_-]+\.(js|css)$/;

/**
 * Scripts and styles from this origin only, API calls to this origin only, never framed: a key pasted
 * into the console cannot leave for another site through an injected script.
 */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
};

async function serveAsset(c: Context<AppEnv>, path: string, cacheControl: string): Promise<Response> {
  const response = await c.env.ASSETS.fetch(new Request(new URL(path, c.req.url)));
  if (!response.ok || !response.body) {
    return new Response(JSON.stringify({ detail: `Console file not found: ${path}. Run the build (npm run build).` }), {
      status: 404,
      headers: { "Content-Type": "application/json" },
    });
  }
  const headers = new Headers(response.headers);
  headers.set("Cache-Control", cacheControl);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) headers.set(name, value);
  return new Response(c.req.method === "HEAD" ? null : response.body, { status: 200, headers });
}

export function mountConsole(app: Hono<AppEnv>): void {
  app.get("/console", (c) => c.redirect("/console/", 308));
  app.get("/console/*", async (c) => {
    if (BUNDLE_FILE.test(c.req.path)) return serveAsset(c, c.req.path, "public, max-age=31536000, immutable");
    if (c.req.path.startsWith("/console/assets/"))
      return c.json({ detail: `No such console file: ${c.req.path}` }, 404);
    return serveAsset(c, "/console/index.html", "no-cache");
  });
}
