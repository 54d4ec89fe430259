// The slow tier: what `agent-platform dev`'s live reload does to a run in flight (real time: the run
// resumes at its thread's heartbeat alarm, up to HEARTBEAT_MS after it started).
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { projectBuildDir } from "../../scripts/lib/project.ts";
import { HEARTBEAT_MS } from "../../src/threads/runs/run-manager.ts";
import { until } from "../fixtures/until.ts";
import { type Dev, startDevServer, stopDev } from "./dev-server.ts";

/** Two steps; the second takes `wait` ms (longer than the test waits for the run) in the first version. */
const GRAPH = (version: string, wait: number) => `import { Annotation, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  said: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode("first", () => ({ said: ["first ${version}"] }))
  .addNode("second", async () => {
    await new Promise((resolve) => setTimeout(resolve, ${wait}));
    return { said: ["second ${version}"] };
  })
  .addEdge("__start__", "first")
  .addEdge("first", "second")
  .addEdge("second", "__end__")
  .compile();
`;

let project: string;
let dev: Dev | undefined;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "dev-reload-run-"));
  writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { steps: "./graph.ts:graph" } }));
  writeFileSync(join(project, "graph.ts"), GRAPH("v1", 600_000));
  symlinkSync(join(PROJECT_ROOT, "node_modules"), join(project, "node_modules"));
});

afterAll(async () => {
  if (dev) await stopDev(dev);
  rmSync(projectBuildDir(join(project, "langgraph.json")), { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});

describe("agent-platform dev, a run in flight when the code changes", () => {
  it("is cut off by the reload and resumes from its last checkpoint on the new code, as after a restart", async () => {
    dev = await startDevServer(project);
    const { client } = dev;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "steps", { input: {} });
    // In the second step, which the first version never finishes in this test's time.
    await until(
      () => client.threads.getState<{ said: string[] }>(thread.thread_id),
      (state) => state.values.said?.includes("first v1") === true,
      20_000,
      100,
    );
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("running");

    const mark = dev.output().length;
    writeFileSync(join(project, "graph.ts"), GRAPH("v2", 0));
    await dev.printed(/Reloaded after a change to graph\.ts.*\n/, mark);
    // The thread's heartbeat alarm picks the run up again.
    await dev.printed(/resuming a run interrupted by a restart.*\n/, mark, HEARTBEAT_MS + 20_000);
    const done = await until(
      () => client.runs.get(thread.thread_id, run.run_id),
      (r) => r.status !== "running" && r.status !== "pending",
      20_000,
      100,
    );
    expect(done.status).toBe("success");
    // The first step is not run again (its checkpoint stands); the second runs on the new code.
    expect((await client.threads.getState<{ said: string[] }>(thread.thread_id)).values.said).toEqual([
      "first v1",
      "second v2",
    ]);
  }, 150_000);
});
