import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { listeningUrl } from "../../scripts/lib/local-runtime.ts";
import { projectBuildDir } from "../../scripts/lib/project.ts";
import { offlineEnv, stopProcessGroup, waitForOk } from "../../scripts/lib/wrangler.ts";

// An agent project of its own (examples/byo-agent: its own package.json, a graph importing a package
// this repository does not depend on, an http.app, a ui component, SDK logger calls), copied outside
// the repository and served by the `agent-platform` command from its own folder, then driven with the
// official SDK.

const BIN = join(PROJECT_ROOT, "bin/agent-platform.mjs");
const NODE = join(PROJECT_ROOT, "node_modules/node/bin/node");
let project: string;
let child: ChildProcess;
let url: string;
let apiKey: string;
let client: Client;
let log = "";

/**
 * The project as `npm install` would leave it: its own package (a symlink, as npm links `file:`
 * dependencies) and its own copies of @langchain/core, @langchain/langgraph and hono. The copies are
 * hard links: other paths, so distinct modules to a bundler unless the platform shares its own.
 */
function installProject(dir: string): void {
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, "@langchain"), { recursive: true });
  symlinkSync(join(dir, "packages/fun-greeting"), join(modules, "fun-greeting"));
  for (const name of ["@langchain/core", "@langchain/langgraph", "hono"]) {
    cpSync(join(PROJECT_ROOT, "node_modules", name), join(modules, name), { recursive: true });
  }
}

function cli(args: string[], cwd = project) {
  return spawnSync(NODE, [BIN, ...args], { cwd, encoding: "utf8", env: offlineEnv(), timeout: 180_000 });
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "byo-agent-"));
  cpSync(join(PROJECT_ROOT, "examples/byo-agent"), project, {
    recursive: true,
    filter: (source) => !/node_modules|\.agent-platform|\.dev\.vars/.test(source),
  });
  installProject(project);
  child = spawn(NODE, [BIN, "dev", "--port", "0"], {
    cwd: project,
    env: offlineEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  try {
    url = await listeningUrl(child, 150_000);
    await waitForOk(`${url}/ok`, 30_000, child);
  } catch (error) {
    throw new Error(`agent-platform dev did not start: ${(error as Error).message}\n${log}`);
  }
  apiKey = /BOOTSTRAP_API_KEY=(.+)/.exec(readFileSync(join(project, ".dev.vars"), "utf8"))?.[1] ?? "";
  client = new Client({ apiUrl: url, apiKey });
}, 200_000);

afterAll(async () => {
  if (child) await stopProcessGroup(child);
  if (project) {
    rmSync(projectBuildDir(join(project, "langgraph.json")), { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
});

describe("agent-platform dev, from the project's own folder", () => {
  it("writes the project's local secrets and keeps its state in .agent-platform/", () => {
    expect(apiKey).not.toBe("");
    expect(existsSync(join(project, ".agent-platform/state"))).toBe(true);
  });

  it("runs the graph with the project's own package and the platform's one copy of @langchain/core", async () => {
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, "greeter", {
      input: { messages: [{ role: "user", content: "Ada" }] },
    })) as { messages: { type: string; content: string }[]; shared_core: boolean; ui: { name: string }[] };
    expect(state.messages.at(-1)).toMatchObject({ type: "ai", content: "Howdy, Ada! (the byo-agent example)" });
    // The input message was built by the platform's @langchain/core; the graph checks it against the
    // HumanMessage it imported from its own node_modules.
    expect(state.shared_core).toBe(true);
    expect(state.ui.map((message) => message.name)).toEqual(["greeting"]);
  });

  it("getLogger() works at module load and inside nodes, into the structured log", async () => {
    const lines = () =>
      log
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The runtime's output reaches this process on its own schedule, after the run's answer.
    const greeting = await vi.waitFor(
      () => {
        const line = lines().find((l) => l.message === "greeting");
        if (!line) throw new Error(`no "greeting" line yet in:\n${log.slice(-2_000)}`);
        return line;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(lines().some((line) => line.message === "greeter graph loaded" && line.source === "graph")).toBe(true);
    expect(greeting).toMatchObject({
      langgraph_node: "greet",
      graph_id: "greeter",
      name: "Ada",
    });
  });

  it("serves the http.app's routes, behind the platform's authentication", async () => {
    expect((await fetch(`${url}/custom/hello`)).status).toBe(401);
    const hello = await fetch(`${url}/custom/hello`, { headers: { "X-Api-Key": apiKey } });
    expect(hello.status).toBe(200);
    expect(await hello.json()).toEqual({ hello: "from the byo-agent app" });
    expect((await fetch(`${url}/custom/hello`, { headers: { "X-Api-Key": "lgp_wrong" } })).status).toBe(401);
  });

  it("runs the http.app's middleware before the platform's routes (it rewrites run bodies)", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "greeter", {
      input: { messages: [{ role: "user", content: "Bo" }] },
      metadata: { mine: 1 },
    });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run.metadata).toMatchObject({ mine: 1, stamped_by: "byo-agent" });
  });

  it("lets a custom route call the platform's API in-process with new Client()", async () => {
    const response = await fetch(`${url}/custom/assistants`, { headers: { "X-Api-Key": apiKey } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ graphs: ["greeter"] });
  });

  it("serves the project's ui component", async () => {
    const html = await client["~ui"].getComponent("greeter", "greeting");
    expect(html).toContain(`/ui/greeter/entrypoint.js`);
    const bundle = await fetch(`${url}/ui/greeter/entrypoint.js`);
    expect(bundle.status).toBe(200);
    expect(await bundle.text()).toContain("Greeted");
  });

  it("serves the schemas extracted from the project's TypeScript types", async () => {
    const [assistant] = await client.assistants.search({ graphId: "greeter" });
    const schemas = await client.assistants.getSchemas(assistant.assistant_id);
    const state = schemas.state_schema as {
      properties: Record<string, { type?: string; items?: { $ref?: string } }>;
      definitions?: Record<string, unknown>;
    };
    expect(state.properties.shared_core).toMatchObject({ type: "boolean" });
    // Messages as $ref definitions, as the official server extracts them.
    expect(JSON.stringify(state.properties.messages)).toContain("#/definitions/");
    expect(Object.keys(state.definitions ?? {}).length).toBeGreaterThan(0);
  });

  it("reports the project's graphs, not this repository's", async () => {
    const assistants = await client.assistants.search({ limit: 100 });
    expect(assistants.map((assistant) => assistant.graph_id).sort()).toEqual(["greeter"]);
  });
});

describe("agent-platform build, deploy --dry-run and bad invocations", () => {
  it("bundles the project's Worker", () => {
    const run = cli(["deploy", "--dry-run"]);
    expect(run.status, run.stderr).toBe(0);
    const bundle = readFileSync(join(project, ".agent-platform/build/index.js"), "utf8");
    expect(bundle).toContain("Howdy, ");
    // This repository's graphs are not in the project's Worker.
    expect(bundle).not.toContain("shipped-with-the-platform");
  });

  it("exits 2 with a message for an unknown command, a misplaced flag or a folder without langgraph.json", () => {
    const unknown = cli(["serve"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "serve"');
    const misplaced = cli(["build", "--port", "1"]);
    expect(misplaced.status).toBe(2);
    expect(misplaced.stderr).toContain('--port is an option of "dev", not of "build"');
    const empty = mkdtempSync(join(tmpdir(), "byo-empty-"));
    try {
      const missing = cli(["build"], empty);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain("No langgraph.json here");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
