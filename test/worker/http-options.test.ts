import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { deployment } from "../../src/deployment/index.ts";
import type { DeploymentManifest } from "../../src/deployment/manifest.ts";
import { BOOTSTRAP_KEY } from "./helpers.ts";

// langgraph.json `http`: the platform's app built for variants of this Worker's deployment.

const KEY = { "X-Api-Key": BOOTSTRAP_KEY, "Content-Type": "application/json" };
const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;

function appFor(
  http: DeploymentManifest["http"],
  userApp?: Hono,
): (path: string, init?: RequestInit) => Promise<Response> {
  const manifest: DeploymentManifest = {
    ...deployment,
    http,
    httpApp: userApp ? { module: { app: userApp }, exportName: "app", source: "./app.ts:app" } : null,
  };
  const app = createApp(manifest);
  return async (path, init) => app.fetch(new Request(`http://platform.test${path}`, init), env, ctx);
}

function userApp(): Hono {
  const app = new Hono();
  app.use("/threads", async (c, next) => {
    await next();
    c.res.headers.set("X-Seen-By-App", "yes");
  });
  app.get("/custom/ping", (c) => c.json({ pong: true }));
  // Shadows a platform route, as the official server allows.
  app.get("/info", (c) => c.json({ shadowed: true }));
  return app;
}

describe("http.disable_*", () => {
  it("leaves out the disabled resources' routes and the meta routes, keeping /ok", async () => {
    const request = appFor({ disable_store: true, disable_assistants: true, disable_meta: true, disable_ui: true });
    expect((await request("/store/namespaces", { method: "POST", headers: KEY, body: "{}" })).status).toBe(404);
    expect((await request("/assistants/search", { method: "POST", headers: KEY, body: "{}" })).status).toBe(404);
    expect((await request("/ui/weather", { method: "POST", headers: KEY, body: "{}" })).status).toBe(404);
    for (const path of ["/info", "/openapi.json", "/docs"]) expect((await request(path)).status, path).toBe(404);
    expect((await request("/ok")).status).toBe(200);
    expect((await request("/threads/search", { method: "POST", headers: KEY, body: "{}" })).status).toBe(200);
  });

  it("disable_runs also removes the thread streaming protocol", async () => {
    const request = appFor({ disable_runs: true });
    const body = JSON.stringify({ assistant_id: "echo", input: {} });
    expect((await request("/runs/wait", { method: "POST", headers: KEY, body })).status).toBe(404);
    const commands = await request(`/threads/${crypto.randomUUID()}/commands`, {
      method: "POST",
      headers: KEY,
      body: JSON.stringify({ id: 1, method: "state.get" }),
    });
    expect(commands.status).toBe(404);
  });
});

describe("http.app", () => {
  it("serves its routes with the platform's authentication, and its middleware wraps the platform's routes", async () => {
    const request = appFor({}, userApp());
    expect((await request("/custom/ping")).status).toBe(401);
    const ping = await request("/custom/ping", { headers: KEY });
    expect(await ping.json()).toEqual({ pong: true });
    const threads = await request("/threads", { method: "POST", headers: KEY, body: "{}" });
    expect(threads.status).toBe(200);
    expect(threads.headers.get("X-Seen-By-App")).toBe("yes");
    // A route of the app shadows the platform's; public paths stay public.
    expect(await (await request("/info")).json()).toEqual({ shadowed: true });
  });

  it("with enable_custom_route_auth false, its routes are public and the platform's stay authenticated", async () => {
    const request = appFor({ enable_custom_route_auth: false }, userApp());
    expect((await request("/custom/ping")).status).toBe(200);
    expect((await request("/threads", { method: "POST", body: "{}" })).status).toBe(401);
  });

  it("a body its middleware changes in place reaches the platform's route (as the official test app does)", async () => {
    const app = new Hono();
    app.use("/threads", async (c, next) => {
      const body = (await c.req.json()) as { metadata?: Record<string, unknown> };
      body.metadata = { ...body.metadata, stamped: "in place" };
      await next();
    });
    const request = appFor({}, app);
    const created = await request("/threads", {
      method: "POST",
      headers: KEY,
      body: JSON.stringify({ metadata: { original: true } }),
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { metadata: unknown }).metadata).toEqual({ original: true, stamped: "in place" });
    // A body that is not JSON is still the platform's 4xx.
    const bad = await request("/threads", { method: "POST", headers: KEY, body: "{not json" });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it("a request it rewrites reaches the platform's route with the new body", async () => {
    const app = new Hono();
    app.use("/threads", async (c, next) => {
      const body = (await c.req.json()) as { metadata?: Record<string, unknown> };
      c.req.raw = new Request(c.req.raw, { body: JSON.stringify({ ...body, metadata: { rewritten: true } }) });
      await next();
    });
    const request = appFor({}, app);
    const created = await request("/threads", {
      method: "POST",
      headers: { ...KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { original: true } }),
    });
    expect(created.status).toBe(200);
    expect(((await created.json()) as { metadata: unknown }).metadata).toEqual({ rewritten: true });
  });

  it("in-process calls carry the caller's credentials only when they send none of their own", async () => {
    const app = new Hono();
    app.get("/custom/headers", (c) =>
      c.json({ key: c.req.header("x-api-key") ?? null, tenant: c.req.header("x-tenant-id") ?? null }),
    );
    app.get("/custom/forward", async (c) => {
      const own = c.req.query("own");
      const response = await (globalThis as Record<symbol, typeof fetch>)[Symbol.for("langgraph_api:fetch")](
        "http://platform.test/custom/headers",
        { headers: own ? { "X-Api-Key": own } : {} },
      );
      return c.json(await response.json());
    });
    const request = appFor({ enable_custom_route_auth: false }, app);
    const headers = { "X-Api-Key": BOOTSTRAP_KEY, "X-Tenant-Id": "someone-elses" };
    expect(await (await request("/custom/forward", { headers })).json()).toEqual({
      key: BOOTSTRAP_KEY,
      tenant: "someone-elses",
    });
    // A request with its own key does not pick up the caller's workspace.
    expect(await (await request("/custom/forward?own=lgp_own", { headers })).json()).toEqual({
      key: "lgp_own",
      tenant: null,
    });
  });

  it("keeps only /ui/{graph_id}/{file} public, so the app's other /ui routes need credentials", async () => {
    const app = new Hono();
    app.get("/ui/admin/panel/x", (c) => c.text("secret"));
    const request = appFor({}, app);
    expect((await request("/ui/admin/panel/x")).status).toBe(401);
  });
});
