import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { bundleConsole } from "../../scripts/lib/console-bundle.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";

describe("build step: the console bundle", () => {
  it("writes a shell page that loads this build's hashed bundle, and stays under its size budget", async () => {
    const assets = scratchDir("console-assets");
    const bundle = await bundleConsole(assets);
    const html = readFileSync(join(assets, "console/index.html"), "utf8");
    const [script, ...chunks] = bundle.firstLoad;
    expect(script).toMatch(/^app-[A-Z0-9]+\.js$/);
    expect(html).toContain(`src="/console/assets/${script}"`);
    for (const chunk of chunks) expect(html).toContain(`<link rel="modulepreload" href="/console/assets/${chunk}">`);
    const gzipped = (name: string) => gzipSync(readFileSync(join(assets, "console/assets", name))).byteLength;
    // The budget: a first load well under 500 KB of compressed JavaScript; pages loaded on
    // demand (chat) come on top, and all of it together stays under that too.
    const firstLoad = bundle.firstLoad.reduce((sum, name) => sum + gzipped(name), 0);
    expect(firstLoad).toBeLessThan(200_000);
    const all = bundle.files.filter((name) => name.endsWith(".js")).reduce((sum, name) => sum + gzipped(name), 0);
    expect(all).toBeLessThan(500_000);
    expect(all).toBeGreaterThan(firstLoad);
    // Nothing is fetched from another origin at run time.
    expect(html).not.toMatch(/https?:\/\//);
  });

  it("takes the server's wire types as types only: no server module is bundled", async () => {
    const bundle = await bundleConsole(scratchDir("console-assets"));
    expect(bundle.inputs.some((path) => path.startsWith("console/src/"))).toBe(true);
    expect(bundle.inputs.filter((path) => path.startsWith("src/"))).toEqual([]);
  });

  it("a rebuild removes bundles that are no longer referenced", async () => {
    const assets = scratchDir("console-assets");
    await bundleConsole(assets);
    writeFileSync(join(assets, "console/assets/app-OLDHASH.js"), "stale");
    await bundleConsole(assets);
    expect(readdirSync(join(assets, "console/assets"))).not.toContain("app-OLDHASH.js");
  });
});
