// The JS `langsmith` Client's run and project calls against the server, unchanged: createRun
// without a trace, updateRun, readRun, listRuns (with select and query), createProject with upsert,
// updateProject, listProjects, and the generated v2 client's runs.queryV2/retrieveV2.
import { Client } from "langsmith";
import { beforeAll, describe, expect, it } from "vitest";
import { type SharedServerInfo, sharedServer } from "./helpers.ts";

let server: SharedServerInfo;
let client: Client;
beforeAll(async () => {
  server = sharedServer();
  // Without auto-batching the Client sends one POST /runs per run, without dotted_order.
  client = new Client({ apiUrl: `${server.url}/api/v1`, apiKey: server.apiKey, autoBatchTracing: false });
});

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe("langsmith JS Client runs and projects", () => {
  it("creates, updates, upserts and lists projects", async () => {
    const projectName = `client-${crypto.randomUUID()}`;
    const created = await client.createProject({ projectName, description: "first" });
    expect(created).toMatchObject({ name: projectName, description: "first" });
    const upserted = await client.createProject({ projectName, upsert: true, metadata: { team: "a" } });
    expect(upserted.id).toBe(created.id);
    // updateProject sends name, extra and end_time as null when they are not given.
    const updated = await client.updateProject(created.id, { description: "second" });
    expect(updated).toMatchObject({ id: created.id, name: projectName, description: "second" });
    const ended = await client.updateProject(created.id, { endTime: "2026-11-20T12:00:00Z" });
    expect(ended).toMatchObject({ name: projectName, description: "second", end_time: "2026-11-20T12:00:00.000Z" });
    const listed = await collect(client.listProjects({ nameContains: projectName }));
    expect(listed.map((project) => project.id)).toEqual([created.id]);
    expect(await client.readProject({ projectName })).toMatchObject({ id: created.id });
  });

  it("creates runs without a trace, updates, reads and lists them", async () => {
    const projectName = `client-runs-${crypto.randomUUID()}`;
    const rootId = crypto.randomUUID();
    const childId = crypto.randomUUID();
    const start = Date.now();
    await client.createRun({
      id: rootId,
      name: "root",
      run_type: "chain",
      inputs: { question: "where is the needle?" },
      project_name: projectName,
      start_time: start,
    });
    await client.createRun({
      id: childId,
      name: "child",
      run_type: "llm",
      inputs: { prompt: "hay" },
      project_name: projectName,
      parent_run_id: rootId,
      start_time: start + 1,
    });
    await client.updateRun(childId, { end_time: start + 5, outputs: { text: "found it" } });
    await client.updateRun(rootId, { end_time: start + 10, outputs: { answer: "here" } });

    const root = await client.readRun(rootId);
    expect(root).toMatchObject({ id: rootId, name: "root", status: "success", trace_id: rootId });
    expect(root).not.toHaveProperty("attachments");
    expect(root.dotted_order).toMatch(new RegExp(`^\\d{8}T\\d{12}Z${rootId}$`));
    const child = await client.readRun(childId);
    expect(child).toMatchObject({ trace_id: rootId, parent_run_id: rootId, outputs: { text: "found it" } });
    expect(child.dotted_order).toMatch(new RegExp(`^${root.dotted_order}\\.\\d{8}T\\d{12}Z${childId}$`));

    const all = await collect(client.listRuns({ projectName }));
    expect(all.map((run) => run.name).sort()).toEqual(["child", "root"]);
    const selected = await collect(client.listRuns({ projectName, select: ["outputs"] }));
    for (const run of selected) {
      expect(run).toMatchObject({ trace_id: rootId, dotted_order: expect.any(String), run_type: expect.any(String) });
      expect(run).not.toHaveProperty("inputs");
    }
    const searched = await collect(client.listRuns({ projectName, query: "needle" }));
    expect(searched.map((run) => run.id)).toEqual([rootId]);
    const roots = await collect(client.listRuns({ projectName, isRoot: true, limit: 1 }));
    expect(roots.map((run) => run.id)).toEqual([rootId]);
  });

  it("reads runs through the generated v2 client (client.runs)", async () => {
    const projectName = `client-v2-${crypto.randomUUID()}`;
    const id = crypto.randomUUID();
    await client.createRun({
      id,
      name: "v2 root",
      run_type: "tool",
      inputs: { x: 1 },
      project_name: projectName,
      start_time: Date.now(),
    });
    const project = await client.readProject({ projectName });
    const runs = [];
    for await (const run of client.runs.queryV2({
      project_ids: [project.id],
      selects: ["ID", "NAME", "RUN_TYPE", "STATUS", "PROJECT_ID"],
    }))
      runs.push(run);
    expect(runs).toEqual([{ id, name: "v2 root", run_type: "TOOL", status: "PENDING", project_id: project.id }]);
    const one = await client.runs.retrieveV2(id, { project_id: project.id, selects: ["ID", "INPUTS", "TRACE_ID"] });
    expect(one).toEqual({ id, inputs: { x: 1 }, trace_id: id });
  });
});
