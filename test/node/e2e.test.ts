import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer } from "./helpers.ts";

let server: Awaited<ReturnType<typeof startTestServer>>;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });
const withKey = (key: string) => ({ "X-Api-Key": key });

describe("wrangler dev, end to end", () => {
  it("answers /ok and /info without a key", async () => {
    expect(await (await get("/ok")).json()).toEqual({ ok: true });
    const info = (await (await get("/info")).json()) as { metadata: { graphs: string[] } };
    expect(info.metadata.graphs).toEqual(["echo", "steps", "agent"]);
  });

  it("the official SDK reaches the server with the documented dev key, and is refused without it", async () => {
    const authorized = new Client({ apiUrl: server.url, apiKey: server.apiKey });
    // Any id: what matters is that the key got the request past authentication (404, not 401).
    const reached = await authorized.threads.get(crypto.randomUUID()).catch((e: { status: number; text: string }) => e);
    expect(reached).toMatchObject({ status: 404 });
    expect(JSON.parse((reached as { text: string }).text)).toEqual({ detail: "Not Found" });

    const refused = new Client({ apiUrl: server.url, apiKey: "lgp_wrong", defaultHeaders: {} });
    const denied = await refused.threads.get(crypto.randomUUID()).catch((e: { status: number; text: string }) => e);
    expect(denied).toMatchObject({ status: 401 });
    expect(JSON.parse((denied as { text: string }).text)).toEqual({ detail: "Invalid API key" });
  });

  it("creates a workspace key through the admin API and uses it", async () => {
    const created = await fetch(`${server.url}/api/v1/api-key`, {
      method: "POST",
      headers: { ...withKey(server.apiKey), "Content-Type": "application/json" },
      body: JSON.stringify({ description: "e2e" }),
    });
    expect(created.status).toBe(200);
    const { key } = (await created.json()) as { key: string };
    expect((await get("/metrics", withKey(key))).status).toBe(200);
    expect((await get("/api/v1/workspaces", withKey(key))).status).toBe(403);
  });

  it("rejects a body over the default 10 MiB limit with 413 JSON", async () => {
    const response = await fetch(`${server.url}/api/v1/workspaces`, {
      method: "POST",
      headers: { ...withKey(server.apiKey), "Content-Type": "application/json" },
      body: JSON.stringify({ display_name: "x".repeat(10 * 1024 * 1024 + 10) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ detail: "Request body is larger than the limit of 10485760 bytes" });
  });

  it("serves /docs with its assets from the Worker's static assets", async () => {
    const html = await (await get("/docs")).text();
    expect(html).toContain("/docs/swagger-ui-bundle.js");
    const bundle = await get("/docs/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
    const doc = (await (await get("/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/ok", "/info", "/metrics", "/api/v1/api-key"]));
  });

  it("runs the minute Cron Trigger handler", async () => {
    const response = await get("/cdn-cgi/handler/scheduled?cron=*+*+*+*+*");
    expect(response.status).toBe(200);
  });

  it("reports the requests it served in /metrics", async () => {
    const text = await (await get("/metrics", withKey(server.apiKey))).text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/ok",status="200"\} \d+$/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/api\/v1\/workspaces",status="413"\} 1$/m);
  });
});
