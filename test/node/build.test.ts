import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BuildError, buildDeployment, configPathFromArgs, PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const GRAPH_SOURCE = `
import { Annotation, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ n: Annotation<number>() });
export const graph = new StateGraph(State).addNode("a", () => ({ n: 1 })).addEdge("__start__", "a").compile();
export const notGraph = { hello: "world" };
export default graph;
`;

/** A deployment in a scratch directory: its langgraph.json plus the given files. */
function deployment(config: unknown, files: Record<string, string> = { "graph.ts": GRAPH_SOURCE }) {
  const dir = scratchDir("build");
  dirs.push(dir);
  const configPath = join(dir, "langgraph.json");
  writeFileSync(configPath, typeof config === "string" ? config : JSON.stringify(config));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return { configPath, outFile: join(dir, "registry.generated.ts") };
}

async function buildError(config: unknown, files?: Record<string, string>): Promise<string> {
  const { configPath, outFile } = deployment(config, files);
  const error = await buildDeployment(configPath, { outFile, stageAssets: false }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BuildError);
  return (error as Error).message;
}

describe("build step: langgraph.json → generated registry", () => {
  it("names the graph and path when the file does not exist", async () => {
    const message = await buildError({ graphs: { chat: "./missing.ts:graph" } });
    expect(message).toContain('graph "chat" (./missing.ts:graph)');
    expect(message).toContain("missing.ts does not exist");
  });

  it("names the graph, path and available exports when the export is missing", async () => {
    const message = await buildError({ graphs: { chat: "./graph.ts:nope" } });
    expect(message).toContain('graph "chat" (./graph.ts:nope)');
    expect(message).toContain('no export named "nope"');
    expect(message).toContain("exports: default, graph, notGraph");
  });

  it("names the graph and path when the export is not a graph", async () => {
    const message = await buildError({ graphs: { chat: "./graph.ts:notGraph" } });
    expect(message).toBe(
      'Export "notGraph" of graph "chat" (./graph.ts:notGraph) is not a graph: expected a compiled graph, a StateGraph or a factory function, got an object (Object)',
    );
  });

  it("reports a graph module that does not compile", async () => {
    const message = await buildError({ graphs: { chat: "./bad.ts:graph" } }, { "bad.ts": "export const graph = ;" });
    expect(message).toContain('Cannot build graph "chat" (./bad.ts:graph)');
  });

  it("rejects invalid JSON, a config without graphs, and a missing env file", async () => {
    expect(await buildError("{ not json")).toContain("is not valid JSON");
    expect(await buildError({ env: {} })).toMatch(/is invalid: graphs: /);
    expect(await buildError({ graphs: {} })).toContain("declares no graphs");
    expect(await buildError({ graphs: { g: "./graph.ts:graph" }, env: "./.env.missing" })).toContain(".env.missing");
  });

  it("requires auth.path to name an Auth instance, and names the path when it does not", async () => {
    const message = await buildError(
      { graphs: { g: "./graph.ts:graph" }, auth: { path: "./auth.ts:auth" } },
      { "graph.ts": GRAPH_SOURCE, "auth.ts": "export const auth = { authenticate() {} };" },
    );
    expect(message).toContain('Export "auth" of auth.path (./auth.ts:auth) is not an Auth');
    expect(await buildError({ graphs: { g: "./graph.ts:graph" }, auth: { path: "./missing.ts:auth" } })).toContain(
      "auth.path (./missing.ts:auth)",
    );
  });

  it("builds the custom-auth example with its auth module in the registry", async () => {
    const dir = scratchDir("build-auth");
    dirs.push(dir);
    const outFile = join(dir, "registry.generated.ts");
    await buildDeployment(join(PROJECT_ROOT, "examples/custom-auth/langgraph.json"), { outFile, stageAssets: false });
    const generated = readFileSync(outFile, "utf8");
    expect(generated).toContain('import { graph0, graph1, graph2, authModule } from "./deployment-modules.js";');
    expect(readFileSync(join(dir, "deployment-modules.js"), "utf8")).toContain("examples/custom-auth/auth.ts");
    expect(generated).toContain('exportName: "auth", source: "./auth.ts:auth", disableStudioAuth: false');
  });

  it("builds another deployment config with paths relative to that file, its env file and graph kinds", async () => {
    const configPath = join(PROJECT_ROOT, "examples/minimal/langgraph.json");
    const dir = scratchDir("build-ok");
    dirs.push(dir);
    const outFile = join(dir, "registry.generated.ts");
    const result = await buildDeployment(configPath, { outFile, stageAssets: false });
    expect(result.graphs).toEqual(["counter", "greeter"]);
    expect(result.env).toEqual({ GREETING: "hi from examples/minimal" });
    const generated = readFileSync(outFile, "utf8");
    expect(generated).toContain('import { graph0, graph1 } from "./deployment-modules.js";');
    // The SDK logger is registered before the deployment's modules load.
    expect(generated.indexOf("before-graphs.ts")).toBeLessThan(generated.indexOf("deployment-modules.js"));
    expect(generated).toContain('exportName: "greeterFactory"');
    expect(generated).toContain('description: "Greets whoever the run\'s config names"');
  });

  it("uses the default export when the spec names none", async () => {
    const { configPath, outFile } = deployment({ graphs: { g: "./graph.ts" } });
    await buildDeployment(configPath, { outFile, stageAssets: false });
    expect(readFileSync(outFile, "utf8")).toContain('exportName: "default"');
  });

  it("picks the config from --config, --config=, LANGGRAPH_JSON, then ./langgraph.json", () => {
    expect(configPathFromArgs(["--config", "a/langgraph.json"], {})).toBe(resolve("a/langgraph.json"));
    expect(configPathFromArgs(["--config=b.json"], {})).toBe(resolve("b.json"));
    expect(configPathFromArgs([], { LANGGRAPH_JSON: "c.json" })).toBe(resolve("c.json"));
    expect(configPathFromArgs([], {})).toBe(join(PROJECT_ROOT, "langgraph.json"));
  });

  it("the CLI exits 1 with the message on stderr", () => {
    const { configPath } = deployment({ graphs: { chat: "./graph.ts:notGraph" } });
    const run = spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts/build.ts"), "--config", configPath], {
      encoding: "utf8",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'Build failed: Export "notGraph" of graph "chat" (./graph.ts:notGraph) is not a graph',
    );
  });
});
