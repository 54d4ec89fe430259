// The tracing API as the official langsmith SDKs call it, byte for byte where it matters: the Python
// SDK's nulls for unset fields, `?upsert=True`, runs posted without dotted_order, the JS SDK's
// `listRuns` body, and the generated v2 client's repeated API key header.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { RUN_SELECT_FIELDS, RunV2Schema } from "../../src/tracing/v2/schemas.ts";
import { BOOTSTRAP_KEY, call, json } from "./helpers.ts";

type Run = Record<string, unknown> & {
  id: string;
  name: string;
  trace_id: string;
  dotted_order: string | null;
  status: string;
  tags: string[];
};
type Page = { runs: Run[]; cursors: { next: string | null } };

let key: string;
let workspaceId: string;

beforeAll(async () => {
  const workspace = await json<{ id: string }>(
    await call("/api/v1/workspaces", { method: "POST", json: { display_name: "SDK compatibility tests" } }),
  );
  workspaceId = workspace.id;
  key = (
    await json<{ key: string }>(await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }))
  ).key;
});

const post = (path: string, body: unknown) => call(path, { method: "POST", key, json: body });
const getRun = async (id: string) => json<Run>(await call(`/api/v1/runs/${id}`, { key }));
const query = async (body: Record<string, unknown>) => {
  const response = await post("/api/v1/runs/query", body);
  expect(response.status).toBe(200);
  return json<Page>(response);
};
const newProject = async (name = `compat-${crypto.randomUUID()}`) =>
  json<{ id: string; name: string; description: string | null }>(await post("/api/v1/sessions", { name }));

/** `Client.create_run(...)` outside a trace: POST /runs without trace_id or dotted_order (Python datetimes carry +00:00). */
function pythonCreateRun(name: string, start: string, project: string, fields: Record<string, unknown> = {}) {
  return {
    id: crypto.randomUUID(),
    session_name: project,
    name,
    inputs: { question: name },
    run_type: "chain",
    start_time: start,
    extra: { runtime: { sdk: "langsmith-py", sdk_version: "0.14.0" }, metadata: {} },
    ...fields,
  };
}

/** What `Client.update_run(run_id, outputs=..., end_time=...)` PATCHes when it knows no trace_id/dotted_order. */
function pythonUpdateRun(id: string, fields: Record<string, unknown>) {
  return {
    id,
    name: null,
    run_type: null,
    trace_id: null,
    parent_run_id: null,
    dotted_order: null,
    tags: null,
    extra: null,
    session_id: null,
    session_name: null,
    ...fields,
  };
}

describe("runs read by the SDKs", () => {
  it("GET /runs/{id} carries attachments only under s3_urls, never an attachments key (Python read_run)", async () => {
    const project = `read-${crypto.randomUUID()}`;
    const run = pythonCreateRun("read me", "2026-11-20T10:00:00.250000+00:00", project);
    expect((await post("/api/v1/runs", run)).status).toBe(202);
    const read = await getRun(run.id);
    expect(read).not.toHaveProperty("attachments");
    expect(read.s3_urls).toEqual({});
    expect(read).toMatchObject({ id: run.id, name: "read me", run_type: "chain" });
  });

  it("takes Python's update_run PATCH with nulls for every unset field, and keeps what the nulls name", async () => {
    const project = `update-${crypto.randomUUID()}`;
    const run = pythonCreateRun("to update", "2026-11-20T10:00:00.250000+00:00", project, { tags: ["keep"] });
    expect((await post("/api/v1/runs", run)).status).toBe(202);
    const patch = pythonUpdateRun(run.id, {
      end_time: "2026-11-20T10:00:02.500000+00:00",
      outputs: { answer: 42 },
    });
    const response = await call(`/api/v1/runs/${run.id}`, { method: "PATCH", key, json: patch });
    expect(response.status).toBe(202);
    const read = await getRun(run.id);
    expect(read).toMatchObject({ status: "success", name: "to update", tags: ["keep"], outputs: { answer: 42 } });
    expect(read.extra).toMatchObject({ runtime: { sdk: "langsmith-py" } });
  });

  it("still reports a required field sent as null as missing", async () => {
    const run = pythonCreateRun("no type", "2026-11-20T10:00:00Z", "default", { run_type: null });
    const response = await post("/api/v1/runs", run);
    expect(response.status).toBe(422);
    expect((await json<{ detail: string }>(response)).detail).toMatch(/run_type/);
  });
});

describe("lineage of runs posted without dotted_order", () => {
  it("derives trace_id and dotted_order for roots and for children of known parents, as LangSmith does", async () => {
    const project = `lineage-${crypto.randomUUID()}`;
    const root = pythonCreateRun("root", "2026-11-20T10:00:00.250000+00:00", project);
    expect((await post("/api/v1/runs", root)).status).toBe(202);
    // A child in a later request: its parent is found in the shard.
    const child = pythonCreateRun("child", "2026-11-20T10:00:01.500000+00:00", project, { parent_run_id: root.id });
    expect((await post("/api/v1/runs", child)).status).toBe(202);
    // A grandchild and its own child in one batch, the deeper one first.
    const grandchild = pythonCreateRun("grandchild", "2026-11-20T10:00:02Z", project, { parent_run_id: child.id });
    const leaf = pythonCreateRun("leaf", "2026-11-20T10:00:03.000001Z", project, { parent_run_id: grandchild.id });
    expect((await post("/api/v1/runs/batch", { post: [leaf, grandchild] })).status).toBe(202);
    // A child started the next day lives in another shard than its parent.
    const late = pythonCreateRun("late", "2026-11-21T00:00:01Z", project, { parent_run_id: root.id });
    expect((await post("/api/v1/runs", late)).status).toBe(202);

    const rootOrder = `20261120T100000250000Z${root.id}`;
    const childOrder = `${rootOrder}.20261120T100001500000Z${child.id}`;
    const grandchildOrder = `${childOrder}.20261120T100002000000Z${grandchild.id}`;
    expect(await getRun(root.id)).toMatchObject({ trace_id: root.id, dotted_order: rootOrder, is_root: true });
    expect(await getRun(child.id)).toMatchObject({ trace_id: root.id, dotted_order: childOrder });
    expect(await getRun(grandchild.id)).toMatchObject({ trace_id: root.id, dotted_order: grandchildOrder });
    expect(await getRun(leaf.id)).toMatchObject({
      trace_id: root.id,
      dotted_order: expect.stringMatching(new RegExp(`^${grandchildOrder}\\.20261120T10000300000[01]Z${leaf.id}$`)),
      parent_run_ids: [root.id, child.id, grandchild.id],
    });
    expect(await getRun(late.id)).toMatchObject({
      trace_id: root.id,
      dotted_order: `${rootOrder}.20261121T000001000000Z${late.id}`,
    });

    // Every run of the project lists with a dotted_order string (the SDKs' Run needs one).
    const [session] = await json<{ id: string }[]>(await call(`/api/v1/sessions?name=${project}`, { key }));
    const page = await query({ session: [session.id] });
    expect(page.runs).toHaveLength(5);
    for (const run of page.runs) expect(typeof run.dotted_order).toBe("string");
  });

  it("lists a child whose parent is unknown with an empty dotted_order, not null", async () => {
    const project = `orphan-${crypto.randomUUID()}`;
    const parent = crypto.randomUUID();
    const orphan = pythonCreateRun("orphan", "2026-11-20T10:00:00Z", project, { parent_run_id: parent });
    expect((await post("/api/v1/runs", orphan)).status).toBe(202);
    expect(await getRun(orphan.id)).toMatchObject({ dotted_order: "", trace_id: parent });
  });
});

describe("/runs/query as the SDKs send it", () => {
  let project: string;
  let runs: Record<string, ReturnType<typeof pythonCreateRun>>;
  beforeAll(async () => {
    const session = await newProject();
    project = session.id;
    runs = {
      weather: pythonCreateRun("weather", "2026-11-20T11:00:00Z", session.name, {
        inputs: { question: "Is it raining in Paris?" },
      }),
      stream: pythonCreateRun("stream", "2026-11-20T11:00:01Z", session.name, {
        run_type: "llm",
        events: [
          { name: "start", time: "2026-11-20T11:00:01.000000+00:00" },
          { name: "new_token", time: "2026-11-20T11:00:01.400000+00:00", kwargs: { token: "Hi" } },
          { name: "new_token", time: "2026-11-20T11:00:01.600000+00:00", kwargs: { token: "!" } },
        ],
      }),
    };
    expect((await post("/api/v1/runs/batch", { post: Object.values(runs) })).status).toBe(202);
  });

  it("takes the JS SDK's listRuns body, with start_time, session and the others null", async () => {
    const page = await query({
      session: [project],
      run_type: undefined,
      query: null,
      filter: null,
      trace_filter: null,
      tree_filter: null,
      parent_run: null,
      start_time: null,
      error: null,
      trace: null,
      is_root: null,
      select: ["id", "name"],
    });
    expect(page.runs.map((run) => run.name).sort()).toEqual(["stream", "weather"]);
    const all = await query({ session: null, start_time: null, id: [runs.weather.id] });
    expect(all.runs.map((run) => run.id)).toEqual([runs.weather.id]);
  });

  it("returns the fields the SDKs' Run needs whatever select names", async () => {
    const page = await query({ session: [project], select: ["outputs"] });
    for (const run of page.runs) {
      expect(Object.keys(run)).toEqual(
        expect.arrayContaining(["id", "name", "start_time", "run_type", "trace_id", "dotted_order", "outputs"]),
      );
      expect(run.trace_id).toBe(run.id);
      expect(run).not.toHaveProperty("inputs");
    }
  });

  it("applies query as full-text search", async () => {
    const page = await query({ session: [project], query: "raining" });
    expect(page.runs.map((run) => run.name)).toEqual(["weather"]);
    expect((await query({ session: [project], query: "nowhere to be found" })).runs).toEqual([]);
  });

  it("returns first_token_time, the time of the first new_token event, selected or whole", async () => {
    const selected = await query({ session: [project], select: ["first_token_time"], run_type: "llm" });
    expect(selected.runs.map((run) => run.first_token_time)).toEqual(["2026-11-20T11:00:01.400000+00:00"]);
    const whole = await query({ session: [project] });
    const byName = Object.fromEntries(whole.runs.map((run) => [run.name, run.first_token_time]));
    expect(byName).toEqual({ stream: "2026-11-20T11:00:01.400000+00:00", weather: null });
    expect((await getRun(runs.stream.id)).first_token_time).toBe("2026-11-20T11:00:01.400000+00:00");
  });
});

describe("projects as the SDKs create and update them", () => {
  it("takes Python's ?upsert=True (and 1, False, 0) on create", async () => {
    const name = `upsert-${crypto.randomUUID()}`;
    const body = { name, extra: null, description: null };
    const first = await call("/api/v1/sessions?upsert=True", { method: "POST", key, json: body });
    expect(first.status).toBe(200);
    const id = (await json<{ id: string }>(first)).id;
    const again = await call("/api/v1/sessions?upsert=True", {
      method: "POST",
      key,
      json: { ...body, description: "now described" },
    });
    expect(await json(again)).toMatchObject({ id, description: "now described" });
    const one = await call("/api/v1/sessions?upsert=1", { method: "POST", key, json: body });
    expect(await json(one)).toMatchObject({ id, description: "now described" });
    for (const no of ["False", "false", "0"])
      expect((await call(`/api/v1/sessions?upsert=${no}`, { method: "POST", key, json: body })).status).toBe(409);
    expect((await call("/api/v1/sessions?upsert=yes", { method: "POST", key, json: body })).status).toBe(422);
  });

  it("takes update_project's name: null and keeps what other nulls name", async () => {
    const created = await json<{ id: string; name: string }>(
      await post("/api/v1/sessions", { name: `update-${crypto.randomUUID()}`, description: "first" }),
    );
    const patch = (body: unknown) => call(`/api/v1/sessions/${created.id}`, { method: "PATCH", key, json: body });
    const ended = await patch({ name: null, extra: null, description: null, end_time: "2026-11-20T12:00:00+00:00" });
    expect(ended.status).toBe(200);
    expect(await json(ended)).toMatchObject({
      name: created.name,
      description: "first",
      end_time: "2026-11-20T12:00:00.000Z",
    });
    const described = await json(await patch({ name: null, extra: { metadata: { a: 1 } }, description: "second" }));
    expect(described).toMatchObject({ name: created.name, description: "second", extra: { metadata: { a: 1 } } });
  });
});

describe("the generated v2 client", () => {
  /** The v2 client's request: the key header twice (X-API-Key and x-api-key), merged into `k, k`. */
  const v2 = (path: string, init: RequestInit & { json?: unknown; keys?: string[] } = {}) => {
    const headers = new Headers({ "Content-Type": "application/json" });
    for (const k of init.keys ?? [key, key]) headers.append("x-api-key", k);
    return exports.default.fetch(
      new Request(`http://platform.test${path}`, {
        method: init.method ?? (init.json === undefined ? "GET" : "POST"),
        headers,
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      }),
    );
  };

  it("accepts an API key header repeated with the same value, and refuses two different keys", async () => {
    const headers = new Headers();
    headers.append("X-API-Key", key);
    headers.append("x-api-key", key);
    expect(headers.get("x-api-key")).toBe(`${key}, ${key}`);
    expect((await v2("/api/v1/sessions")).status).toBe(200);
    expect((await v2("/api/v1/sessions", { keys: [key, "lgp_someone_else"] })).status).toBe(401);
    // An organization key's workspace header, repeated the same way.
    const tenant = new Headers({ "X-Api-Key": BOOTSTRAP_KEY });
    tenant.append("X-Tenant-Id", workspaceId);
    tenant.append("x-tenant-id", workspaceId);
    const scoped = await exports.default.fetch(
      new Request("http://platform.test/api/v1/sessions", { headers: tenant }),
    );
    expect(scoped.status).toBe(200);
  });

  it("reports LangSmith API level 0.16 in /api/v1/info, in the semver form the SDKs parse", async () => {
    const info = await json<{ version: string }>(await call("/api/v1/info", { key: null }));
    const [major, minor, patch] = info.version.split(".").map(Number);
    expect([major, minor]).toEqual([0, 16]);
    expect(Number.isInteger(patch)).toBe(true);
  });

  it("serves POST /api/v2/runs/query with selects, the start_time window and next_cursor", async () => {
    const session = await newProject();
    const example = crypto.randomUUID();
    const made = ["2026-11-20T09:00:00Z", "2026-11-20T09:00:01Z", "2026-11-20T09:00:02Z"].map((start, i) =>
      pythonCreateRun(`v2-${i}`, start, session.name, {
        run_type: i === 2 ? "llm" : "chain",
        reference_example_id: i === 1 ? example : null,
      }),
    );
    expect((await post("/api/v1/runs/batch", { post: made })).status).toBe(202);
    const window = { min_start_time: "2026-11-20T00:00:00Z", max_start_time: "2026-11-21T00:00:00Z" };
    type V2Page = { items: Record<string, unknown>[]; next_cursor: string | null };
    const first = await json<V2Page>(
      await v2("/api/v2/runs/query", {
        json: { project_ids: [session.id], ...window, page_size: 2, selects: ["ID", "NAME", "RUN_TYPE", "STATUS"] },
      }),
    );
    expect(first.items).toEqual([
      { id: made[2].id, name: "v2-2", run_type: "LLM", status: "PENDING" },
      { id: made[1].id, name: "v2-1", run_type: "CHAIN", status: "PENDING" },
    ]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await json<V2Page>(
      await v2("/api/v2/runs/query", {
        json: { project_ids: [session.id], ...window, page_size: 2, cursor: first.next_cursor },
      }),
    );
    expect(second).toEqual({ items: [{ id: made[0].id }], next_cursor: null });

    const llm = await json<V2Page>(
      await v2("/api/v2/runs/query", {
        json: { project_ids: [session.id], ...window, run_type: "LLM", selects: ["PROJECT_ID", "TRACE_ID", "IS_ROOT"] },
      }),
    );
    expect(llm.items).toEqual([{ project_id: session.id, trace_id: made[2].id, is_root: true }]);
    const ofExample = await json<V2Page>(
      await v2("/api/v2/runs/query", {
        json: { project_ids: [session.id], ...window, reference_examples: [example], filter: 'eq(run_type, "chain")' },
      }),
    );
    expect(ofExample.items).toEqual([{ id: made[1].id }]);
    // Every field selected: each has the type RunV2 documents, and no other field comes.
    const whole = await json<V2Page>(
      await v2("/api/v2/runs/query", {
        json: { project_ids: [session.id], ...window, selects: [...RUN_SELECT_FIELDS] },
      }),
    );
    expect(whole.items).toHaveLength(3);
    for (const item of whole.items) {
      expect(Object.keys(item)).toHaveLength(RUN_SELECT_FIELDS.length);
      expect(RunV2Schema.strict().safeParse(item).error?.issues ?? []).toEqual([]);
    }
    // Without a window, the last day only.
    expect(await json<V2Page>(await v2("/api/v2/runs/query", { json: { project_ids: [session.id] } }))).toEqual({
      items: [],
      next_cursor: null,
    });
    expect((await v2("/api/v2/runs/query", { json: { ...window } })).status).toBe(400);
  });

  it("serves GET /api/v2/runs/{id} with repeated selects, within its project only", async () => {
    const session = await newProject();
    const run = pythonCreateRun("v2-read", "2026-11-20T09:30:00Z", session.name, { tags: ["x"] });
    expect((await post("/api/v1/runs", run)).status).toBe(202);
    const read = await v2(`/api/v2/runs/${run.id}?project_id=${session.id}&selects=ID&selects=NAME&selects=TAGS`);
    expect(read.status).toBe(200);
    expect(await json(read)).toEqual({ id: run.id, name: "v2-read", tags: ["x"] });
    const one = await v2(`/api/v2/runs/${run.id}?project_id=${session.id}&selects=LATENCY_SECONDS`);
    expect(await json(one)).toEqual({ latency_seconds: null });
    expect(await json(await v2(`/api/v2/runs/${run.id}?project_id=${session.id}`))).toEqual({ id: run.id });
    const other = await newProject();
    expect((await v2(`/api/v2/runs/${run.id}?project_id=${other.id}`)).status).toBe(404);
  });
});
