/**
 * The build step: reads a langgraph.json, checks every graph it declares, and writes the generated
 * registry module that the Worker imports statically. Also stages the /docs assets.
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { parseEnv } from "node:util";
import { build } from "esbuild";
import { type LanggraphConfig, LanggraphConfigSchema, parseGraphSpec } from "../../src/deployment/config.ts";
import { describeValue, graphExportKind } from "../../src/deployment/graph-kind.ts";
import { extractStaticSchemas, renderStaticSchemas } from "./static-schemas.ts";

export const PROJECT_ROOT = resolve(import.meta.dirname, "../..");
// Outside src/ on purpose: wrangler dev re-runs the build when src/ changes, and a generated file there
// would make two dev servers of different configs rebuild each other in a loop.
export const GENERATED_REGISTRY = join(PROJECT_ROOT, "dist/registry.generated.ts");
const DOCS_ASSETS_DIR = join(PROJECT_ROOT, "dist/assets/docs");
const CHECK_DIR = join(PROJECT_ROOT, "dist/graph-check");

export class BuildError extends Error {}

/** The config file to build: `--config <path>`, else `$LANGGRAPH_JSON`, else ./langgraph.json. */
export function configPathFromArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): string {
  const flag = argv.findIndex((arg) => arg === "--config" || arg.startsWith("--config="));
  if (flag >= 0) {
    const value = argv[flag].includes("=") ? argv[flag].slice("--config=".length) : argv[flag + 1];
    if (!value) throw new BuildError("--config needs a path to a langgraph.json file");
    return resolve(value);
  }
  return resolve(env.LANGGRAPH_JSON || join(PROJECT_ROOT, "langgraph.json"));
}

export function readConfig(configPath: string): LanggraphConfig {
  if (!existsSync(configPath)) throw new BuildError(`Deployment config ${configPath} does not exist`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, "utf8"));
  } catch (error) {
    throw new BuildError(`Deployment config ${configPath} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = LanggraphConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new BuildError(`Deployment config ${configPath} is invalid: ${problems}`);
  }
  if (Object.keys(parsed.data.graphs).length === 0) {
    throw new BuildError(`Deployment config ${configPath} declares no graphs`);
  }
  return parsed.data;
}

interface ResolvedGraph {
  id: string;
  file: string;
  exportName: string;
  source: string;
  description: string | null;
}

/**
 * Bundles a deployment module (a graph or the auth handler) for Node and imports it, returning the
 * named export; every failure names `where`.
 */
async function loadExport(file: string, exportName: string, where: string, label: string): Promise<unknown> {
  if (!existsSync(file)) throw new BuildError(`Cannot build ${where}: file ${file} does not exist`);
  mkdirSync(CHECK_DIR, { recursive: true });
  const outfile = join(CHECK_DIR, `${label}-${process.pid}-${Date.now()}.mjs`);
  try {
    await build({
      entryPoints: [file],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent",
    });
  } catch (error) {
    throw new BuildError(`Cannot build ${where}: ${(error as Error).message}`);
  }
  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(outfile).href);
  } catch (error) {
    throw new BuildError(`Cannot load ${where}: ${(error as Error).message}`);
  } finally {
    rmSync(outfile, { force: true });
  }
  if (!(exportName in module)) {
    const available = Object.keys(module).join(", ") || "none";
    throw new BuildError(`Cannot load ${where}: ${file} has no export named "${exportName}" (exports: ${available})`);
  }
  const value = module[exportName];
  return value && typeof (value as PromiseLike<unknown>).then === "function" ? await value : value;
}

/** Loads the graph module and checks that the named export is a graph. */
async function checkGraph(graph: ResolvedGraph): Promise<void> {
  const where = `graph "${graph.id}" (${graph.source})`;
  const value = await loadExport(graph.file, graph.exportName, where, graph.id);
  if (!graphExportKind(value)) {
    throw new BuildError(
      `Export "${graph.exportName}" of ${where} is not a graph: expected a compiled graph, a StateGraph or a factory function, got ${describeValue(value)}`,
    );
  }
}

interface ResolvedAuth {
  file: string;
  exportName: string;
  source: string;
  disableStudioAuth: boolean;
}

/** Loads `auth.path` and checks that it is an `Auth` from @langchain/langgraph-sdk/auth. */
async function checkAuth(auth: ResolvedAuth): Promise<void> {
  const where = `auth.path (${auth.source})`;
  const value = await loadExport(auth.file, auth.exportName, where, "auth");
  if (!value || typeof value !== "object" || !("~handlerCache" in value)) {
    throw new BuildError(
      `Export "${auth.exportName}" of ${where} is not an Auth: export an instance of Auth from @langchain/langgraph-sdk/auth, got ${describeValue(value)}`,
    );
  }
}

function resolveEnv(config: LanggraphConfig, configDir: string): Record<string, string> {
  if (!config.env) return {};
  if (typeof config.env !== "string") return config.env;
  const file = resolve(configDir, config.env);
  if (!existsSync(file)) throw new BuildError(`env file ${file} (langgraph.json "env") does not exist`);
  return Object.fromEntries(
    Object.entries(parseEnv(readFileSync(file, "utf8"))).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}

function importPath(outFile: string, file: string): string {
  const rel = relative(dirname(outFile), file).split(sep).join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

export function renderRegistry(
  outFile: string,
  configPath: string,
  graphs: ResolvedGraph[],
  config: LanggraphConfig,
  env: Record<string, string>,
  auth: ResolvedAuth | null,
  schemas: ReturnType<typeof renderStaticSchemas> = renderStaticSchemas(new Map()),
): string {
  const imports = graphs.map((g, i) => `import * as graph${i} from ${JSON.stringify(importPath(outFile, g.file))};`);
  if (auth) imports.push(`import * as authModule from ${JSON.stringify(importPath(outFile, auth.file))};`);
  const authEntry = auth
    ? `{ module: authModule, exportName: ${JSON.stringify(auth.exportName)}, source: ${JSON.stringify(auth.source)}, disableStudioAuth: ${auth.disableStudioAuth} }`
    : "null";
  const entries = graphs.map(
    (g, i) =>
      `    { id: ${JSON.stringify(g.id)}, module: graph${i}, exportName: ${JSON.stringify(g.exportName)}, source: ${JSON.stringify(g.source)}, description: ${JSON.stringify(g.description)}, staticSchemas: ${schemas.expression(g.id)} },`,
  );
  return [
    `// Generated by scripts/build.ts from ${relative(PROJECT_ROOT, configPath) || configPath}. Do not edit: run \`npm run build\`.`,
    `import type { DeploymentManifest } from ${JSON.stringify(importPath(outFile, join(PROJECT_ROOT, "src/deployment/manifest.ts")))};`,
    ...imports,
    "",
    ...schemas.declarations,
    "",
    "export const manifest: DeploymentManifest = {",
    `  configPath: ${JSON.stringify(relative(PROJECT_ROOT, configPath))},`,
    "  graphs: [",
    ...entries,
    "  ],",
    `  env: ${JSON.stringify(env)},`,
    `  http: ${JSON.stringify(config.http ?? {})},`,
    `  versions: ${JSON.stringify(packageVersions())},`,
    `  auth: ${authEntry},`,
    "};",
    "",
  ].join("\n");
}

/** Versions reported by /info, read from the installed packages at build time. */
function packageVersions(): { platform: string; langgraph_js: string } {
  const read = (file: string) =>
    (JSON.parse(readFileSync(join(PROJECT_ROOT, file), "utf8")) as { version: string }).version;
  return { platform: read("package.json"), langgraph_js: read("node_modules/@langchain/langgraph/package.json") };
}

function writeIfChanged(file: string, content: string | Buffer): boolean {
  if (existsSync(file) && readFileSync(file).equals(Buffer.from(content))) return false;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return true;
}

/** Copies Swagger UI's assets so /docs renders with no external network. */
async function stageDocsAssets(): Promise<void> {
  const source = join(PROJECT_ROOT, "node_modules/swagger-ui-dist");
  for (const name of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
    writeIfChanged(join(DOCS_ASSETS_DIR, name), await readFile(join(source, name)));
  }
}

export interface BuildOptions {
  /** Where to write the generated registry (tests use a scratch file). */
  outFile?: string;
  /** Stage the /docs assets too (default true). */
  stageAssets?: boolean;
  /** Extract the graphs' static schemas (default true; see static-schemas.ts). */
  staticSchemas?: boolean;
}

export async function buildDeployment(
  configPath: string,
  { outFile = GENERATED_REGISTRY, stageAssets = true, staticSchemas = true }: BuildOptions = {},
): Promise<{ graphs: string[]; env: Record<string, string>; changed: boolean }> {
  const config = readConfig(configPath);
  const configDir = dirname(configPath);
  const graphs: ResolvedGraph[] = Object.entries(config.graphs).map(([id, spec]) => {
    const { file, exportName, description } = parseGraphSpec(spec);
    return {
      id,
      file: resolve(configDir, file),
      exportName,
      description,
      source: typeof spec === "string" ? spec : spec.path,
    };
  });
  for (const graph of graphs) await checkGraph(graph);
  let auth: ResolvedAuth | null = null;
  if (config.auth?.path) {
    const { file, exportName } = parseGraphSpec(config.auth.path);
    auth = {
      file: resolve(configDir, file),
      exportName,
      source: config.auth.path,
      disableStudioAuth: config.auth.disable_studio_auth ?? false,
    };
    await checkAuth(auth);
  }
  const env = resolveEnv(config, configDir);
  const schemas = renderStaticSchemas(staticSchemas ? await extractStaticSchemas(graphs) : new Map());
  const changed = writeIfChanged(outFile, renderRegistry(outFile, configPath, graphs, config, env, auth, schemas));
  if (stageAssets) await stageDocsAssets();
  return { graphs: graphs.map((g) => g.id), env, changed };
}
