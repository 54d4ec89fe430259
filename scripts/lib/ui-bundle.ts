/**
 * Generative UI: bundles each langgraph.json `ui` component file for the browser into the Worker's
 * static assets, as `<assetsDir>/ui/<graph id>/entrypoint.js` (+ `entrypoint.css` when the component
 * imports CSS).
 *
 * The bundle is the contract the SDK's `LoadExternalComponent` expects from the official bundler:
 * - an IIFE assigned to the global `__LGUI_<graph id, non-alphanumerics as _>`, whose `render(name,
 *   shadowRootId)` mounts the named component through the host's `Symbol.for("LGUI_EXT_STORE")` store;
 * - react, react-dom, @langchain/langgraph-sdk and the `ui_config.shared` packages are not bundled:
 *   the host page provides them through `globalThis[Symbol.for("LGUI_REQUIRE")](name)`, so the component
 *   shares the host's single React.
 */

import { existsSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { build, type Plugin } from "esbuild";
import { writeIfChanged } from "./files.ts";

/** Packages every UI bundle takes from the host page (with their subpaths, e.g. react/jsx-runtime). */
export const HOST_SHARED_PACKAGES = ["react", "react-dom", "@langchain/langgraph-sdk"] as const;

/** One graph's bundled UI, as listed in the deployment manifest. */
export interface UiBundle {
  /** The `ui` key: the graph id clients pass to `POST /ui/{graph_id}`. */
  id: string;
  /** The `ui` value as written in langgraph.json, for messages. */
  source: string;
  /** The asset file names under `/ui/<id>/`, sorted. */
  files: string[];
}

export class UiBundleError extends Error {}

/** The global the bundle assigns and the fragment's onload calls: `__LGUI_` + the id, non-alphanumerics as `_`. */
export const uiGlobalName = (id: string) => `__LGUI_${id.replace(/[^a-zA-Z0-9]/g, "_")}`;

const ENTRY_NAMESPACE = "lgui-entry";
const SHARED_NAMESPACE = "lgui-shared";

/**
 * The bundle's entry: imports the component map (the module's default export) and exports `render`,
 * which puts a fresh element into the shadow root the host created and hands the component to the
 * host's store, which renders it there through a portal.
 */
function entrySource(componentFile: string): string {
  return [
    `import components from ${JSON.stringify(componentFile)};`,
    `export function render(name, shadowRootId) {`,
    `  const host = document.getElementById(shadowRootId);`,
    `  const target = document.createElement("div");`,
    `  host.shadowRoot.appendChild(target);`,
    `  window[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], target);`,
    `}`,
  ].join("\n");
}

/** Resolves the virtual entry, and turns every shared import into a lookup in the host's registry. */
function uiPlugin(componentFile: string, shared: string[]): Plugin {
  const isShared = (path: string) => shared.some((name) => path === name || path.startsWith(`${name}/`));
  return {
    name: "langgraph-ui",
    setup(b) {
      b.onResolve({ filter: /^lgui-entry$/ }, () => ({ path: "entrypoint", namespace: ENTRY_NAMESPACE }));
      b.onLoad({ filter: /.*/, namespace: ENTRY_NAMESPACE }, () => ({
        contents: entrySource(componentFile),
        resolveDir: dirname(componentFile),
        loader: "js",
      }));
      b.onResolve({ filter: /.*/ }, (args) =>
        args.kind !== "entry-point" && isShared(args.path)
          ? { path: args.path, namespace: SHARED_NAMESPACE }
          : undefined,
      );
      // Evaluated when the bundle loads, as the official bundle's rewritten `require` is.
      b.onLoad({ filter: /.*/, namespace: SHARED_NAMESPACE }, (args) => ({
        contents: `module.exports = globalThis[Symbol.for("LGUI_REQUIRE")](${JSON.stringify(args.path)});`,
        loader: "js",
      }));
    },
  };
}

/** Bundles one component file in memory: asset file name → contents. */
async function bundleOne(
  id: string,
  componentFile: string,
  shared: string[],
  configDir: string,
): Promise<Map<string, Uint8Array>> {
  const result = await build({
    // The bundle's source comments name files relative to this, so a build is the same from any cwd.
    absWorkingDir: configDir,
    entryPoints: { entrypoint: "lgui-entry" },
    outdir: "/lgui-out",
    write: false,
    bundle: true,
    platform: "browser",
    format: "iife",
    globalName: uiGlobalName(id),
    target: "es2020",
    jsx: "automatic",
    logLevel: "silent",
    plugins: [uiPlugin(componentFile, shared)],
  });
  const files = new Map<string, Uint8Array>();
  for (const output of result.outputFiles) {
    // Source maps and other side files are not served; the fragment names only .js and .css files.
    if (output.path.endsWith(".js") || output.path.endsWith(".css")) files.set(basename(output.path), output.contents);
  }
  return files;
}

/**
 * Bundles every `ui` entry (graph id → component path, relative to `configDir`) into
 * `<assetsDir>/ui/<id>/`, and removes what an earlier build left there for ids or files no longer
 * produced. Fails with a `UiBundleError` naming the id and path of a missing or broken component.
 */
export async function bundleUi(
  ui: Record<string, string>,
  options: { configDir: string; assetsDir: string; shared?: string[] },
): Promise<UiBundle[]> {
  const shared = [...HOST_SHARED_PACKAGES, ...(options.shared ?? [])];
  const root = join(options.assetsDir, "ui");
  const bundles: UiBundle[] = [];
  const outputs = new Map<string, Map<string, Uint8Array>>();
  // Bundle everything before writing anything, so a failed build leaves the previous assets alone.
  for (const [id, source] of Object.entries(ui)) {
    const where = `ui "${id}" (${source})`;
    const file = resolve(options.configDir, source);
    if (!existsSync(file)) throw new UiBundleError(`Cannot bundle ${where}: file ${file} does not exist`);
    let files: Map<string, Uint8Array>;
    try {
      files = await bundleOne(id, file, shared, options.configDir);
    } catch (error) {
      throw new UiBundleError(`Cannot bundle ${where}: ${(error as Error).message}`);
    }
    if (!files.has("entrypoint.js")) throw new UiBundleError(`Cannot bundle ${where}: esbuild produced no script`);
    outputs.set(id, files);
    bundles.push({ id, source, files: [...files.keys()].sort() });
  }
  if (existsSync(root)) {
    for (const entry of readdirSync(root)) {
      const kept = outputs.get(entry);
      if (!kept) {
        rmSync(join(root, entry), { recursive: true, force: true });
        continue;
      }
      for (const name of readdirSync(join(root, entry))) {
        if (!kept.has(name)) rmSync(join(root, entry, name), { recursive: true, force: true });
      }
    }
  }
  for (const [id, files] of outputs) {
    for (const [name, contents] of files) writeIfChanged(join(root, id, name), contents);
  }
  return bundles;
}
