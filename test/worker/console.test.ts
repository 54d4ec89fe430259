// GET /console/*: the console's shell and bundles from the Worker's assets, with no credentials.
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";

describe("console", () => {
  it("redirects /console to /console/ and serves the shell on every console path, with no key", async () => {
    const bare = await call("/console", { key: null, redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toMatch(/\/console\/$/);
    for (const path of ["/console/", "/console/threads/abc", "/console/traces/trace/x?run=y"]) {
      const page = await call(path, { key: null });
      expect(page.status, path).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("cache-control")).toBe("no-cache");
      expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(await page.text()).toContain('<div id="root"></div>');
    }
  });

  it("serves the hashed bundles for good, and a 404 naming any other asset", async () => {
    const html = await (await call("/console/", { key: null })).text();
    const script = /src="(\/console\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const bundle = await call(script!, { key: null });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect(bundle.headers.get("cache-control")).toContain("immutable");
    const missing = await call("/console/assets/app-NOPE.js", { key: null });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toContain("/console/assets/app-NOPE.js");
    // Outside the bundle's file names nothing of the assets directory is reachable.
    expect((await call("/console/assets/index.html", { key: null })).status).toBe(404);
    expect((await call("/console/assets/app-X.js.map", { key: null })).status).toBe(404);
  });

  it("serves reads only", async () => {
    expect((await call("/console/", { method: "POST", key: null })).status).toBe(404);
    expect((await call("/console/", { method: "DELETE" })).status).toBe(404);
  });
});
