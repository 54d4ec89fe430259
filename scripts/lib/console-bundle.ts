/**
 * The web console (console/src) bundled for the browser into the Worker's static assets:
 * `<assetsDir>/console/index.html` plus content-hashed `assets/app-<hash>.{js,css}`. Everything the
 * console needs ships in that bundle, so it works with no network at run time.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { build, type Metafile } from "esbuild";
import { writeIfChanged } from "./files.ts";
import { PLATFORM_ROOT } from "./root.ts";

const ENTRY = join(PLATFORM_ROOT, "console/src/main.tsx");

export interface ConsoleBundle {
  /** File names under `/console/assets/`. */
  files: string[];
  /** The entry script and the chunks it imports statically: what a first load fetches. */
  firstLoad: string[];
  /** The source files bundled, relative to the working directory. */
  inputs: string[];
}

/** The page every console path serves: the SPA's shell, loading the hashed bundle. */
function indexHtml(script: string, preload: string[], style: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>Agent Platform console</title>
  ${style ? `<link rel="stylesheet" href="/console/assets/${style}">` : ""}
  ${preload.map((chunk) => `<link rel="modulepreload" href="/console/assets/${chunk}">`).join("\n  ")}
  <script type="module" src="/console/assets/${script}"></script>
</head>
<body>
  <div id="root"></div>
  <noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;
}

export async function bundleConsole(assetsDir: string): Promise<ConsoleBundle> {
  const result = await build({
    entryPoints: { app: ENTRY },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    write: false,
    outdir: "/console-out",
    entryNames: "[name]-[hash]",
    // Pages that pull in heavy code (the SDK's React hooks bring @langchain/core) load as chunks
    // when first opened, keeping the first load small.
    splitting: true,
    chunkNames: "chunk-[hash]",
    legalComments: "none",
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
    metafile: true,
  });
  const outDir = join(assetsDir, "console/assets");
  mkdirSync(outDir, { recursive: true });
  const files = result.outputFiles.map((file) => ({ name: basename(file.path), contents: file.contents }));
  // Old hashed bundles go: index.html only ever points at this build's.
  for (const name of readdirSync(outDir)) {
    if (!files.some((file) => file.name === name)) rmSync(join(outDir, name));
  }
  for (const file of files) writeIfChanged(join(outDir, file.name), file.contents);
  const script = files.find((file) => file.name.startsWith("app-") && file.name.endsWith(".js"));
  if (!script) throw new Error("The console bundle produced no JavaScript");
  const style = files.find((file) => file.name.endsWith(".css"))?.name;
  const preload = staticImports(result.metafile.outputs, script.name);
  writeIfChanged(join(assetsDir, "console/index.html"), indexHtml(script.name, preload, style));
  return {
    files: files.map((file) => file.name),
    firstLoad: [script.name, ...preload],
    inputs: Object.keys(result.metafile.inputs),
  };
}

/**
 * The chunks a file imports statically, transitively, by file name (dynamic imports load later, on
 * demand). The metafile names outputs by paths relative to the working directory.
 */
function staticImports(outputs: Metafile["outputs"], entry: string): string[] {
  const byName = new Map(Object.entries(outputs).map(([path, output]) => [basename(path), output]));
  const seen = new Set<string>();
  const visit = (name: string) => {
    for (const imported of byName.get(name)?.imports ?? []) {
      const chunk = basename(imported.path);
      if (imported.kind !== "import-statement" || seen.has(chunk)) continue;
      seen.add(chunk);
      visit(chunk);
    }
  };
  visit(entry);
  return [...seen];
}
