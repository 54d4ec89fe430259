/**
 * Static graph schemas: the JSON schemas of each graph's state, input, output and config, extracted at
 * build time from the graph's TypeScript types by the official LangGraph.js server's own extractor
 * (@langchain/langgraph-api/schema, on TypeScript 5; see scripts/schema-extractor/package.json). The
 * official server runs it lazily on the first schema request; here it runs once per build, in a child
 * process with a timeout, and the generated registry carries the result to the Worker.
 *
 * A graph whose extraction fails still builds: the build prints a warning and the Worker derives that
 * graph's schemas at run time only (the official server never fails for this either: it does not extract
 * at build time).
 */

import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { build } from "esbuild";
import type { StaticGraphSchema, StaticGraphSchemas } from "../../src/deployment/manifest.ts";
import { FROM_SOURCES, PLATFORM_ROOT } from "./root.ts";

const PROJECT_ROOT = PLATFORM_ROOT;
// The bundled CLI (cli/agent-platform.js) has the child bundled beside it (scripts/pack.ts).
const CHILD = FROM_SOURCES
  ? join(import.meta.dirname, "static-schemas-child.ts")
  : join(PLATFORM_ROOT, "cli/static-schemas-child.js");
const DEFAULT_CACHE_DIR = join(PROJECT_ROOT, "dist/schema-cache");
/**
 * The checkout's extractor package (a devDependency with its own node_modules). The installed package
 * has none: the extractor is then the project's own @langchain/langgraph-api, when it has one.
 */
const CHECKOUT_EXTRACTOR = join(PROJECT_ROOT, "scripts/schema-extractor/package.json");
const CACHE_ENTRIES = 40;
const DEFAULT_TIMEOUT_MS = 30_000;

/** What the official extractor returns for one graph: schemas keyed by `<export>` and `<export>|<ns>`. */
export type GraphSchemaSet = Record<string, StaticGraphSchema>;
export interface ChildRequest {
  graphs: { id: string; file: string; exportName: string }[];
  /** A file @langchain/langgraph-api and TypeScript 5 resolve from (default the checkout's extractor package). */
  extractorFrom?: string;
}
export interface ChildResponse {
  schemas: Record<string, GraphSchemaSet>;
  errors: Record<string, string>;
  /** What the extractor printed (TypeScript's diagnostics, symbols it could not describe), set by the parent. */
  output?: string;
}

export interface SchemaGraph {
  id: string;
  file: string;
  exportName: string;
}

export interface ExtractOptions {
  /** LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS, as the official server reads it (default 30 s). */
  timeoutMs?: number;
  /** Where warnings go (default stderr). */
  warn?: (message: string) => void;
  /** Reuse results of an identical earlier extraction (default true). */
  cache?: boolean;
  /** Where results are cached (default the platform's dist/schema-cache). */
  cacheDir?: string;
}

export function schemaTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number.parseInt(env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS ?? "", 10);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}

/**
 * The official result for one graph as root and subgraph schemas. The root is the key without `|` (the
 * export name); a subgraph's namespace is the rest of its key.
 */
export function splitSchemaSet(set: GraphSchemaSet): StaticGraphSchemas | null {
  const rootKey = Object.keys(set).find((key) => !key.includes("|"));
  if (rootKey === undefined) return null;
  const prefix = `${rootKey}|`;
  const subgraphs = Object.fromEntries(
    Object.entries(set)
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, schema]) => [key.slice(prefix.length), described(schema)]),
  );
  return { root: described(set[rootKey]), subgraphs };
}

/**
 * Leaves out the schemas that say nothing: a bare `{$schema}` is what the extractor gives for a type it
 * saw as `any` (e.g. a `default` export), and the Worker's run-time schemas describe more than that.
 */
function described(schema: StaticGraphSchema): StaticGraphSchema {
  return Object.fromEntries(
    Object.entries(schema).filter(([, value]) => value && Object.keys(value).some((key) => key !== "$schema")),
  );
}

/** Runs the official extractor in a child process; rejects on a crash or at the timeout (the child is killed). */
export function runStaticExtractor(request: ChildRequest, timeoutMs: number): Promise<ChildResponse> {
  return new Promise((resolvePromise, reject) => {
    const child = fork(CHILD, [], { stdio: ["ignore", "pipe", "pipe", "ipc"], serialization: "json" });
    let output = "";
    const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    let response: ChildResponse | undefined;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms (LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS)`));
    }, timeoutMs);
    child.once("message", (message) => (response = message as ChildResponse));
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const printed = output.trim();
      if (response) resolvePromise({ ...response, output: printed });
      else reject(new Error(`the extractor exited with ${signal ?? `code ${code}`}${printed ? `:\n${printed}` : ""}`));
    });
    child.send(request);
  });
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g;
const CANDIDATE_SUFFIXES = ["", ".ts", ".tsx", ".mts", ".cts", "/index.ts", "/index.tsx", "/index.mts"];

/** A relative import's file, as TypeScript would find it (`./a.js` may name `./a.ts`). */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stems = [base, base.replace(/\.(c|m)?jsx?$/, "")];
  for (const stem of stems) {
    for (const suffix of CANDIDATE_SUFFIXES) {
      const candidate = stem + suffix;
      if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    }
  }
  return undefined;
}

/**
 * The local files a graph's types may depend on: what esbuild bundles (it follows tsconfig paths), plus
 * every relative import followed by hand, because esbuild drops type-only imports.
 */
async function localSources(files: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const result = await build({
    entryPoints: files,
    bundle: true,
    write: false,
    metafile: true,
    outdir: join(PROJECT_ROOT, "dist/schema-inputs"),
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
    absWorkingDir: PROJECT_ROOT,
  }).catch(() => undefined);
  const queue = [
    ...files,
    ...Object.keys(result?.metafile?.inputs ?? {})
      .filter((input) => !input.includes("node_modules"))
      .map((input) => resolve(PROJECT_ROOT, input)),
  ];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const target = resolveRelative(file, match[1]);
      if (target && !target.split(sep).includes("node_modules")) queue.push(target);
    }
  }
  return [...seen].sort();
}

/** tsconfig.json files from the graphs' folders up to the filesystem root: the extractor reads the nearest. */
function tsconfigFiles(files: string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      const candidate = join(dir, "tsconfig.json");
      if (existsSync(candidate)) found.add(candidate);
      if (dirname(dir) === dir) break;
    }
  }
  return [...found].sort();
}

/** The package lockfiles in the graphs' folders and above them. */
function lockfilesAbove(files: string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    for (let dir = dirname(file); ; dir = dirname(dir)) {
      for (const name of ["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock"]) {
        if (existsSync(join(dir, name))) found.add(join(dir, name));
      }
      if (dirname(dir) === dir) break;
    }
  }
  return [...found].sort();
}

/** Identifies an extraction: the graphs, every local source and tsconfig they use, and the installed packages. */
async function cacheKey(graphs: SchemaGraph[]): Promise<string> {
  const hash = createHash("sha256");
  hash.update(JSON.stringify(graphs));
  const files = [
    ...(await localSources(graphs.map((g) => g.file))),
    ...tsconfigFiles(graphs.map((g) => g.file)),
    // The packages installed for the graphs' own project (outside this repository) and for this one.
    ...lockfilesAbove(graphs.map((g) => g.file)),
    join(PROJECT_ROOT, "package-lock.json"),
    join(PROJECT_ROOT, "scripts/schema-extractor/package.json"),
  ];
  for (const file of files) {
    hash.update(`\0${file}\0`);
    if (existsSync(file)) hash.update(readFileSync(file));
  }
  return hash.digest("hex");
}

function readCache(cacheDir: string, key: string): ChildResponse | undefined {
  const file = join(cacheDir, `${key}.json`);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ChildResponse;
  } catch {
    return undefined;
  }
}

/** Keeps the newest entries only (scratch deployments of the tests would otherwise pile up). */
function writeCache(cacheDir: string, key: string, response: ChildResponse): void {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `${key}.json`);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(response));
  renameSync(temporary, file);
  const entries = readdirSync(cacheDir)
    .filter((name) => name.endsWith(".json"))
    .map((name) => ({ name, time: statSync(join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const old of entries.slice(CACHE_ENTRIES)) rmSync(join(cacheDir, old.name), { force: true });
}

/**
 * The static schemas of every graph, by graph id: null for a graph whose extraction failed (a warning
 * names it). Never throws for an extraction problem.
 */
export async function extractStaticSchemas(
  graphs: SchemaGraph[],
  options: ExtractOptions = {},
): Promise<Map<string, StaticGraphSchemas | null>> {
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const timeoutMs = options.timeoutMs ?? schemaTimeoutMs();
  const result = new Map<string, StaticGraphSchemas | null>(graphs.map((g) => [g.id, null]));
  if (graphs.length === 0) return result;

  const extractorFrom = existsSync(CHECKOUT_EXTRACTOR) ? CHECKOUT_EXTRACTOR : graphs[0].file;
  if (!resolvesExtractor(extractorFrom)) {
    warn(
      `Static graph schemas come from the official extractor, which this project does not have: graphs ${graphs.map((g) => g.id).join(", ")} get run-time schemas only (for static ones: npm install -D @langchain/langgraph-api typescript@5)`,
    );
    return result;
  }
  const useCache = options.cache ?? true;
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR;
  const key = useCache ? await cacheKey(graphs) : "";
  let response = useCache ? readCache(cacheDir, key) : undefined;
  if (!response) {
    try {
      response = await runStaticExtractor({ graphs, extractorFrom }, timeoutMs);
    } catch (error) {
      warn(
        `Static schema extraction failed (${(error as Error).message}); graphs ${graphs.map((g) => g.id).join(", ")} get run-time schemas only`,
      );
      return result;
    }
    // A failure may be transient (a timeout on a busy machine): only complete results are kept.
    if (useCache && Object.keys(response.errors).length === 0) writeCache(cacheDir, key, response);
  }
  let failed = false;
  for (const graph of graphs) {
    const set = response.schemas[graph.id];
    let schemas = set ? splitSchemaSet(set) : null;
    // TypeScript found no graph type for the export (e.g. a `default` export): nothing to serve.
    if (schemas && Object.keys(schemas.root).length === 0) schemas = null;
    if (!schemas) {
      const reason = response.errors[graph.id] ?? "no schema for its export";
      warn(`Static schemas of graph "${graph.id}" failed (${reason}); it gets run-time schemas only`);
      failed = true;
    }
    result.set(graph.id, schemas);
  }
  // TypeScript's diagnostics explain a failure; when every graph has its schemas they are noise (the
  // augmented sources the extractor compiles often have harmless errors).
  if (failed && response.output) warn(`Static schema extraction printed:\n${response.output}`);
  if (failed && !tsconfigAbove(graphs)) {
    warn(
      "No tsconfig.json above the graphs: TypeScript's defaults cannot resolve packages' exports (@langchain/langgraph...). Add a tsconfig.json with module NodeNext or moduleResolution bundler, as the official server needs too.",
    );
  }
  return result;
}

/** Whether @langchain/langgraph-api's extractor and a TypeScript with a compiler API resolve from `from`. */
function resolvesExtractor(from: string): boolean {
  try {
    const require = createRequire(from);
    require.resolve("@langchain/langgraph-api/schema");
    const typescript = JSON.parse(readFileSync(require.resolve("typescript/package.json"), "utf8")) as {
      version: string;
    };
    // TypeScript 7 (native) has no JS compiler API.
    return Number(typescript.version.split(".")[0]) < 7;
  } catch {
    return false;
  }
}

/** Whether a tsconfig.json sits in the graphs' folder or above it (the extractor looks there). */
function tsconfigAbove(graphs: SchemaGraph[]): boolean {
  let dir = dirname(graphs[0].file);
  for (;;) {
    if (existsSync(join(dir, "tsconfig.json"))) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

/**
 * The registry's schema constants: every distinct schema once (graphs built on the same state share their
 * large message definitions), and the expression of each graph's `staticSchemas`.
 */
export function renderStaticSchemas(schemas: Map<string, StaticGraphSchemas | null>): {
  declarations: string[];
  expression: (graphId: string) => string;
} {
  const constants = new Map<string, string>();
  const declarations: string[] = [];
  const reference = (schema: Record<string, unknown> | undefined): string | undefined => {
    if (schema === undefined) return undefined;
    const json = JSON.stringify(schema);
    let name = constants.get(json);
    if (!name) {
      name = `schema${constants.size}`;
      constants.set(json, name);
      declarations.push(`const ${name} = ${json};`);
    }
    return name;
  };
  const renderOne = (schema: StaticGraphSchema): string => {
    const fields = (["state", "input", "output", "config"] as const).flatMap((field) => {
      const name = reference(schema[field]);
      return name ? [`${field}: ${name}`] : [];
    });
    return `{ ${fields.join(", ")} }`;
  };
  const expressions = new Map<string, string>();
  for (const [graphId, graphSchemas] of schemas) {
    if (!graphSchemas) continue;
    const subgraphs = Object.entries(graphSchemas.subgraphs).map(
      ([namespace, schema]) => `${JSON.stringify(namespace)}: ${renderOne(schema)}`,
    );
    expressions.set(graphId, `{ root: ${renderOne(graphSchemas.root)}, subgraphs: { ${subgraphs.join(", ")} } }`);
  }
  return { declarations, expression: (graphId) => expressions.get(graphId) ?? "null" };
}
