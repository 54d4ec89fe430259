/**
 * Bundles a deployment's own modules (its graphs, auth handler and HTTP app) into one ES module that the
 * Worker's bundle then imports. Two rules make a project outside this checkout build unchanged:
 *
 * - Its bare imports resolve from its own node_modules (then from each `dependencies` folder's, then
 *   from the platform's), as they would under Node in that project.
 * - The packages the platform itself runs on (`SHARED_PACKAGES`) stay imports in the output, and so does
 *   any package the project resolves to the platform's own copy. Resolved from the output file, they
 *   must land on the platform's copy: an output inside the platform's tree finds it by walking up; one
 *   in a project's .agent-platform/ through the links `linkPackages` makes beside it. One
 *   `@langchain/langgraph`, one `@langchain/core`, so `instanceof` checks and singletons hold.
 */

import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { build, type Message, type Plugin } from "esbuild";

/** Packages (and their subpaths) the deployment shares with the platform instead of bundling its own. */
export const SHARED_PACKAGES = [
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-sdk",
  "@langchain/core",
] as const;

const SHARED_IMPORT = new RegExp(`^(${SHARED_PACKAGES.map((name) => name.replace("/", "\\/")).join("|")})(\\/.*)?$`);
const BUILTINS = new Set(builtinModules);
/** The conditions wrangler bundles with, so a package picks the same build here as in the Worker. */
const WORKER_CONDITIONS = ["workerd", "worker", "browser"];

export class ModuleBundleError extends Error {
  /** The files esbuild's errors point at, to name the graph or handler that failed. */
  readonly files: string[];
  constructor(message: string, files: string[] = []) {
    super(message);
    this.files = files;
  }
}

export interface DeploymentModule {
  /** The export name of the module's namespace in the bundle. */
  name: string;
  file: string;
}

export interface BundleOptions {
  modules: DeploymentModule[];
  /** The output file (inside the platform's tree). */
  outFile: string;
  /** The platform's root: where the shared packages resolve from. */
  platformRoot: string;
  /** Extra package folders whose node_modules resolve bare imports (langgraph.json `dependencies`). */
  dependencyDirs?: string[];
}

/**
 * The folder of the package `name` in a file's path resolved by esbuild (real paths: a symlinked
 * node_modules is followed), or undefined when the file is not inside that package.
 */
function packageDir(file: string, name: string): string | undefined {
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  const at = file.lastIndexOf(marker);
  return at < 0 ? undefined : file.slice(0, at + marker.length - 1);
}

/**
 * Keeps shared packages and the runtime's built-in modules as imports; checks the platform has them.
 * `packages` collects the folder of the platform's copy of each package kept as an import.
 */
function platformImports(platformRoot: string, packages: Map<string, string>): Plugin {
  return {
    name: "platform-imports",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^[^./]/ }, async (args) => {
        // Our own resolve() below comes back through this callback: let esbuild resolve it.
        if ((args.pluginData as { checking?: boolean } | undefined)?.checking) return undefined;
        const bare = args.path.startsWith("node:") ? args.path.slice(5) : args.path;
        if (args.path.startsWith("cloudflare:") || BUILTINS.has(bare) || BUILTINS.has(bare.split("/")[0])) {
          return { path: args.path, external: true };
        }
        if (!SHARED_IMPORT.test(args.path)) {
          // A package the deployment resolves to the platform's own copy (this repository's graphs, a
          // project without it installed, or an installed platform's dependency hoisted into the
          // project's node_modules) stays an import too: one copy in the Worker.
          const found = await pluginBuild.resolve(args.path, {
            kind: args.kind,
            resolveDir: args.resolveDir,
            importer: args.importer,
            pluginData: { checking: true },
          });
          if (found.errors.length > 0 || found.external) return undefined;
          const platformCopy = await pluginBuild.resolve(args.path, {
            kind: args.kind,
            resolveDir: platformRoot,
            pluginData: { checking: true },
          });
          if (platformCopy.errors.length > 0 || platformCopy.path !== found.path) {
            return { path: found.path, sideEffects: found.sideEffects };
          }
          const dir = packageDir(found.path, packageName(args.path));
          if (dir) packages.set(packageName(args.path), dir);
          return { path: args.path, external: true };
        }
        const found = await pluginBuild.resolve(args.path, {
          kind: args.kind,
          resolveDir: platformRoot,
          pluginData: { checking: true },
        });
        if (found.errors.length > 0) {
          return {
            errors: [
              {
                text: `"${args.path}" is not provided by the platform's ${sharedPackageOf(args.path)} ${installedVersion(platformRoot, sharedPackageOf(args.path)) ?? "(not installed)"}; the deployment shares the platform's copy of ${SHARED_PACKAGES.join(", ")}`,
              },
            ],
          };
        }
        const dir = packageDir(found.path, sharedPackageOf(args.path));
        if (dir) packages.set(sharedPackageOf(args.path), dir);
        return { path: args.path, external: true };
      });
    },
  };
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

function sharedPackageOf(specifier: string): string {
  return SHARED_PACKAGES.find((name) => specifier === name || specifier.startsWith(`${name}/`)) ?? specifier;
}

/** The version of `name` installed for a project at `root`, or undefined. */
export function installedVersion(root: string, name: string): string | undefined {
  try {
    const manifest = createRequire(join(root, "package.json")).resolve(`${name}/package.json`);
    return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function formatMessages(messages: Message[], cwd: string): string {
  return messages
    .map((message) => {
      const where = message.location
        ? `${relative(cwd, resolve(cwd, message.location.file))}:${message.location.line}:${message.location.column}: `
        : "";
      return `${where}${message.text}`;
    })
    .join("; ");
}

/** A file of the bundle, not yet written. */
export interface BundleFile {
  path: string;
  contents: Uint8Array;
}

/**
 * Bundles `outFile` in memory: one ES module whose exports are the namespaces of `modules`, by name,
 * its source map, and a declaration file so the generated registry type-checks. The caller writes
 * them once the deployment checks out, so a failed build leaves the last good one in place.
 */
export async function bundleDeploymentModules(
  options: BundleOptions,
): Promise<{ files: BundleFile[]; packages: Map<string, string> }> {
  const { modules, outFile, platformRoot } = options;
  for (const module of modules) {
    if (!existsSync(module.file)) throw new ModuleBundleError(`file ${module.file} does not exist`);
  }
  // esbuild resolves the entry from the output's folder, which must exist (a fresh checkout has no dist/).
  mkdirSync(dirname(outFile), { recursive: true });
  const entry = modules.map((m) => `export * as ${m.name} from ${JSON.stringify(m.file)};`).join("\n");
  const nodePaths = [...(options.dependencyDirs ?? []), platformRoot].map((dir) => join(dir, "node_modules"));
  let files: BundleFile[];
  const packages = new Map<string, string>();
  try {
    const result = await build({
      stdin: { contents: entry, resolveDir: dirname(outFile), sourcefile: "deployment-modules-entry.js" },
      outfile: outFile,
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: WORKER_CONDITIONS,
      target: "es2022",
      nodePaths,
      plugins: [platformImports(platformRoot, packages)],
      sourcemap: "linked",
      logLevel: "silent",
      write: false,
    });
    files = result.outputFiles.map((file) => ({ path: file.path, contents: file.contents }));
  } catch (error) {
    const failure = error as { errors?: Message[]; message: string };
    const errors = failure.errors ?? [];
    if (errors.length === 0) throw new ModuleBundleError(failure.message);
    const unresolved = errors.some((e) => e.text.startsWith("Could not resolve"));
    const hint = unresolved ? " (is the package installed? run npm install in the deployment's folder)" : "";
    const cwd = process.cwd();
    const files = errors.flatMap((e) => (e.location ? [resolve(cwd, e.location.file)] : []));
    throw new ModuleBundleError(`${formatMessages(errors, cwd)}${hint}`, files);
  }
  const declarations = modules.map((m) => `export declare const ${m.name}: Record<string, unknown>;`).join("\n");
  files.push({ path: outFile.replace(/\.js$/, ".d.ts"), contents: new TextEncoder().encode(`${declarations}\n`) });
  return { files, packages };
}

/**
 * Links `<dir>/node_modules/<name>` to each package folder of `packages` (bundleDeploymentModules'),
 * so that a bundle written to `dir` outside the platform's tree imports the platform's copies, as the
 * platform's own sources do: Node and esbuild follow the link to the same real files, one module each.
 */
export function linkPackages(dir: string, packages: Map<string, string>): void {
  for (const [name, target] of packages) {
    const link = join(dir, "node_modules", name);
    try {
      if (realpathSync(link) === realpathSync(target)) continue;
    } catch {
      // no link yet, or a dangling one
    }
    rmSync(link, { recursive: true, force: true });
    mkdirSync(dirname(link), { recursive: true });
    // A junction on Windows needs no privilege; elsewhere the type is ignored.
    symlinkSync(target, link, "junction");
  }
}
