// npm start reuses the last Worker bundle of a deployment while nothing it was built from has changed.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundleCacheEntry, recordBundle, restoreBundle } from "../../scripts/lib/bundle-cache.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";

const dir = scratchDir("bundle-cache");
const config = join(dir, "wrangler.json");
const source = join(dir, "src.ts");
const entry = bundleCacheEntry(config, "langgraph.json");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(entry.dir, { recursive: true, force: true });
});

/**
 * What wrangler leaves: the bundle in `out`, and esbuild's metafile naming its inputs relative to the
 * folder wrangler ran in, the config's (not the starting process's: a `--config` deployment's config is
 * under dist/deployments/).
 */
function bundled(out: string, contents: string, inputs = [relative(dirname(config), source)]): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "index.js"), contents);
  writeFileSync(entry.metafile, JSON.stringify({ inputs: Object.fromEntries(inputs.map((input) => [input, {}])) }));
}

describe("the Worker bundle cache", () => {
  it("restores the bundle while its inputs and config are unchanged, and not after either changes", () => {
    writeFileSync(config, '{"name":"a"}');
    writeFileSync(source, "export const a = 1;");
    const out = join(dir, "bundle");
    expect(restoreBundle(entry, config, out)).toBe(false);

    bundled(out, "bundle 1");
    recordBundle(entry, config, out);
    expect(existsSync(entry.metafile)).toBe(false);
    rmSync(out, { recursive: true });
    expect(restoreBundle(entry, config, out)).toBe(true);
    expect(readFileSync(join(out, "index.js"), "utf8")).toBe("bundle 1");
    expect(existsSync(join(out, "inputs.json"))).toBe(false);

    writeFileSync(source, "export const a = 2;");
    expect(restoreBundle(entry, config, out)).toBe(false);
    bundled(out, "bundle 2");
    recordBundle(entry, config, out);
    expect(restoreBundle(entry, config, join(dir, "again"))).toBe(true);
    expect(readFileSync(join(dir, "again", "index.js"), "utf8")).toBe("bundle 2");

    writeFileSync(config, '{"name":"b"}');
    expect(restoreBundle(entry, config, out)).toBe(false);
  });

  it("records nothing when an input it names cannot be found (it could never invalidate the entry)", () => {
    writeFileSync(config, '{"name":"c"}');
    const out = join(dir, "unfound");
    bundled(out, "bundle 3", ["src.ts", "node-built-in-modules:fs/promises", "../nowhere/gone.ts"]);
    recordBundle(entry, config, out);
    expect(existsSync(entry.metafile)).toBe(false);
    expect(restoreBundle(entry, config, join(dir, "unfound-again"))).toBe(false);
    // A plugin's virtual module is no file, and does not stop the bundle being recorded.
    bundled(out, "bundle 4", ["src.ts", "node-built-in-modules:fs/promises"]);
    recordBundle(entry, config, out);
    expect(restoreBundle(entry, config, join(dir, "found"))).toBe(true);
  });
});
