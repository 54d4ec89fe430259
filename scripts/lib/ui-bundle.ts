/**
 * Generative UI: bundles each langgraph.json `ui` component file for the browser into the Worker's
 * static assets, as `<assetsDir>/ui/<graph id>/entrypoint.js` (+ `entrypoint.css` when the component
 * imports CSS).
 *
 * The bundle is the contract the SDK's `LoadExternalComponent` expects from the official bundler:
 * - an IIFE assigned to the global `__LGUI_<graph id, non-alphanumerics as _>`, whose `render(name,
 *   shadowRootId)` mounts the named component through the host's `Symbol.for("LGUI_EXT_STORE")` store;
 * - react, react-dom, @langchain/langgraph-sdk and the `ui_config.shared` packages (with their
 *   subpaths) are external, and esbuild's `require` shim is rewritten, as the official bundler does, to
 *   `globalThis[Symbol.for("LGUI_REQUIRE")]`: the host page (the SDK's `bootstrapUiContext`) answers
 *   each import when the bundle loads, so the component shares the host's single React.
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

/**
 * esbuild's `__require` shim for external imports starts with this test; the official bundler
 * rewrites it to read the host's registry instead, so every external import (`import React from
 * "react"` becomes `__require("react")`) is answered by the host page when the bundle loads.
 */
const REQUIRE_TEST = `typeof require !== "undefined" ? require`;
const HOST_REQUIRE = `globalThis[Symbol.for("LGUI_REQUIRE")]`;
const HOST_REQUIRE_TEST = `typeof ${HOST_REQUIRE} !== "undefined" ? ${HOST_REQUIRE}`;

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

/** Resolves the virtual entry. */
function entryPlugin(componentFile: string): Plugin {
  return {
    name: "langgraph-ui",
    setup(b) {
      b.onResolve({ filter: /^lgui-entry$/ }, () => ({ path: "entrypoint", namespace: ENTRY_NAMESPACE }));
      b.onLoad({ filter: /.*/, namespace: ENTRY_NAMESPACE }, () => ({
        contents: entrySource(componentFile),
        resolveDir: dirname(componentFile),
        loader: "js",
      }));
    },
  };
}

/**
 * The script with esbuild's `require` lookup turned into the host's `LGUI_REQUIRE`, exactly as the
 * official bundler (@langchain/langgraph-ui) does. A bundle that imports a shared package but has no
 * lookup to rewrite would throw "Dynamic require" in the browser, so it fails the build instead.
 */
export function routeToHostRequire(script: string): string {
  const rewritten = script.replaceAll(REQUIRE_TEST, HOST_REQUIRE_TEST);
  if (rewritten === script && /\b__require\(/.test(script)) {
    throw new Error("esbuild's require shim changed shape: the shared imports cannot be routed to LGUI_REQUIRE");
  }
  return rewritten;
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
    // A package name also makes its subpaths external (react/jsx-runtime, @langchain/langgraph-sdk/react-ui).
    external: shared,
    plugins: [entryPlugin(componentFile)],
  });
  const files = new Map<string, Uint8Array>();
  for (const output of result.outputFiles) {
    const name = basename(output.path);
    // Source maps and other side files are not served; the fragment names only .js and .css files.
    if (name === "entrypoint.js") files.set(name, new TextEncoder().encode(routeToHostRequire(output.text)));
    else if (name.endsWith(".js") || name.endsWith(".css")) files.set(name, output.contents);
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
