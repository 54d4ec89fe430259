import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { corsMiddleware } from "../../src/http/cors.ts";

function appWith(config: Parameters<typeof corsMiddleware>[0]) {
  const app = new Hono();
  app.use("*", corsMiddleware(config));
  app.get("/x", (c) => c.text("ok"));
  return app;
}

describe("CORS from langgraph.json http.cors", () => {
  it("allows listed origins and origins matching allow_origin_regex, and nothing else", async () => {
    const app = appWith({
      allow_origins: ["https://app.example"],
      allow_origin_regex: "https://.*\\.preview\\.example",
    });
    const allowed = await app.request("/x", { headers: { Origin: "https://app.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const matched = await app.request("/x", { headers: { Origin: "https://pr-1.preview.example" } });
    expect(matched.headers.get("access-control-allow-origin")).toBe("https://pr-1.preview.example");
    const denied = await app.request("/x", { headers: { Origin: "https://evil.example" } });
    expect(denied.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("echoes the origin when credentials are allowed with a wildcard, and keeps the required exposed headers", async () => {
    const app = appWith({ allow_origins: ["*"], allow_credentials: true, expose_headers: ["x-custom"], max_age: 600 });
    const response = await app.request("/x", {
      method: "OPTIONS",
      headers: { Origin: "https://a.example", "Access-Control-Request-Method": "GET" },
    });
    expect(response.headers.get("access-control-allow-origin")).toBe("https://a.example");
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-max-age")).toBe("600");
    const simple = await app.request("/x", { headers: { Origin: "https://a.example" } });
    expect(simple.headers.get("access-control-expose-headers")).toContain("x-custom");
    expect(simple.headers.get("access-control-expose-headers")).toContain("content-location");
  });
});
