import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BuildError, buildDeployment, configPathFromArgs, PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { bundleUi } from "../../scripts/lib/ui-bundle.ts";

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

const COMPONENT_SOURCE = `
import "./card.css";
import { useState } from "react";
export function Card({ title }: { title: string }) {
  const [open] = useState(true);
  return <section className="card">{open ? title : null}</section>;
}
export default { card: Card };
`;

describe("build step: langgraph.json ui → bundles in the Worker's assets", () => {
  const uiFiles = { "graph.ts": GRAPH_SOURCE, "card.tsx": COMPONENT_SOURCE, "card.css": ".card { color: red; }" };

  it("bundles each ui component into <assets>/ui/<id>/ and lists its files in the manifest", async () => {
    const { configPath, outFile } = deployment(
      { graphs: { "my-graph": "./graph.ts" }, ui: { "my-graph": "./card.tsx" } },
      uiFiles,
    );
    await buildDeployment(configPath, { outFile, stageAssets: false });
    const assets = join(outFile, "../assets/ui/my-graph");
    const script = readFileSync(join(assets, "entrypoint.js"), "utf8");
    // An IIFE on the global the fragment's onload calls; React comes from the host page, not the bundle.
    expect(script).toMatch(/^var __LGUI_my_graph = \(\(\) => \{/);
    // esbuild's require shim reads the host's registry, as the official bundler rewrites it (the official
    // server's own test checks for this text).
    expect(script).toContain(
      'typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")]',
    );
    expect(script).toContain('__require("react")');
    expect(script).toContain('__require("react/jsx-runtime")');
    expect(script).not.toContain("react.production");
    expect(script).toContain('Symbol.for("LGUI_EXT_STORE")');
    expect(readFileSync(join(assets, "entrypoint.css"), "utf8")).toContain(".card {");
    expect(readFileSync(outFile, "utf8")).toContain(
      'ui: [{"id":"my-graph","files":["entrypoint.css","entrypoint.js"]}],',
    );
  });

  it("takes ui_config.shared packages from the host page too, subpaths included", async () => {
    const { configPath, outFile } = deployment(
      { graphs: { g: "./graph.ts" }, ui: { g: "./card.tsx" }, ui_config: { shared: ["some-design-system"] } },
      {
        ...uiFiles,
        "card.tsx": `import { Button } from "some-design-system/button";\nexport default { b: () => <Button /> };`,
      },
    );
    await buildDeployment(configPath, { outFile, stageAssets: false });
    const script = readFileSync(join(outFile, "../assets/ui/g/entrypoint.js"), "utf8");
    expect(script).toContain('__require("some-design-system/button")');
    expect(readFileSync(outFile, "utf8")).toContain('ui: [{"id":"g","files":["entrypoint.js"]}],');
  });

  it("names the ui id and path when the component file is missing or does not bundle", async () => {
    const missing = await buildError({ graphs: { g: "./graph.ts" }, ui: { g: "./missing.tsx" } });
    expect(missing).toContain('Cannot bundle ui "g" (./missing.tsx): file ');
    expect(missing).toContain("missing.tsx does not exist");
    const broken = await buildError(
      { graphs: { g: "./graph.ts" }, ui: { g: "./card.tsx" } },
      { ...uiFiles, "card.tsx": "export default { card: () => <div> };" },
    );
    expect(broken).toContain('Cannot bundle ui "g" (./card.tsx):');
    const unresolved = await buildError(
      { graphs: { g: "./graph.ts" }, ui: { g: "./card.tsx" } },
      { ...uiFiles, "card.tsx": 'import x from "not-installed-anywhere";\nexport default { x };' },
    );
    expect(unresolved).toContain('Cannot bundle ui "g" (./card.tsx):');
    expect(unresolved).toContain("not-installed-anywhere");
  });

  it("refuses ui ids that cannot be a folder or URL segment", async () => {
    expect(await buildError({ graphs: { g: "./graph.ts" }, ui: { "..": "./card.tsx" } }, uiFiles)).toContain(
      'ui...: ui id ".." must use letters',
    );
    expect(await buildError({ graphs: { g: "./graph.ts" }, ui: { "a/b": "./card.tsx" } }, uiFiles)).toContain(
      `ui.a/b: ui id "a/b" must use letters`,
    );
  });

  it("a rebuild removes the bundles of ids and files no longer produced", async () => {
    const dir = scratchDir("build-ui");
    dirs.push(dir);
    for (const [name, content] of Object.entries(uiFiles)) writeFileSync(join(dir, name), content);
    const assetsDir = join(dir, "assets");
    mkdirSync(join(assetsDir, "ui/gone"), { recursive: true });
    writeFileSync(join(assetsDir, "ui/gone/entrypoint.js"), "old");
    mkdirSync(join(assetsDir, "ui/kept"), { recursive: true });
    writeFileSync(join(assetsDir, "ui/kept/stale.js"), "old");
    const bundles = await bundleUi({ kept: "./card.tsx" }, { configDir: dir, assetsDir });
    expect(bundles).toEqual([{ id: "kept", source: "./card.tsx", files: ["entrypoint.css", "entrypoint.js"] }]);
    expect(existsSync(join(assetsDir, "ui/gone"))).toBe(false);
    expect(existsSync(join(assetsDir, "ui/kept/stale.js"))).toBe(false);
    expect(existsSync(join(assetsDir, "ui/kept/entrypoint.js"))).toBe(true);
  });

  it("builds this repository's weather UI into dist/assets and the registry", async () => {
    const dir = scratchDir("build-weather");
    dirs.push(dir);
    const outFile = join(dir, "registry.generated.ts");
    await buildDeployment(join(PROJECT_ROOT, "langgraph.json"), { outFile, stageAssets: false });
    expect(readFileSync(outFile, "utf8")).toContain(
      'ui: [{"id":"weather","files":["entrypoint.css","entrypoint.js"]}],',
    );
    expect(readFileSync(join(dir, "assets/ui/weather/entrypoint.js"), "utf8")).toContain("var __LGUI_weather =");
  });

  it("names the path when http.app does not export a Hono app", async () => {
    const message = await buildError(
      { graphs: { g: "./graph.ts:graph" }, http: { app: "./app.ts:app" } },
      { "graph.ts": GRAPH_SOURCE, "app.ts": "export const app = { fetch() {} };" },
    );
    expect(message).toBe(
      'Export "app" of http.app (./app.ts:app) is not a Hono app: export an instance of Hono (new Hono()), got an object (Object)',
    );
  });

  it("loads a graph that calls the SDK's getLogger() at module load", async () => {
    const source = `import { getLogger } from "@langchain/langgraph-sdk/logging";\ngetLogger().info("loading");\n${GRAPH_SOURCE}`;
    const { configPath, outFile } = deployment({ graphs: { g: "./graph.ts:graph" } }, { "graph.ts": source });
    await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false });
    expect(readFileSync(outFile, "utf8").indexOf("before-graphs.ts")).toBeGreaterThan(0);
  });

  it("names the file and the package when an import cannot be resolved", async () => {
    const source = `import "left-pad-not-installed";\n${GRAPH_SOURCE}`;
    const message = await buildError({ graphs: { g: "./graph.ts:graph" } }, { "graph.ts": source });
    expect(message).toContain('Cannot build graph "g" (./graph.ts:graph)');
    expect(message).toContain('Could not resolve "left-pad-not-installed"');
    expect(message).toContain("run npm install in the deployment's folder");
  });

  it("names a subpath of a shared package that the platform's copy lacks", async () => {
    const source = `import "@langchain/langgraph/no-such-entry";\n${GRAPH_SOURCE}`;
    const message = await buildError({ graphs: { g: "./graph.ts:graph" } }, { "graph.ts": source });
    expect(message).toContain(
      `"@langchain/langgraph/no-such-entry" is not provided by the platform's @langchain/langgraph`,
    );
  });

  it("keeps the last good build when a build fails", async () => {
    const { configPath, outFile } = deployment({ graphs: { g: "./graph.ts:graph" } });
    await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false });
    const modules = join(dirname(outFile), "deployment-modules.js");
    const good = readFileSync(modules, "utf8");
    writeFileSync(configPath, JSON.stringify({ graphs: { g: "./graph.ts:notGraph" } }));
    await expect(buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false })).rejects.toThrow(
      "is not a graph",
    );
    expect(readFileSync(modules, "utf8")).toBe(good);
    expect(readFileSync(outFile, "utf8")).toContain('exportName: "graph"');
  });
});
