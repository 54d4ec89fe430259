import { describe, expect, it } from "vitest";
import { isPublicRequest } from "../../src/app.ts";
import { UiCatalog } from "../../src/ui/service.ts";
import { call } from "./helpers.ts";

const catalog = new UiCatalog([
  { id: "weather", files: ["entrypoint.css", "entrypoint.js"] },
  { id: "my.graph-2", files: ["entrypoint.js"] },
  { id: "empty", files: [] },
]);

describe("UI catalog: the fragment and the served files", () => {
  it("renders the official fragment: links, then the script whose onload calls the graph's global", () => {
    expect(catalog.fragment("weather", "card", "agents.example.com")).toBe(
      '<link rel="stylesheet" href="//agents.example.com/ui/weather/entrypoint.css" />\n' +
        `<script src="//agents.example.com/ui/weather/entrypoint.js" onload='__LGUI_weather.render("card", "{{shadowRootId}}")'></script>`,
    );
    expect(catalog.fragment("my.graph-2", "x", "agents.example.com")).toBe(
      `<script src="//agents.example.com/ui/my.graph-2/entrypoint.js" onload='__LGUI_my_graph_2.render("x", "{{shadowRootId}}")'></script>`,
    );
  });

  it("prefixes http: for localhost and 127.0.0.1 only, with or without a port", () => {
    for (const host of ["localhost", "localhost:2024", "127.0.0.1", "127.0.0.1:8787"]) {
      expect(catalog.fragment("my.graph-2", "x", host), host).toContain(`src="http://${host}/ui/`);
    }
    for (const host of ["localhost.example.com", "127.0.0.10", "example.com:8787"]) {
      expect(catalog.fragment("my.graph-2", "x", host), host).toContain(`src="//${host}/ui/`);
    }
  });

  it("keeps a quote in the name or the host inside its attribute", () => {
    expect(catalog.fragment("my.graph-2", "a'b&<c>", 'h"x')).toBe(
      `<script src="//h&quot;x/ui/my.graph-2/entrypoint.js" onload='__LGUI_my_graph_2.render("a&#39;b&amp;&lt;c&gt;", "{{shadowRootId}}")'></script>`,
    );
  });

  it("has no fragment for a graph without UI files", () => {
    expect(catalog.fragment("echo", "x", "h")).toBeNull();
    expect(catalog.fragment("empty", "x", "h")).toBeNull();
  });

  it("serves only listed files, with their MIME type", () => {
    expect(catalog.asset("weather", "entrypoint.js")).toEqual({
      path: "/ui/weather/entrypoint.js",
      contentType: "text/javascript; charset=utf-8",
    });
    expect(catalog.asset("weather", "entrypoint.css")?.contentType).toBe("text/css; charset=utf-8");
    for (const file of ["../docs/swagger-ui.css", "..", "entrypoint.js/", "ENTRYPOINT.JS", ""]) {
      expect(catalog.asset("weather", file), file).toBeNull();
    }
    expect(catalog.asset("my.graph-2", "entrypoint.css")).toBeNull();
    expect(catalog.asset("__proto__", "entrypoint.js")).toBeNull();
  });
});

describe("UI routes in the Worker", () => {
  it("POST /ui/{graph_id} needs a key; GET of a bundle file does not", async () => {
    expect((await call("/ui/weather", { method: "POST", json: { name: "weather" }, key: null })).status).toBe(401);
    const fragment = await call("/ui/weather", { method: "POST", json: { name: "weather" } });
    expect(fragment.status).toBe(200);
    expect(await fragment.text()).toContain('src="//platform.test/ui/weather/entrypoint.js"');
    const script = await call("/ui/weather/entrypoint.js", { key: null });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toContain("__LGUI_weather");
  });

  it("only reads of /ui/ are public, as in the official server (whose custom auth skips GET /ui too)", async () => {
    expect(isPublicRequest("/ui/weather/entrypoint.js", "GET")).toBe(true);
    expect(isPublicRequest("/ui/weather/entrypoint.js", "HEAD")).toBe(true);
    expect(isPublicRequest("/ui/weather", "POST")).toBe(false);
    expect(isPublicRequest("/ui/weather/entrypoint.js", "DELETE")).toBe(false);
    const head = await call("/ui/weather/entrypoint.css", { method: "HEAD", key: null });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("answers the official plain-text 404s", async () => {
    const noUi = await call("/ui/echo", { method: "POST", json: { name: "weather" } });
    expect(noUi.status).toBe(404);
    expect(await noUi.text()).toBe('UI not found for agent "echo"');
    const noFile = await call("/ui/weather/other.js", { key: null });
    expect(noFile.status).toBe(404);
    expect(await noFile.text()).toBe("File not found");
  });
});
