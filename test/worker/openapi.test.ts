import { describe, expect, it } from "vitest";
import { createApp, PUBLIC_PATHS } from "../../src/app.ts";
import { call, json } from "./helpers.ts";

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
  components: { securitySchemes: Record<string, unknown> };
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1, open, and declares the API-key scheme", async () => {
    const response = await call("/openapi.json", { key: null });
    expect(response.status).toBe(200);
    const doc = await json<OpenApiDocument>(response);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
  });

  it("lists every API route the app serves", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      .filter((r) => !["/openapi.json", "/docs", "/docs/:asset"].includes(r.path))
      .map((r) => `${r.method} ${toOpenApiPath(r.path)}`);
    expect(served.length).toBeGreaterThan(5);
    for (const route of served) expect(documented, route).toContain(route);
  });

  it("every documented route outside the public ones demands a key (401 without one)", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const concrete = path.replace(/\{[^}]+\}/g, crypto.randomUUID());
        const response = await call(concrete, { method: method.toUpperCase(), key: null, json: method === "get" ? undefined : {} });
        if ((PUBLIC_PATHS as readonly string[]).includes(path)) {
          expect(response.status, `${method} ${path}`).toBe(200);
          expect(operation.security).toBeUndefined();
        } else {
          expect(response.status, `${method} ${path}`).toBe(401);
          expect(operation.security).toEqual([{ ApiKeyAuth: [] }]);
          expect(operation.responses).toHaveProperty("401");
        }
      }
    }
  });
});

describe("/docs", () => {
  it("serves an interactive reference whose assets all come from this Worker", async () => {
    const response = await call("/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const html = await response.text();
    expect(html).toContain("SwaggerUIBundle");
    expect(html).toContain('url: "/openapi.json"');
    // No absolute URL anywhere: nothing is fetched from another host.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual(["/docs/favicon-32x32.png", "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]);
    for (const asset of assets) {
      const served = await call(asset, { key: null });
      expect(served.status, asset).toBe(200);
      expect((await served.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const js = await call("/docs/swagger-ui-bundle.js", { key: null });
    expect(js.headers.get("content-type")).toContain("javascript");
    expect(await js.text()).toContain("SwaggerUIBundle");
  });

  it("serves nothing else from the assets directory", async () => {
    expect((await call("/docs/package.json", { key: null })).status).toBe(404);
  });
});
