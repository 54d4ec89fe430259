// POST /api/v1/runs/query across projects and day shards, in a workspace of its own.
import { beforeAll, describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

type Run = { id: string; name: string; run_type: string; start_time: string; session_id: string } & Record<
  string,
  unknown
>;
type Page = { runs: Run[]; cursors: { next: string | null } };

let key: string;
const names: Record<string, string> = {};

function sdkRun(
  name: string,
  start: string,
  project: string,
  parent?: { id: string; dotted_order: string },
  fields: Record<string, unknown> = {},
) {
  const id = crypto.randomUUID();
  names[id] = name;
  const segment = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
  return {
    id,
    name,
    run_type: "chain",
    start_time: start,
    session_name: project,
    dotted_order: parent ? `${parent.dotted_order}.${segment}` : segment,
    trace_id: parent ? parent.dotted_order.slice(22, 58) : id,
    parent_run_id: parent?.id,
    ...fields,
  };
}

const query = async (body: Record<string, unknown>) => {
  const response = await call("/api/v1/runs/query", { method: "POST", key, json: body });
  expect(response.status).toBe(200);
  return json<Page>(response);
};
const namesOf = (page: Page) => page.runs.map((run) => run.name);

beforeAll(async () => {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Query tests" } }),
  );
  key = (
    await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }))
  ).key;
  const agent = sdkRun("agent", "2026-11-19T23:59:00.000Z", "alpha", undefined, {
    tags: ["vip"],
    extra: { metadata: { user: "ada" } },
  });
  const tool = sdkRun("search-tool", "2026-11-19T23:59:30.000Z", "alpha", agent, {
    run_type: "tool",
    inputs: { query: "weather" },
  });
  const chat = sdkRun("chat", "2026-11-20T08:00:00.000Z", "alpha", undefined, {
    run_type: "llm",
    error: "rate limited",
    end_time: "2026-11-20T08:00:09.000Z",
  });
  const other = sdkRun("beta-root", "2026-11-20T09:00:00.000Z", "beta", undefined, {
    end_time: "2026-11-20T09:00:01.000Z",
  });
  const response = await call("/api/v1/runs/batch", {
    method: "POST",
    key,
    json: { post: [agent, tool, chat, other] },
  });
  expect(await json(response)).toMatchObject({ accepted: 4, errors: [] });
});

describe("runs query", () => {
  it("returns runs of every project and day, newest first, and pages with a cursor", async () => {
    expect(namesOf(await query({}))).toEqual(["beta-root", "chat", "search-tool", "agent"]);
    expect(namesOf(await query({ order: "asc", limit: 2 }))).toEqual(["agent", "search-tool"]);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await query({ limit: 1, cursor });
      seen.push(...namesOf(page));
      cursor = page.cursors.next;
    } while (cursor);
    expect(seen).toEqual(["beta-root", "chat", "search-tool", "agent"]);
  });

  it("refuses filters and ids that together would not fit one statement", async () => {
    const names = Array.from({ length: 50 }, (_, i) => `eq(name, "n${i}")`).join(", ");
    const response = await call("/api/v1/runs/query", {
      method: "POST",
      key,
      json: { filter: `or(${names})`, tree_filter: `or(${names})` },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(
      "tree_filter: Invalid filter at position 0: expected filters with at most 80 values together, found 100 values",
    );
    const ids = await call("/api/v1/runs/query", {
      method: "POST",
      key,
      json: { id: Array.from({ length: 51 }, () => crypto.randomUUID()) },
    });
    expect(ids.status).toBe(422);
  });

  it("narrows by project, run fields and time", async () => {
    const [alpha] = await json<{ id: string }[]>(await call("/api/v1/sessions?name=alpha", { key }));
    expect(namesOf(await query({ session: [alpha.id] }))).toEqual(["chat", "search-tool", "agent"]);
    expect(namesOf(await query({ is_root: true }))).toEqual(["beta-root", "chat", "agent"]);
    expect(namesOf(await query({ error: true }))).toEqual(["chat"]);
    expect(namesOf(await query({ run_type: "tool" }))).toEqual(["search-tool"]);
    expect(namesOf(await query({ start_time: "2026-11-20T00:00:00Z" }))).toEqual(["beta-root", "chat"]);
    const agentId = Object.keys(names).find((id) => names[id] === "agent")!;
    expect(namesOf(await query({ trace: agentId, order: "asc" }))).toEqual(["agent", "search-tool"]);
    expect(namesOf(await query({ parent_run: agentId }))).toEqual(["search-tool"]);
    expect(namesOf(await query({ id: [agentId] }))).toEqual(["agent"]);
  });

  it("applies filter, trace_filter and tree_filter", async () => {
    expect(namesOf(await query({ filter: 'gt(latency, "5s")' }))).toEqual(["chat"]);
    expect(namesOf(await query({ filter: 'and(eq(input_key, "query"), eq(input_value, "weather"))' }))).toEqual([
      "search-tool",
    ]);
    expect(namesOf(await query({ filter: 'and(eq(metadata_key, "user"), eq(metadata_value, "ada"))' }))).toEqual([
      "agent",
    ]);
    expect(namesOf(await query({ trace_filter: 'has(tags, "vip")' }))).toEqual(["search-tool", "agent"]);
    expect(namesOf(await query({ tree_filter: 'eq(run_type, "tool")', is_root: true }))).toEqual(["agent"]);
    expect(namesOf(await query({ filter: 'search("rate")' }))).toEqual(["chat"]);
  });

  it("returns the selected fields and those the SDKs' Run needs", async () => {
    const page = await query({ select: ["name", "error"], run_type: "llm" });
    expect(page.runs).toEqual([
      {
        id: expect.any(String),
        name: "chat",
        error: "rate limited",
        start_time: expect.stringMatching(/^2026-11-20T08:00:00\.000/),
        run_type: "llm",
        trace_id: expect.any(String),
        dotted_order: expect.stringMatching(/^20261120T080000000000Z/),
        status: "error",
        session_id: expect.any(String),
        app_path: expect.stringMatching(/^\/projects\/p\//),
      },
    ]);
  });

  it("answers a bad filter, cursor or limit with 400 and a positioned detail", async () => {
    const bad = await call("/api/v1/runs/query", { method: "POST", key, json: { filter: 'eq(run_type "llm")' } });
    expect(bad.status).toBe(400);
    expect((await json<{ detail: string }>(bad)).detail).toMatch(/^filter: Invalid filter at position 12: expected/);
    const badTrace = await call("/api/v1/runs/query", { method: "POST", key, json: { trace_filter: "gt(name, 3)" } });
    expect((await json<{ detail: string }>(badTrace)).detail).toMatch(/^trace_filter: Invalid filter at position 3/);
    expect((await call("/api/v1/runs/query", { method: "POST", key, json: { limit: 101 } })).status).toBe(400);
    expect((await call("/api/v1/runs/query", { method: "POST", key, json: { cursor: "%%%" } })).status).toBe(400);
    expect((await call("/api/v1/runs/query", { method: "POST", key, json: { session: ["x"] } })).status).toBe(422);
  });

  it("validates filters without running them", async () => {
    const ok = await call("/api/v1/runs/query/validate", {
      method: "POST",
      key,
      json: { filter: 'eq(run_type, "llm")' },
    });
    expect(await json(ok)).toEqual({ valid: true, errors: [] });
    const bad = await json<{ valid: boolean; errors: { field: string; position: number }[] }>(
      await call("/api/v1/runs/query/validate", {
        method: "POST",
        key,
        json: { filter: "eq(run_type", tree_filter: 'nope(x, "y")' },
      }),
    );
    expect(bad.valid).toBe(false);
    expect(bad.errors.map((e) => [e.field, e.position])).toEqual([
      ["filter", 11],
      ["tree_filter", 0],
    ]);
  });

  it("sees nothing of another workspace", async () => {
    const page = await json<Page>(
      await call("/api/v1/runs/query", { method: "POST", json: { filter: 'eq(name, "search-tool")' } }),
    );
    expect(page.runs.filter((run) => Object.keys(names).includes(run.id))).toEqual([]);
  });
});
