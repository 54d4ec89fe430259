// `npm pack`'s prepack: what the installed package runs instead of this checkout's TypeScript (Node
// refuses TypeScript under node_modules) and what it cannot build without the checkout's devDependencies.
//   cli/agent-platform.js       scripts/cli.ts and what it imports, one ES module (bin/agent-platform.mjs runs it)
//   cli/static-schemas-child.js the static schema extractor's child process (static-schemas.ts forks it)
//   cli/assets/                 the /docs (Swagger UI) and console assets every build stages
// Packages stay imports (the installed package's dependencies and peer dependencies: one copy of each,
// shared with the project and the Worker); this script fails when the bundle imports one it does not declare.
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";
import { bundleConsole } from "./lib/console-bundle.ts";
import { PREBUILT_ASSETS, stageDocsAssets } from "./lib/deployment.ts";
import { PLATFORM_ROOT } from "./lib/root.ts";

const outDir = join(PLATFORM_ROOT, "cli");
rmSync(outDir, { recursive: true, force: true });

const result = await build({
  entryPoints: {
    "agent-platform": join(PLATFORM_ROOT, "scripts/cli.ts"),
    "static-schemas-child": join(PLATFORM_ROOT, "scripts/lib/static-schemas-child.ts"),
  },
  outdir: outDir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  metafile: true,
  logLevel: "warning",
  banner: { js: "// Built by scripts/pack.ts from scripts/cli.ts (npm pack's prepack). Do not edit." },
});

const manifest = JSON.parse(readFileSync(join(PLATFORM_ROOT, "package.json"), "utf8")) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
const declared = new Set([
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
]);
const builtins = new Set(builtinModules);
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const undeclared = new Set<string>();
for (const output of Object.values(result.metafile.outputs)) {
  for (const imported of output.imports) {
    if (!imported.external) continue;
    const name = packageOf(imported.path.replace(/^node:/, ""));
    if (!builtins.has(name) && !imported.path.startsWith("node:") && !declared.has(name)) undeclared.add(name);
  }
}
if (undeclared.size > 0) {
  console.error(
    `The packed CLI imports packages package.json does not declare as dependencies: ${[...undeclared].join(", ")}`,
  );
  process.exit(1);
}

await stageDocsAssets(PREBUILT_ASSETS);
await bundleConsole(PREBUILT_ASSETS);
