import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { projectBuildDir } from "../../scripts/lib/project.ts";
import { until } from "../fixtures/until.ts";
import { cliPid, type Dev, startDevServer, stopDev, watchedInodes } from "./dev-server.ts";

// `agent-platform dev`'s live reload, driven as a user does: a project outside the repository, served
// from its own folder; its graph edited while the server runs, and the official SDK run against it.

const GRAPH = (word: string) => `import { Annotation, StateGraph } from "@langchain/langgraph";
import { LABEL } from "./label.ts";

const State = Annotation.Root({
  said: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode("say", () => ({ said: [\`${word} \${LABEL}\`] }))
  .addEdge("__start__", "say")
  .addEdge("say", "__end__")
  .compile();
`;
const LABEL = (value: string) => `export const LABEL = ${value};\n`;

interface Said {
  said: string[];
}

let project: string;
const servers: Dev[] = [];

const startDev = async (args: string[] = []) => {
  const dev = await startDevServer(project, args);
  servers.push(dev);
  return dev;
};

const write = (file: string, text: string) => writeFileSync(join(project, file), text);
const run = (dev: Dev, threadId: string) =>
  dev.client.runs.wait(threadId, "echo", { input: {} }) as Promise<unknown> as Promise<Said>;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "dev-reload-"));
  write("langgraph.json", JSON.stringify({ graphs: { echo: "./graph.ts:graph" } }));
  write("graph.ts", GRAPH("first"));
  write("label.ts", LABEL('"v1"'));
  // Its packages, as `npm install` would give it: the platform's own.
  symlinkSync(join(PROJECT_ROOT, "node_modules"), join(project, "node_modules"));
});

afterAll(async () => {
  for (const dev of servers) await stopDev(dev);
  if (project) {
    rmSync(projectBuildDir(join(project, "langgraph.json")), { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
});

describe("agent-platform dev", () => {
  it("reloads an edited graph and the modules it imports in place, keeps every thread, run, store item and trace, and keeps serving the last good build through a broken edit", async () => {
    const dev = await startDev();
    const { client } = dev;
    expect(dev.output()).toContain("Watching the project");
    if (existsSync("/proc/self/fdinfo")) {
      expect(watchedInodes(cliPid(dev))).toContain(statSync(project).ino);
    }

    const thread = await client.threads.create();
    expect((await run(dev, thread.thread_id)).said).toEqual(["first v1"]);
    const [firstRun] = await client.runs.list(thread.thread_id);
    await client.store.putItem(["notes"], "kept", { text: "before the reload" });
    // The run's trace (the agent-runs tracing project), written before the reload.
    const api = async <T>(path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${dev.url}/api/v1${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { "X-Api-Key": dev.apiKey, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as T;
    };
    const traceOf = async (runId: string) => {
      const [session] = await api<{ id: string }[]>("/sessions?name=agent-runs");
      if (!session) return [];
      const filter = `and(eq(metadata_key, "run_id"), eq(metadata_value, "${runId}"))`;
      return (await api<{ runs: { id: string }[] }>("/runs/query", { session: [session.id], is_root: true, filter }))
        .runs;
    };
    const trace = await until(
      () => traceOf(firstRun.run_id),
      (runs) => runs.length > 0,
      15_000,
      100,
    );

    // An edit to the graph file: live on the next run, with no restart.
    let mark = dev.output().length;
    write("graph.ts", GRAPH("second"));
    const reloaded = await dev.printed(/Reloaded after a change to graph\.ts: rebuilt in [\d.]+ s.*\n/, mark);
    expect(reloaded).toMatch(/serving the new build [\d.]+ s later/);
    expect((await run(dev, thread.thread_id)).said).toEqual(["first v1", "second v1"]);
    // Everything from before the reload is still there.
    expect((await client.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
    expect(await client.runs.get(thread.thread_id, firstRun.run_id)).toMatchObject({ status: "success" });
    expect((await client.store.getItem(["notes"], "kept"))?.value).toEqual({ text: "before the reload" });
    expect((await traceOf(firstRun.run_id)).map((r) => r.id)).toEqual(trace.map((r) => r.id));

    // An edit that loads in Node but that workerd refuses to start (random values in global scope): its
    // error is printed and the last good build answers; the next good edit reloads.
    mark = dev.output().length;
    write("graph.ts", `const ID = crypto.randomUUID();\nexport { ID };\n${GRAPH("second")}`);
    const refused = await dev.printed(
      /Reload failed after a change to graph\.ts \(still serving the last good build[\s\S]*?Disallowed operation called within global scope/,
      mark,
    );
    expect(refused).toContain("did not start in workerd");
    expect((await run(dev, thread.thread_id)).said).toEqual(["first v1", "second v1", "second v1"]);
    mark = dev.output().length;
    write("graph.ts", GRAPH("third"));
    await dev.printed(/Reloaded after a change to graph\.ts.*\n/, mark);
    expect((await run(dev, thread.thread_id)).said).toEqual(["first v1", "second v1", "second v1", "third v1"]);

    // A broken edit to a module the graph imports: the error is printed, the last good build answers.
    mark = dev.output().length;
    write("label.ts", LABEL(""));
    const failed = await dev.printed(/Reload failed after a change to label\.ts.*\n/, mark);
    expect(failed).toContain("still serving the last good build");
    expect(failed).toMatch(/label\.ts:1:\d+: Unexpected/);
    expect((await run(dev, thread.thread_id)).said.at(-1)).toBe("third v1");

    // So does a langgraph.json that is not JSON.
    mark = dev.output().length;
    write("langgraph.json", "{ graphs:");
    expect(await dev.printed(/Reload failed after a change to langgraph\.json.*\n/, mark)).toContain(
      "is not valid JSON",
    );

    // The next good edit reloads again.
    mark = dev.output().length;
    write("langgraph.json", JSON.stringify({ graphs: { echo: "./graph.ts:graph" } }));
    write("label.ts", LABEL('"v2"'));
    await dev.printed(/Reloaded after a change to .*\n/, mark);
    expect((await run(dev, thread.thread_id)).said.at(-1)).toBe("third v2");
    expect(dev.child.exitCode).toBeNull();

    // Ctrl-C: the terminal signals the whole process group (and the wrapper forwards it to the CLI too);
    // the server disposes of workerd and exits 0.
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", (code) => resolve(code)));
    process.kill(-(dev.child.pid as number), "SIGINT");
    expect(await exited).toBe(0);
  }, 180_000);

  it("with --no-reload, watches nothing and serves what it started with", async () => {
    const dev = await startDev(["--no-reload"]);
    expect(dev.output()).toContain("Live reload off (--no-reload)");
    expect(dev.output()).not.toContain("Watching the project");
    if (existsSync("/proc/self/fdinfo")) {
      expect(watchedInodes(cliPid(dev))).not.toContain(statSync(project).ino);
    }
    const thread = await dev.client.threads.create();
    write("label.ts", LABEL('"v3"'));
    expect((await run(dev, thread.thread_id)).said).toEqual(["third v2"]);
    expect(dev.output()).not.toContain("Reloaded after a change to label.ts");
    await stopDev(dev);
  }, 120_000);
});
