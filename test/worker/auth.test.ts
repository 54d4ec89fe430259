import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

interface CreatedKey {
  id: string;
  key: string;
  short_key: string;
  workspace_id: string | null;
  role: string;
  revoked_at: string | null;
}
interface Workspace {
  id: string;
  display_name: string;
  organization_id: string;
}

async function createWorkspace(name: string): Promise<Workspace> {
  const response = await call("/api/v1/workspaces", { method: "POST", json: { display_name: name } });
  expect(response.status).toBe(200);
  return json<Workspace>(response);
}

async function createKey(body: Record<string, unknown>): Promise<CreatedKey> {
  const response = await call("/api/v1/api-key", { method: "POST", json: body });
  expect(response.status).toBe(200);
  return json<CreatedKey>(response);
}

describe("API-key authentication", () => {
  it("rejects a missing key with 401 and a JSON detail", async () => {
    const response = await call("/api/v1/workspaces", { key: null });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "Missing API key: send it in the X-Api-Key header" });
  });

  it("rejects a wrong key with 401", async () => {
    const response = await call("/api/v1/workspaces", { key: "lgp_not_a_real_key" });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "Invalid API key" });
  });

  it("accepts the bootstrap key as an organization admin of the default organization", async () => {
    const response = await call("/api/v1/workspaces");
    expect(response.status).toBe(200);
    const workspaces = await json<Workspace[]>(response);
    expect(workspaces.map((w) => w.display_name)).toContain("Default workspace");
  });
});

describe("workspaces and keys (organization admin)", () => {
  it("creates a workspace and a key scoped to it; the secret is shown once and stored hashed", async () => {
    const workspace = await createWorkspace("Research");
    const created = await createKey({ description: "research bot", workspace_id: workspace.id });
    expect(created.key).toMatch(/^lgp_[A-Za-z0-9_-]{43}$/);
    expect(created.short_key).toBe(`${created.key.slice(0, 8)}...${created.key.slice(-4)}`);
    expect(created.workspace_id).toBe(workspace.id);
    expect(created.role).toBe("member");

    const listed = await json<Record<string, unknown>[]>(await call("/api/v1/api-key"));
    const entry = listed.find((k) => k.id === created.id);
    expect(entry).toBeDefined();
    expect(entry).not.toHaveProperty("key");

    const stored = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
      .bind(created.id)
      .first<Record<string, string>>();
    expect(stored?.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.values(stored ?? {})).not.toContain(created.key);

    // The new key authenticates, in its own workspace only.
    expect((await call("/api/v1/sessions", { key: created.key })).status).toBe(200);
    const elsewhere = await call("/api/v1/sessions", {
      key: created.key,
      headers: { "X-Tenant-Id": crypto.randomUUID() },
    });
    expect(elsewhere.status).toBe(403);
    expect((await json(elsewhere)).detail).toContain(`scoped to workspace ${workspace.id}`);
  });

  it("keeps non-admin keys away from administration", async () => {
    const member = await createKey({ description: "member" });
    const response = await call("/api/v1/workspaces", { key: member.key });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ detail: "This operation needs an organization-admin API key" });
    expect((await call("/api/v1/api-key", { method: "POST", key: member.key, json: {} })).status).toBe(403);
  });

  it("lets an organization-scoped admin key created through the API administer too", async () => {
    const admin = await createKey({ description: "second admin", role: "admin" });
    const response = await call("/api/v1/workspaces", {
      method: "POST",
      key: admin.key,
      json: { display_name: "By second admin" },
    });
    expect(response.status).toBe(200);
  });

  it("selects the workspace of an organization key with X-Tenant-Id, and refuses unknown ones", async () => {
    const workspace = await createWorkspace("Tenant pick");
    const orgKey = await createKey({ description: "org member" });
    expect((await call("/api/v1/sessions", { key: orgKey.key, headers: { "X-Tenant-Id": workspace.id } })).status).toBe(
      200,
    );
    const unknown = await call("/api/v1/sessions", {
      key: orgKey.key,
      headers: { "X-Tenant-Id": crypto.randomUUID() },
    });
    expect(unknown.status).toBe(403);
    expect((await json(unknown)).detail).toContain("does not exist in this key's organization");
  });

  it("revokes a key: it stops working and stays listed as revoked", async () => {
    const created = await createKey({ description: "short-lived" });
    expect((await call("/api/v1/sessions", { key: created.key })).status).toBe(200);
    const revoked = await call(`/api/v1/api-key/${created.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect((await json<CreatedKey>(revoked)).revoked_at).toEqual(expect.any(String));
    const after = await call("/api/v1/sessions", { key: created.key });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ detail: "API key has been revoked" });
    expect((await call(`/api/v1/api-key/${crypto.randomUUID()}`, { method: "DELETE" })).status).toBe(404);
  });

  it("refuses an expired key", async () => {
    const created = await createKey({ description: "expiring", expires_at: new Date(Date.now() + 1500).toISOString() });
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?")
      .bind("2000-01-01T00:00:00.000Z", created.id)
      .run();
    const response = await call("/api/v1/sessions", { key: created.key });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ detail: "API key has expired" });
  });

  it("validates key creation", async () => {
    const workspace = await createWorkspace("Validation");
    const adminInWorkspace = await call("/api/v1/api-key", {
      method: "POST",
      json: { role: "admin", workspace_id: workspace.id },
    });
    expect(adminInWorkspace.status).toBe(422);
    expect((await json<{ detail: { loc: string[] }[] }>(adminInWorkspace)).detail[0].loc).toEqual(["body", "role"]);
    const past = await call("/api/v1/api-key", { method: "POST", json: { expires_at: "2001-01-01T00:00:00Z" } });
    expect(past.status).toBe(422);
    const missingWorkspace = await call("/api/v1/api-key", {
      method: "POST",
      json: { workspace_id: crypto.randomUUID() },
    });
    expect(missingWorkspace.status).toBe(404);
  });
});
