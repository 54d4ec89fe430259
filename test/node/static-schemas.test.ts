// Static graph schemas: what the build extracts from the graphs' TypeScript types (the official LangGraph.js
// server's extractor), what the registry carries, and what the schema endpoints serve, in the official order.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildDeployment, PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { runStaticExtractor } from "../../scripts/lib/static-schemas.ts";
import { type GraphSchemas, graphSchemas, subgraphSchemas } from "../../src/assistants/graph-info.ts";
import type { LoadedGraph } from "../../src/deployment/graphs.ts";
import type { DeploymentManifest, GraphEntry, StaticGraphSchema } from "../../src/deployment/manifest.ts";

const FIXTURES = join(PROJECT_ROOT, "test/fixtures/schemas");
const GRAPH_IDS = ["annotation", "zod", "state_schema", "nested"];
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/** The official server's run-time schema extraction, from the same package the build uses. */
interface OfficialSchemaModule {
  getRuntimeGraphSchema(graph: unknown): Promise<StaticGraphSchema | undefined>;
}
const officialModule = async (): Promise<OfficialSchemaModule> => {
  const fromExtractor = createRequire(join(PROJECT_ROOT, "scripts/schema-extractor/package.json"));
  return import(pathToFileURL(fromExtractor.resolve("@langchain/langgraph-api/schema")).href);
};

/** What the official server answers on GET /assistants/{id}/schemas, in this API's field names. */
function officialAnswer(schema: StaticGraphSchema): GraphSchemas {
  return {
    input_schema: schema.input ?? null,
    output_schema: schema.output ?? null,
    state_schema: schema.state ?? null,
    config_schema: schema.config ?? null,
    context_schema: schema.config ?? null,
  };
}

const dirs: string[] = [];
let manifest: DeploymentManifest;
const entry = (id: string): GraphEntry => manifest.graphs.find((g) => g.id === id)!;
const compiled = (id: string) => entry(id).module.graph as LoadedGraph;

beforeAll(async () => {
  const dir = scratchDir("schemas");
  dirs.push(dir);
  const outFile = join(dir, "registry.generated.ts");
  await buildDeployment(join(FIXTURES, "langgraph.json"), { outFile, stageAssets: false });
  ({ manifest } = (await import(pathToFileURL(outFile).href)) as { manifest: DeploymentManifest });
});
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("static schemas in the generated registry", () => {
  it("are the official extractor's schemas, for every graph and subgraph namespace", async () => {
    const graphs = GRAPH_IDS.map((id) => ({
      id,
      file: join(FIXTURES, `${entry(id).source.split(":")[0]}`),
      exportName: "graph",
    }));
    const official = await runStaticExtractor({ graphs }, 120_000);
    expect(official.errors).toEqual({});
    for (const id of GRAPH_IDS) {
      // The official result keys the root by the export name and subgraphs by `<export>|<namespace>`.
      const { graph: root, ...rest } = official.schemas[id];
      const subgraphs = Object.fromEntries(
        Object.entries(rest).map(([key, schema]) => [key.slice("graph|".length), schema]),
      );
      expect(entry(id).staticSchemas, id).toEqual({ root, subgraphs });
    }
    expect(Object.keys(entry("annotation").staticSchemas!.subgraphs)).toEqual(["child"]);
  });

  it("describe an Annotation state with messages as $ref into definitions, and its Annotation.Root context", () => {
    const { root, subgraphs } = entry("annotation").staticSchemas!;
    expect(root.state).toMatchObject({
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
        topic: { type: "string" },
      },
      definitions: {
        [BASE_MESSAGE]: { oneOf: [{ $ref: "#/definitions/RemoveMessage" }] },
        RemoveMessage: { type: "object" },
      },
      $schema: DRAFT_07,
    });
    expect(root.config).toEqual({
      type: "object",
      properties: { model: { type: "string", enum: ["anthropic", "openai", "unknown"] } },
      $schema: DRAFT_07,
    });
    expect(subgraphs.child.state).toMatchObject({
      properties: {
        messages: { type: "array", items: { $ref: `#/definitions/${BASE_MESSAGE}` } },
        depth: { type: "number" },
      },
      definitions: { [BASE_MESSAGE]: expect.any(Object) },
    });
  });

  it("are extracted for zod and StateSchema graphs too", () => {
    expect(entry("zod").staticSchemas?.root.state).toMatchObject({ properties: { count: { type: "number" } } });
    expect(entry("state_schema").staticSchemas?.root.state).toMatchObject({
      properties: { topic: { type: "string" } },
    });
  });
});

describe("served schemas: runtime zod/StateSchema first, static second (the official order)", () => {
  it("answers what the official server answers for each graph", async () => {
    const official = await officialModule();
    for (const id of GRAPH_IDS) {
      const graph = compiled(id);
      const expected = (await official.getRuntimeGraphSchema(graph)) ?? entry(id).staticSchemas!.root;
      expect(graphSchemas(graph, id, entry(id).staticSchemas?.root), id).toEqual(officialAnswer(expected));
    }
  });

  it("serves the Annotation graph's static schemas, context included", () => {
    const served = graphSchemas(compiled("annotation"), "annotation", entry("annotation").staticSchemas?.root);
    expect(served.state_schema).toBe(entry("annotation").staticSchemas?.root.state);
    expect(served.config_schema).toMatchObject({ properties: { model: { enum: ["anthropic", "openai", "unknown"] } } });
    expect(served.context_schema).toEqual(served.config_schema);
  });

  it("serves the zod graph's runtime schemas, its zod context as config and context", () => {
    const served = graphSchemas(compiled("zod"), "zod", entry("zod").staticSchemas?.root);
    expect(served.state_schema).toMatchObject({ properties: { messages: { langgraph_type: "messages" } } });
    expect(served.config_schema).toMatchObject({ properties: { model: { enum: ["anthropic", "openai", "unknown"] } } });
    expect(served.context_schema).toEqual(served.config_schema);
  });

  it("serves the StateSchema graph's runtime schemas (a StateSchema has no config schema)", () => {
    const served = graphSchemas(compiled("state_schema"), "state_schema", entry("state_schema").staticSchemas?.root);
    expect(served.state_schema).toMatchObject({ properties: { visits: { default: 0, type: "number" } } });
    expect(served.config_schema).toBeNull();
  });

  it("serves a subgraph's own static schemas by namespace", async () => {
    const statics = entry("annotation").staticSchemas;
    const served = await subgraphSchemas(compiled("annotation"), "annotation", undefined, false, statics);
    expect(Object.keys(served)).toEqual(["child"]);
    expect(served.child.state_schema).toBe(statics?.subgraphs.child.state);
    expect(served.child.input_schema).toBe(statics?.subgraphs.child.input);
    // The official server's fields for a subgraph: the schema object itself.
    expect(served.child.state).toBe(statics?.subgraphs.child.state);
    expect(served.child.config).toBe(statics?.subgraphs.child.config);
  });

  it("answers each namespace of nested subgraphs with the state the official server answers", async () => {
    const statics = entry("nested").staticSchemas;
    expect(Object.keys(statics!.subgraphs)).toEqual(["gp_two", "gp_two|p_two"]);
    const top = await subgraphSchemas(compiled("nested"), "nested", undefined, false, statics);
    expect(Object.keys(top)).toEqual(["gp_two"]);
    const served = await subgraphSchemas(compiled("nested"), "nested", undefined, true, statics);
    expect(Object.keys(served)).toEqual(["gp_two", "gp_two|p_two"]);
    // The official server's test of nested subgraphs ("get subgraphs" in langgraphjs
    // libs/langgraph-api/tests/api.test.mts, on its tests/graphs/nested.mts, which
    // test/fixtures/schemas/nested.ts reproduces) expects exactly this of each namespace.
    expect(served).toMatchObject({
      gp_two: {
        state: {
          type: "object",
          properties: { parent: { type: "string", enum: ["parent_one", "parent_two"] }, messages: { type: "array" } },
        },
      },
      "gp_two|p_two": {
        state: {
          type: "object",
          properties: { child: { type: "string", enum: ["child_one", "child_two"] }, messages: { type: "array" } },
        },
      },
    });
    // The official extractor's schemas of each namespace, whole: state, input, output and config,
    // and the same under the Agent Server API reference's names.
    for (const namespace of ["gp_two", "gp_two|p_two"]) {
      const own = statics!.subgraphs[namespace];
      expect(served[namespace], namespace).toEqual({ ...own, ...officialAnswer(own) });
    }
    expect(served["gp_two|p_two"].state?.properties).not.toHaveProperty("parent");
    // A namespace picks that subgraph (LangGraph's getSubgraphsAsync, as the official server calls it).
    const under = await subgraphSchemas(compiled("nested"), "nested", "gp_two", true, statics);
    expect(under).toEqual({ gp_two: served.gp_two });
  });

  it("without static schemas, answers a subgraph's own channels, and leaves out the fields it has none of", async () => {
    const served = await subgraphSchemas(compiled("nested"), "nested", undefined, true, null);
    expect(Object.keys(served["gp_two|p_two"].state?.properties as object)).toEqual(["messages", "child"]);
    expect(served.gp_two).not.toHaveProperty("config");
    expect(served.gp_two.config_schema).toBeNull();
    expect(served.gp_two.state_schema).toBe(served.gp_two.state);
  });

  it("falls back to the state's channels without static schemas", () => {
    const served = graphSchemas(compiled("annotation"), "annotation", null);
    expect(Object.keys((served.state_schema as { properties: object }).properties)).toEqual(["messages", "topic"]);
    expect(served.config_schema).toBeNull();
  });

  it("falls back to the channels for each schema TypeScript could not describe", () => {
    const config = { type: "object", properties: { model: { type: "string" } } };
    const served = graphSchemas(compiled("annotation"), "annotation", { config });
    expect(Object.keys((served.input_schema as { properties: object }).properties)).toEqual(["messages", "topic"]);
    expect(served.context_schema).toBe(config);
  });
});

/** A one-graph deployment in a scratch directory; its registry's text and the build's warnings. */
async function buildScratch(prefix: string, graphSource: string, spec: string, env: Record<string, string> = {}) {
  const dir = scratchDir(prefix);
  dirs.push(dir);
  writeFileSync(join(dir, "graph.ts"), graphSource);
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify({ graphs: { g: spec } }));
  const outFile = join(dir, "registry.generated.ts");
  const warnings: string[] = [];
  const warn = vi.spyOn(console, "warn").mockImplementation((message: string) => void warnings.push(message));
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    await buildDeployment(join(dir, "langgraph.json"), { outFile, stageAssets: false });
  } finally {
    vi.unstubAllEnvs();
    warn.mockRestore();
  }
  return { registry: readFileSync(outFile, "utf8"), warnings: warnings.join("\n") };
}

const SMALL_GRAPH = `import { Annotation, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ n: Annotation<number>() });
export const graph = new StateGraph(State).addNode("a", () => ({ n: 1 })).addEdge("__start__", "a").compile();
export default graph;
`;

describe("a failed extraction", () => {
  it("still builds, with a warning, and the registry says the graph has no static schemas", async () => {
    const { registry, warnings } = await buildScratch("schemas-timeout", SMALL_GRAPH, "./graph.ts:graph", {
      LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "1",
    });
    expect(warnings).toContain("timed out after 1 ms (LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS)");
    expect(registry).toContain("staticSchemas: null");
  });

  it("leaves out a graph whose export TypeScript cannot type (a default export)", async () => {
    const { registry, warnings } = await buildScratch("schemas-default", SMALL_GRAPH, "./graph.ts");
    expect(warnings).toContain('Static schemas of graph "g" failed (no schema for its export)');
    expect(registry).toContain("staticSchemas: null");
  });
});
