/**
 * Where the platform's own files are (src/, migrations/, wrangler.toml): the folder of the package.json
 * named "agent-platform" above this module. From sources that is the checkout; from the bundled CLI
 * (cli/agent-platform.js, built by `npm pack`) it is the installed package's folder, wherever npm put it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

export function findPlatformRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "agent-platform"
    ) {
      return dir;
    }
    if (dirname(dir) === dir) throw new Error(`No agent-platform package.json above ${from}`);
  }
}

export const PLATFORM_ROOT = findPlatformRoot(import.meta.dirname);

/** Whether this code runs from the TypeScript sources (a checkout) rather than the bundled CLI. */
export const FROM_SOURCES = import.meta.url.endsWith(".ts");
