/**
 * The build step: reads a langgraph.json, checks every graph it declares, and writes the generated
 * registry module that the Worker imports statically. Also stages the /docs assets.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { parseEnv } from "node:util";
import { type LanggraphConfig, LanggraphConfigSchema, parseGraphSpec } from "../../src/deployment/config.ts";
import { describeValue, graphExportKind, isHonoApp } from "../../src/deployment/graph-kind.ts";
import type { CheckpointerManifest, StoreManifest } from "../../src/deployment/manifest.ts";
import { normalizeCheckpointer, normalizeStore } from "../../src/deployment/store-config.ts";
import { registerSdkLogger } from "../../src/observability/sdk-logger.ts";
import { bundleConsole } from "./console-bundle.ts";
import {
  type BundleFile,
  bundleDeploymentModules,
  installedVersion,
  linkPackages,
  ModuleBundleError,
} from "./deployment-modules.ts";
import { writeIfChanged } from "./files.ts";
import { PLATFORM_ROOT } from "./root.ts";
import { extractStaticSchemas, renderStaticSchemas } from "./static-schemas.ts";
import { bundleUi, type UiBundle, UiBundleError } from "./ui-bundle.ts";

export const PROJECT_ROOT = PLATFORM_ROOT;
// Outside src/ on purpose: wrangler dev re-runs the build when src/ changes, and a generated file there
// would make two dev servers of different configs rebuild each other in a loop.
export const GENERATED_REGISTRY = join(PROJECT_ROOT, "dist/registry.generated.ts");
const ASSETS_DIR = join(PROJECT_ROOT, "dist/assets");

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

interface ResolvedAuth {
  file: string;
  exportName: string;
  source: string;
  disableStudioAuth: boolean;
}

interface ResolvedHttpApp {
  file: string;
  exportName: string;
  source: string;
}

/** `store.index.embed` naming the deployment's own embedding function. */
interface ResolvedEmbed {
  file: string;
  exportName: string;
  source: string;
}

/** One module of the deployment, its name in the bundle, and how messages name it. */
interface ModuleSpec {
  name: string;
  file: string;
  where: string;
}

/**
 * Bundles the deployment's modules and imports the bundle in Node to check what they export; returns
 * the loaded modules and the bundle's files, which the caller writes once every check passed.
 */
async function bundleAndLoad(
  modules: ModuleSpec[],
  outFile: string,
  dependencyDirs: string[],
): Promise<{ loaded: Record<string, Record<string, unknown>>; files: BundleFile[] }> {
  let files: BundleFile[];
  let packages: Map<string, string>;
  try {
    ({ files, packages } = await bundleDeploymentModules({
      modules,
      outFile,
      platformRoot: PROJECT_ROOT,
      dependencyDirs,
    }));
  } catch (error) {
    if (!(error instanceof ModuleBundleError)) throw error;
    const missing = modules.find((m) => error.message === `file ${m.file} does not exist`);
    if (missing) throw new BuildError(`Cannot build ${missing.where}: file ${missing.file} does not exist`);
    const culprit = modules.find((m) => error.files.includes(m.file));
    throw new BuildError(`Cannot build ${culprit?.where ?? "the deployment"}: ${error.message}`);
  }
  // The SDK logger is there before any graph module runs, as in the Worker (src/deployment/before-graphs.ts).
  registerSdkLogger();
  // Checked from a file of its own beside the output (so imports resolve the same), named per build:
  // tests build several deployments in one process, and Node caches modules by URL.
  const checkFile = join(dirname(outFile), `.check-${process.pid}-${Date.now()}.mjs`);
  const bundle = files.find((file) => file.path === outFile);
  if (!bundle) throw new Error(`esbuild wrote no ${outFile}`);
  mkdirSync(dirname(outFile), { recursive: true });
  // Outside the platform's tree (a project's .agent-platform/), the imports the bundle shares with the
  // platform resolve through links to the platform's copies, for this check and for wrangler's bundle.
  const inPlatformTree = !relative(PROJECT_ROOT, outFile).startsWith("..");
  if (!inPlatformTree) linkPackages(dirname(outFile), packages);
  // Without its source map comment: the map is written with the bundle, after the checks.
  writeFileSync(
    checkFile,
    Buffer.from(bundle.contents)
      .toString("utf8")
      .replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n"),
  );
  try {
    return { loaded: await import(pathToFileURL(checkFile).href), files };
  } catch (error) {
    const culprit = modules.length === 1 ? modules[0].where : "the deployment's modules";
    throw new BuildError(`Cannot load ${culprit}: ${(error as Error).message}`);
  } finally {
    rmSync(checkFile, { force: true });
  }
}

/** The named export of a loaded module (awaited when it is a promise); every failure names `where`. */
async function exportOf(
  loaded: Record<string, Record<string, unknown>>,
  spec: ModuleSpec,
  exportName: string,
): Promise<unknown> {
  const module = loaded[spec.name];
  if (!(exportName in module)) {
    const available = Object.keys(module).join(", ") || "none";
    throw new BuildError(
      `Cannot load ${spec.where}: ${spec.file} has no export named "${exportName}" (exports: ${available})`,
    );
  }
  const value = module[exportName];
  try {
    return value && typeof (value as PromiseLike<unknown>).then === "function" ? await value : value;
  } catch (error) {
    throw new BuildError(`Cannot load ${spec.where}: ${(error as Error).message}`);
  }
}

function checkGraph(graph: ResolvedGraph, value: unknown, where: string): void {
  if (!graphExportKind(value)) {
    throw new BuildError(
      `Export "${graph.exportName}" of ${where} is not a graph: expected a compiled graph, a StateGraph or a factory function, got ${describeValue(value)}`,
    );
  }
}

function checkAuth(auth: ResolvedAuth, value: unknown, where: string): void {
  if (!value || typeof value !== "object" || !("~handlerCache" in value)) {
    throw new BuildError(
      `Export "${auth.exportName}" of ${where} is not an Auth: export an instance of Auth from @langchain/langgraph-sdk/auth, got ${describeValue(value)}`,
    );
  }
}

function checkHttpApp(app: ResolvedHttpApp, value: unknown, where: string): void {
  if (!isHonoApp(value)) {
    throw new BuildError(
      `Export "${app.exportName}" of ${where} is not a Hono app: export an instance of Hono (new Hono()), got ${describeValue(value)}`,
    );
  }
}

function checkEmbed(embed: ResolvedEmbed, value: unknown, where: string): void {
  if (typeof value !== "function") {
    throw new BuildError(
      `Export "${embed.exportName}" of ${where} is not a function: export a function from texts (string[]) to vectors (number[][]), got ${describeValue(value)}`,
    );
  }
}

/** The bundle of the deployment's own modules, beside its registry. */
function modulesFile(registryFile: string): string {
  return join(dirname(registryFile), "deployment-modules.js");
}

/**
 * langgraph.json `dependencies`: package folders (relative to the config) whose node_modules resolve
 * the deployment's imports, as the official CLI installs each of them into the image. Python-style
 * requirement strings (no leading "." or "/") are not folders and are ignored, as the JS CLI does.
 */
function dependencyDirs(config: LanggraphConfig, configDir: string): string[] {
  const dirs: string[] = [];
  for (const dependency of config.dependencies ?? []) {
    if (!/^(\.|\/)/.test(dependency)) continue;
    const dir = resolve(configDir, dependency);
    if (!existsSync(join(dir, "package.json"))) {
      throw new BuildError(`dependency "${dependency}" (langgraph.json "dependencies") has no package.json at ${dir}`);
    }
    dirs.push(dir);
  }
  return dirs;
}

/** The values of langgraph.json's `env` when it names a file (with the file's path), else undefined. */
export function envFileValues(configPath: string): { file: string; values: Record<string, string> } | undefined {
  const config = readConfig(configPath);
  if (typeof config.env !== "string") return undefined;
  return { file: resolve(dirname(configPath), config.env), values: resolveEnv(config, dirname(configPath)) };
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
  httpApp: ResolvedHttpApp | null,
  ui: UiBundle[] = [],
  schemas: ReturnType<typeof renderStaticSchemas> = renderStaticSchemas(new Map()),
  store: StoreManifest = { index: null, ttl: null },
  checkpointer: CheckpointerManifest = { ttl: null },
): string {
  const embedsFunction = store.index?.embed.kind === "function";
  const names = [
    ...graphs.map((_, i) => `graph${i}`),
    ...(auth ? ["authModule"] : []),
    ...(httpApp ? ["httpApp"] : []),
    ...(embedsFunction ? ["embedModule"] : []),
  ];
  const imports = [
    // First: what the deployment's modules may use at load (the SDK logger).
    `import ${JSON.stringify(importPath(outFile, join(PROJECT_ROOT, "src/deployment/before-graphs.ts")))};`,
    `import { ${names.join(", ")} } from ${JSON.stringify(importPath(outFile, modulesFile(outFile)))};`,
  ];
  const httpAppEntry = httpApp
    ? `{ module: httpApp, exportName: ${JSON.stringify(httpApp.exportName)}, source: ${JSON.stringify(httpApp.source)} }`
    : "null";
  const authEntry = auth
    ? `{ module: authModule, exportName: ${JSON.stringify(auth.exportName)}, source: ${JSON.stringify(auth.source)}, disableStudioAuth: ${auth.disableStudioAuth} }`
    : "null";
  const entries = graphs.map(
    (g, i) =>
      `    { id: ${JSON.stringify(g.id)}, module: graph${i}, exportName: ${JSON.stringify(g.exportName)}, source: ${JSON.stringify(g.source)}, description: ${JSON.stringify(g.description)}, staticSchemas: ${schemas.expression(g.id)} },`,
  );
  return [
    `// Generated by scripts/build.ts from ${shownConfigPath(configPath)}. Do not edit: run \`npm run build\`.`,
    `import type { DeploymentManifest } from ${JSON.stringify(importPath(outFile, join(PROJECT_ROOT, "src/deployment/manifest.ts")))};`,
    ...imports,
    "",
    ...schemas.declarations,
    "",
    "export const manifest: DeploymentManifest = {",
    `  configPath: ${JSON.stringify(shownConfigPath(configPath))},`,
    "  graphs: [",
    ...entries,
    "  ],",
    `  env: ${JSON.stringify(env)},`,
    `  http: ${JSON.stringify(config.http ?? {})},`,
    `  versions: ${JSON.stringify(packageVersions())},`,
    `  auth: ${authEntry},`,
    `  httpApp: ${httpAppEntry},`,
    `  ui: ${JSON.stringify(ui.map(({ id, files }) => ({ id, files })))},`,
    `  store: ${renderStore(store)},`,
    `  checkpointer: ${JSON.stringify(checkpointer)},`,
    "};",
    "",
  ].join("\n");
}

/**
 * The config's path as /info reports it: relative to the platform's folder for a config inside it, else
 * the file's name in its project (an installed platform lives in the project's node_modules).
 */
function shownConfigPath(configPath: string): string {
  const inPlatform = relative(PROJECT_ROOT, configPath);
  return inPlatform.startsWith("..") ? basename(configPath) : inPlatform;
}

/** The `store` section: JSON, except a function `embed`, which refers to the bundled module. */
function renderStore(store: StoreManifest): string {
  const embed = store.index?.embed;
  if (embed?.kind !== "function") return JSON.stringify(store);
  const { module: _module, ...rest } = embed;
  const embedEntry = `{ ...${JSON.stringify(rest)}, module: embedModule }`;
  const index = `{ embed: ${embedEntry}, dims: ${JSON.stringify(store.index?.dims)}, fields: ${JSON.stringify(store.index?.fields)} }`;
  return `{ index: ${index}, ttl: ${JSON.stringify(store.ttl)} }`;
}

/** Versions reported by /info, read from the installed packages at build time. */
function packageVersions(): { platform: string; langgraph_js: string } {
  const platform = (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string })
    .version;
  // The copy the Worker bundles: the one the platform's own sources resolve (the project's, when installed).
  return { platform, langgraph_js: installedVersion(PROJECT_ROOT, "@langchain/langgraph") ?? "unknown" };
}

/**
 * The /docs and console assets the installed package ships prebuilt (written by `npm pack`'s prepack,
 * scripts/pack.ts): the package has neither the console's sources nor its browser dependencies.
 */
export const PREBUILT_ASSETS = join(PROJECT_ROOT, "cli/assets");
const CONSOLE_SOURCES = join(PROJECT_ROOT, "console/src");

/** Copies Swagger UI's assets so /docs renders with no external network. */
export async function stageDocsAssets(assetsDir: string): Promise<void> {
  const source = join(PROJECT_ROOT, "node_modules/swagger-ui-dist");
  for (const name of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
    writeIfChanged(join(assetsDir, "docs", name), await readFile(join(source, name)));
  }
}

/** The /docs and console assets: built from the checkout's sources, or copied from the package's prebuilt ones. */
async function stageAssetsInto(assetsDir: string): Promise<void> {
  if (existsSync(CONSOLE_SOURCES)) {
    await stageDocsAssets(assetsDir);
    await bundleConsole(assetsDir);
    return;
  }
  if (!existsSync(PREBUILT_ASSETS)) {
    throw new BuildError(`The package has no prebuilt console and /docs assets at ${PREBUILT_ASSETS}: reinstall it`);
  }
  const files = readdirSync(PREBUILT_ASSETS, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const wanted = new Set(files.map((e) => relative(PREBUILT_ASSETS, join(e.parentPath, e.name))));
  // Old hashed console bundles go, as bundleConsole does.
  const consoleDir = join(assetsDir, "console/assets");
  for (const name of existsSync(consoleDir) ? readdirSync(consoleDir) : []) {
    if (!wanted.has(join("console/assets", name))) rmSync(join(consoleDir, name), { force: true });
  }
  for (const file of wanted) writeIfChanged(join(assetsDir, file), readFileSync(join(PREBUILT_ASSETS, file)));
}

export interface BuildOptions {
  /** Where to write the generated registry (tests use a scratch file). */
  outFile?: string;
  /** Stage the /docs assets too (default true). */
  stageAssets?: boolean;
  /**
   * The static assets directory the `ui` bundles go to: by default the Worker's (dist/assets) for the
   * project's registry, and an `assets` folder beside any other `outFile`, so a scratch build never
   * touches the Worker's assets.
   */
  assetsDir?: string;
  /** Extract the graphs' static schemas (default true; see static-schemas.ts). */
  staticSchemas?: boolean;
  /** Where extracted schemas are cached (default the platform's dist/schema-cache; a project's is its own). */
  schemaCacheDir?: string;
  /**
   * Leave the values of langgraph.json's `env` file out of the registry (a deploy sets them as Worker
   * secrets instead: bundled, they would be readable in the deployed script). An inline `env` map stays.
   */
  omitEnvFile?: boolean;
}

export async function buildDeployment(
  configPath: string,
  {
    outFile = GENERATED_REGISTRY,
    stageAssets = true,
    assetsDir = outFile === GENERATED_REGISTRY ? ASSETS_DIR : join(dirname(outFile), "assets"),
    staticSchemas = true,
    schemaCacheDir,
    omitEnvFile = false,
  }: BuildOptions = {},
): Promise<{ graphs: string[]; env: Record<string, string>; store: StoreManifest; changed: boolean }> {
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
  let auth: ResolvedAuth | null = null;
  if (config.auth?.path) {
    const { file, exportName } = parseGraphSpec(config.auth.path);
    auth = {
      file: resolve(configDir, file),
      exportName,
      source: config.auth.path,
      disableStudioAuth: config.auth.disable_studio_auth ?? false,
    };
  }
  let httpApp: ResolvedHttpApp | null = null;
  if (config.http?.app) {
    const { file, exportName } = parseGraphSpec(config.http.app);
    httpApp = { file: resolve(configDir, file), exportName, source: config.http.app };
  }
  const specs: ModuleSpec[] = graphs.map((g, i) => ({
    name: `graph${i}`,
    file: g.file,
    where: `graph "${g.id}" (${g.source})`,
  }));
  // Validated by readConfig; a function embed is resolved relative to langgraph.json, like graph paths.
  // Its `module` stays empty in the manifest: renderStore writes the bundled `embedModule` in its place.
  const embeds: ResolvedEmbed[] = [];
  const store = normalizeStore(config.store, (file, exportName, source) => {
    embeds.push({ file: resolve(configDir, file), exportName, source });
    return { kind: "function", module: {}, exportName, source };
  });
  const checkpointer = normalizeCheckpointer(config.checkpointer);
  const resolvedEmbed = embeds[0] ?? null;
  const embedSpec = resolvedEmbed && {
    name: "embedModule",
    file: resolvedEmbed.file,
    where: `store.index.embed (${resolvedEmbed.source})`,
  };
  const authSpec = auth && { name: "authModule", file: auth.file, where: `auth.path (${auth.source})` };
  const appSpec = httpApp && { name: "httpApp", file: httpApp.file, where: `http.app (${httpApp.source})` };
  const { loaded, files } = await bundleAndLoad(
    [...specs, ...(authSpec ? [authSpec] : []), ...(appSpec ? [appSpec] : []), ...(embedSpec ? [embedSpec] : [])],
    modulesFile(outFile),
    dependencyDirs(config, configDir),
  );
  for (const [i, graph] of graphs.entries()) {
    checkGraph(graph, await exportOf(loaded, specs[i], graph.exportName), specs[i].where);
  }
  if (auth && authSpec) checkAuth(auth, await exportOf(loaded, authSpec, auth.exportName), authSpec.where);
  if (httpApp && appSpec) checkHttpApp(httpApp, await exportOf(loaded, appSpec, httpApp.exportName), appSpec.where);
  if (resolvedEmbed && embedSpec) {
    checkEmbed(resolvedEmbed, await exportOf(loaded, embedSpec, resolvedEmbed.exportName), embedSpec.where);
  }
  const env = omitEnvFile && typeof config.env === "string" ? {} : resolveEnv(config, configDir);
  // The slow step first: the UI bundles, the modules' bundle and the registry are written together after it.
  const schemas = renderStaticSchemas(
    staticSchemas ? await extractStaticSchemas(graphs, { cacheDir: schemaCacheDir }) : new Map(),
  );
  const ui = await bundleUi(config.ui ?? {}, { configDir, assetsDir, shared: config.ui_config?.shared }).catch(
    (error: unknown) => {
      throw error instanceof UiBundleError ? new BuildError(error.message) : error;
    },
  );
  for (const file of files) writeIfChanged(file.path, Buffer.from(file.contents));
  const changed = writeIfChanged(
    outFile,
    renderRegistry(outFile, configPath, graphs, config, env, auth, httpApp, ui, schemas, store, checkpointer),
  );
  if (stageAssets) await stageAssetsInto(assetsDir);
  return { graphs: graphs.map((g) => g.id), env, store, changed };
}
