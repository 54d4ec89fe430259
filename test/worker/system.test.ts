import { describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

describe("system endpoints", () => {
  it("GET /ok answers without a key", async () => {
    const response = await call("/ok", { key: null });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("GET /info reports versions, flags and graphs without a key", async () => {
    const response = await call("/info", { key: null });
    expect(response.status).toBe(200);
    const info = await json<{
      version: string;
      langgraph_js_version: string;
      flags: Record<string, boolean>;
      metadata: { graphs: string[] };
    }>(response);
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.langgraph_js_version).toBe("1.4.17");
    expect(info.flags).toMatchObject({ assistants: expect.any(Boolean), crons: expect.any(Boolean) });
    expect(info.metadata.graphs).toEqual([
      "echo",
      "steps",
      "agent",
      "nested",
      "memory",
      "factory",
      "approval",
      "weather",
    ]);
  });

  it("sends a request id on every response", async () => {
    const response = await call("/ok", { key: null, headers: { "X-Request-Id": "req-123" } });
    expect(response.headers.get("x-request-id")).toBe("req-123");
    expect((await call("/ok", { key: null })).headers.get("x-request-id")).toMatch(/\S{8,}/);
  });
});

describe("metrics", () => {
  it("needs a key", async () => {
    expect((await call("/metrics", { key: null })).status).toBe(401);
  });

  it("is for organization admins only: it shows every workspace's traffic", async () => {
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Metrics readers" } }),
    );
    const member = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
    );
    const orgMember = await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: {} }));
    const admin = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { role: "admin" } }),
    );
    for (const key of [member.key, orgMember.key]) {
      const refused = await call("/metrics", { key });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ detail: "This operation needs an organization-admin API key" });
    }
    for (const key of [admin.key, undefined]) {
      const allowed = await call("/metrics", { key });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain("http_requests_total");
    }
  });

  it("counts requests by route pattern and status, with latency histograms", async () => {
    // Other files share the runtime and its counters: this test's invalid workspace create adds one.
    const invalidCreates = async () =>
      Number(
        (await (await call("/metrics")).text()).match(
          /^http_requests_total\{method="POST",route="\/api\/v1\/workspaces",status="422"\} (\d+)$/m,
        )?.[1] ?? 0,
      );
    const before = await invalidCreates();
    await call("/ok", { key: null });
    await call("/ok", { key: null });
    await call("/definitely/unknown", { key: null });
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: 7 } });
    const response = await call("/metrics");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/ok",status="200"\} ([2-9]|\d\d+)$/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="unmatched",status="404"\} \d+$/m);
    expect(await invalidCreates()).toBe(before + 1);
    expect(text).toContain("# TYPE http_request_duration_seconds histogram");
    expect(text).toMatch(
      /^http_request_duration_seconds_bucket\{method="GET",route="\/ok",status="200",le="\+Inf"\} \d+$/m,
    );
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/ok",status="200"\} \d+$/m);
  });
});
