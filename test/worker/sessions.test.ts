// Tracing projects (`/api/v1/sessions`) as the langsmith SDK uses them, with workspace isolation.

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tracesDatabase } from "../../src/tracing/directory.ts";
import { projectForName } from "../../src/tracing/projects/service.ts";
import { call, json } from "./helpers.ts";

type Session = {
  id: string;
  name: string;
  description: string | null;
  extra: Record<string, unknown> | null;
  tenant_id: string;
  trace_tier: string | null;
  end_time: string | null;
};

const create = (body: unknown, query = "", key?: string) =>
  call(`/api/v1/sessions${query}`, { method: "POST", json: body, key });
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

describe("tracing projects", () => {
  it("creates, reads, lists, updates and deletes a project", async () => {
    const name = unique("proj");
    const response = await create({ name, description: "evals", extra: { metadata: { team: "ml" } } });
    expect(response.status).toBe(200);
    const project = await json<Session>(response);
    expect(project).toMatchObject({ name, description: "evals", extra: { metadata: { team: "ml" } }, end_time: null });
    expect(project.id).toMatch(/^[0-9a-f-]{36}$/);

    expect(await json<Session>(await call(`/api/v1/sessions/${project.id}`))).toEqual(project);
    // The SDK's readProject(name): an array, empty when absent.
    expect(
      (await json<Session[]>(await call(`/api/v1/sessions?name=${encodeURIComponent(name)}`))).map((s) => s.id),
    ).toEqual([project.id]);
    expect(await json<Session[]>(await call(`/api/v1/sessions?name=${unique("absent")}`))).toEqual([]);
    expect(
      (await json<Session[]>(await call(`/api/v1/sessions?id=${project.id}&id=${crypto.randomUUID()}`))).map(
        (s) => s.id,
      ),
    ).toEqual([project.id]);

    const patched = await call(`/api/v1/sessions/${project.id}`, {
      method: "PATCH",
      json: { description: "renamed", end_time: "2026-11-21T10:00:00Z", trace_tier: "longlived" },
    });
    expect(patched.status).toBe(200);
    expect(await json<Session>(patched)).toMatchObject({
      name,
      description: "renamed",
      end_time: "2026-11-21T10:00:00.000Z",
      trace_tier: "longlived",
    });

    expect((await call(`/api/v1/sessions/${project.id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await call(`/api/v1/sessions/${project.id}`);
    expect(gone.status).toBe(404);
    expect(await json(gone)).toEqual({ detail: `Tracing project ${project.id} not found` });
    expect((await call(`/api/v1/sessions/${project.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("refuses a duplicate name unless upsert=true, which updates and returns the existing project", async () => {
    const name = unique("dup");
    const first = await json<Session>(await create({ name }));
    const again = await create({ name });
    expect(again.status).toBe(409);
    expect((await json<{ detail: string }>(again)).detail).toContain(name);
    const upserted = await create({ name, description: "now described" }, "?upsert=true");
    expect(upserted.status).toBe(200);
    expect(await json<Session>(upserted)).toMatchObject({ id: first.id, description: "now described" });
    const other = await json<Session>(await create({ name: unique("other") }));
    const clash = await call(`/api/v1/sessions/${other.id}`, { method: "PATCH", json: { name } });
    expect(clash.status).toBe(409);
  });

  it("filters by name_contains and pages with limit and offset", async () => {
    const marker = crypto.randomUUID().slice(0, 8);
    for (const suffix of ["a", "b", "c"]) await create({ name: `Search_${marker}_${suffix}` });
    const found = await json<Session[]>(await call(`/api/v1/sessions?name_contains=search_${marker}&limit=2&offset=1`));
    expect(found.map((s) => s.name)).toEqual([`Search_${marker}_b`, `Search_${marker}_c`]);
  });

  it("answers bad input with 422 naming the field", async () => {
    const noName = await create({ description: "x" });
    expect(noName.status).toBe(422);
    expect(JSON.stringify(await noName.json())).toContain("name");
    expect((await call("/api/v1/sessions/not-a-uuid")).status).toBe(422);
    expect((await call("/api/v1/sessions?limit=500")).status).toBe(422);
    expect((await create({ name: unique("t"), end_time: "soon" })).status).toBe(422);
  });

  it("keeps projects inside their workspace", async () => {
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Tracing tenant" } }),
    );
    const { key } = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
    );
    const mine = await json<Session>(await create({ name: unique("mine") }, "", key));
    expect(mine.tenant_id).toBe(workspace.id);
    expect((await call(`/api/v1/sessions/${mine.id}`)).status).toBe(404);
    expect((await call(`/api/v1/sessions/${mine.id}`, { key })).status).toBe(200);
    const foreign = await call("/api/v1/sessions", { key, headers: { "X-Tenant-Id": crypto.randomUUID() } });
    expect(foreign.status).toBe(403);
    expect((await call("/api/v1/sessions", { key: null })).status).toBe(401);
  });

  it("keeps project ids per workspace: another workspace's id is neither confirmed nor reached", async () => {
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Tracing ids" } }),
    );
    const { key } = await json<{ key: string }>(
      await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
    );
    const id = crypto.randomUUID();
    const theirs = await json<Session>(await create({ id, name: unique("theirs") }));
    // The same id in another workspace is a new project there, not a 409 that confirms the id exists.
    const response = await create({ id, name: unique("mine") }, "", key);
    expect(response.status, await response.clone().text()).toBe(200);
    const mine = await json<Session>(response);
    expect(mine).toMatchObject({ id, tenant_id: workspace.id });
    expect((await json<Session>(await call(`/api/v1/sessions/${id}`))).name).toBe(theirs.name);
    expect((await json<Session>(await call(`/api/v1/sessions/${id}`, { key }))).name).toBe(mine.name);
    // Within one workspace an id is still taken.
    const again = await create({ id, name: unique("again") }, "", key);
    expect(again.status).toBe(409);
    expect(await json(again)).toEqual({ detail: `A tracing project with id ${id} already exists` });

    // A run of the second workspace posted to that id lands in its own project only.
    const runId = crypto.randomUUID();
    const start = "2026-10-01T10:00:00.000Z";
    const run = {
      id: runId,
      name: "r",
      run_type: "chain",
      start_time: start,
      session_id: id,
      trace_id: runId,
      dotted_order: `20261001T100000000000Z${runId}`,
    };
    expect((await call("/api/v1/runs/batch", { method: "POST", json: { post: [run] }, key })).status).toBe(202);
    const read = await call(`/api/v1/runs/${runId}`, { key });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: runId, session_id: id });
    expect((await call(`/api/v1/runs/${runId}`)).status).toBe(404);

    // Deleting it in one workspace leaves the other's.
    expect((await call(`/api/v1/sessions/${id}`, { method: "DELETE", key })).status).toBe(200);
    expect((await call(`/api/v1/sessions/${id}`)).status).toBe(200);
  });

  it("creates a project on first use of its name, once", async () => {
    const name = unique("auto");
    const workspaceId = (await json<Session>(await create({ name: unique("probe") }))).tenant_id;
    const db = tracesDatabase(env, workspaceId);
    const [a, b] = await Promise.all([projectForName(db, workspaceId, name), projectForName(db, workspaceId, name)]);
    expect(a.id).toBe(b.id);
    expect((await json<Session[]>(await call(`/api/v1/sessions?name=${name}`))).map((s) => s.id)).toEqual([a.id]);
  });
});
