import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BuildError } from "../../scripts/lib/deployment.ts";
import {
  bundledSources,
  declaredFiles,
  type LiveReload,
  type LiveReloadOptions,
  sourceHashes,
  startLiveReload,
} from "../../scripts/lib/live-reload.ts";
import { WorkerDownError, WorkerStartError } from "../../scripts/lib/local-runtime.ts";
import type { ProjectDeployment } from "../../scripts/lib/project.ts";
import { until } from "../fixtures/until.ts";

// What `agent-platform dev` rebuilds on (scripts/lib/live-reload.ts), with a fake build and reload, and
// a fake folder watch the test fires itself: which changes count, one rebuild at a time, and a failed
// rebuild keeping the served build.

const dirs: string[] = [];
const reloaders: LiveReload[] = [];
afterEach(() => {
  for (const reloader of reloaders.splice(0)) reloader.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  dirs.push(dir);
  return dir;
}

/** A project whose graph imports util.ts, and the build folder of its last good build. */
function project(): { dir: string; configPath: string; served: ProjectDeployment } {
  const dir = scratch("live-reload");
  const buildDir = scratch("live-reload-build");
  const configPath = join(dir, "langgraph.json");
  writeFileSync(configPath, JSON.stringify({ graphs: { g: "./graph.ts:graph" } }));
  writeFileSync(join(dir, "graph.ts"), 'import "./util.ts";\n');
  writeFileSync(join(dir, "util.ts"), "export const x = 1;\n");
  writeFileSync(join(dir, "notes.md"), "notes\n");
  mkdirSync(join(dir, "node_modules/pkg"), { recursive: true });
  writeFileSync(join(dir, "node_modules/pkg/index.js"), "");
  // esbuild's source map of the modules' bundle: the files it read, relative to the map.
  writeFileSync(
    join(buildDir, "deployment-modules.js.map"),
    JSON.stringify({
      version: 3,
      sources: ["deployment-modules-entry.js", "graph.ts", "util.ts", "node_modules/pkg/index.js"].map((file) =>
        file.startsWith("deployment") ? file : relative(buildDir, join(dir, file)),
      ),
    }),
  );
  return {
    dir,
    configPath,
    served: { configPath, projectDir: dir, buildDir, wranglerConfig: join(buildDir, "wrangler.json"), graphs: ["g"] },
  };
}

interface Harness {
  /** Writes `contents` to `file` (if given) and fires the fake watch of its folder, as fs.watch does. */
  touch(file: string, contents?: string): void;
  builds: number;
  /** The most builds ever running at once. */
  mostAtOnce: number;
  reloads: string[];
  lines: string[];
  errors: string[];
  /** Holds the next build until released. */
  hold(): () => void;
  failNext: string | null;
}

function start(p: ReturnType<typeof project>, extra: Partial<LiveReloadOptions> = {}): Harness {
  const watched = new Map<string, (name: string) => void>();
  let running = 0;
  let held: Promise<void> | null = null;
  const harness: Harness = {
    touch(file, contents) {
      const path = join(p.dir, file);
      if (contents !== undefined) writeFileSync(path, contents);
      const onEntry = watched.get(join(path, ".."));
      if (!onEntry) throw new Error(`nothing watches the folder of ${file}`);
      onEntry(relative(join(path, ".."), path));
    },
    builds: 0,
    mostAtOnce: 0,
    reloads: [],
    lines: [],
    errors: [],
    hold() {
      let release = () => {};
      held = new Promise<void>((resolve) => (release = resolve));
      return release;
    },
    failNext: null,
  };
  reloaders.push(
    startLiveReload({
      configPath: p.configPath,
      project: p.served,
      debounceMs: 5,
      async build() {
        harness.builds += 1;
        running += 1;
        harness.mostAtOnce = Math.max(harness.mostAtOnce, running);
        try {
          const wait = held;
          held = null;
          if (wait) await wait;
          if (harness.failNext) {
            const message = harness.failNext;
            harness.failNext = null;
            throw new BuildError(message);
          }
          return { ...p.served, wranglerConfig: `build-${harness.builds}.json` };
        } finally {
          running -= 1;
        }
      },
      async reload(wranglerConfig) {
        harness.reloads.push(wranglerConfig);
      },
      watch(dir, onEntry) {
        watched.set(dir, onEntry);
        return { close: () => watched.delete(dir) };
      },
      log: (line) => harness.lines.push(line),
      error: (line) => harness.errors.push(line),
      ...extra,
    }),
  );
  return harness;
}

const settled = (h: Harness, count: number) =>
  until(
    async () => h.lines.length + h.errors.length,
    (n) => n >= count,
    5_000,
    5,
  );

describe("live reload", () => {
  it("rebuilds on a change to a module the build bundled, naming it; a rewrite to the same content and files it does not use count for nothing", async () => {
    const p = project();
    const h = start(p);
    h.touch("graph.ts", 'import "./util.ts";\n');
    h.touch("notes.md", "changed\n");
    writeFileSync(join(p.dir, "node_modules/pkg/index.js"), "changed");
    h.touch("node_modules");
    h.touch("util.ts", "export const x = 2;\n");
    await settled(h, 1);
    expect(h.lines).toEqual([
      expect.stringMatching(
        /^Reloaded after a change to util\.ts: rebuilt in \d+\.\d s, serving the new build \d+\.\d s later \(graphs g\)$/,
      ),
    ]);
    expect(h.reloads).toEqual(["build-1.json"]);
  });

  it("changes in a burst make one rebuild, and a change during a rebuild makes one more after it, never two at once", async () => {
    const p = project();
    const h = start(p);
    const release = h.hold();
    h.touch("graph.ts", "// 1\n");
    h.touch("util.ts", "// 1\n");
    await until(
      async () => h.builds,
      (n) => n === 1,
      5_000,
      5,
    );
    h.touch("graph.ts", "// 2\n");
    h.touch("langgraph.json", JSON.stringify({ graphs: { g: "./graph.ts:graph" }, env: {} }));
    // A timer of a longer delay set after the debounce's fires after it: the debounced rebuild has
    // come while the first one is held (not a wait on timing: Node runs timers in expiry order).
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.builds).toBe(1);
    release();
    await settled(h, 2);
    expect(h.lines[0]).toMatch(/^Reloaded after a change to graph\.ts, util\.ts:/);
    expect(h.lines[1]).toMatch(/^Reloaded after a change to graph\.ts, langgraph\.json:/);
    expect(h.builds).toBe(2);
    expect(h.mostAtOnce).toBe(1);
  });

  it("a failed rebuild is printed and serves nothing new; while it stands any file of the project retries, and a good build reloads", async () => {
    const p = project();
    const h = start(p);
    h.failNext = 'Cannot build graph "g" (./graph.ts): graph.ts:1:1: Unexpected end of file';
    h.touch("graph.ts", "export const");
    await settled(h, 1);
    expect(h.errors).toEqual([
      'Reload failed after a change to graph.ts (still serving the last good build; the next change retries): Cannot build graph "g" (./graph.ts): graph.ts:1:1: Unexpected end of file',
    ]);
    expect(h.reloads).toEqual([]);
    // A module the broken graph will import, unknown to the last good build.
    mkdirSync(join(p.dir, ".agent-platform"));
    h.touch(".agent-platform");
    h.touch("helper.ts", "export const y = 1;\n");
    await settled(h, 2);
    expect(h.lines).toEqual([expect.stringMatching(/^Reloaded after a change to helper\.ts:/)]);
    expect(h.reloads).toEqual(["build-2.json"]);
    // Good again: a file the build does not use counts for nothing again.
    h.touch("notes.md", "later\n");
    h.touch("util.ts", "export const x = 3;\n");
    await settled(h, 3);
    expect(h.lines[1]).toMatch(/^Reloaded after a change to util\.ts:/);
  });

  it("any file beside a ui component counts (its own imports are not known)", async () => {
    const p = project();
    writeFileSync(p.configPath, JSON.stringify({ graphs: { g: "./graph.ts:graph" }, ui: { g: "./ui/card.tsx" } }));
    mkdirSync(join(p.dir, "ui"));
    writeFileSync(join(p.dir, "ui/card.tsx"), "export default () => null;\n");
    const h = start(p);
    h.touch("ui/card.css", ".card {}\n");
    await settled(h, 1);
    expect(h.lines[0]).toMatch(/^Reloaded after a change to ui\/card\.css:/);
  });

  it("a reload that fails (the Worker's bundle) is printed like a failed build", async () => {
    const p = project();
    const h = start(p, {
      async reload() {
        throw new Error("wrangler deploy --dry-run exited with 1");
      },
    });
    h.touch("util.ts", "export const x = 4;\n");
    await settled(h, 1);
    expect(h.errors[0]).toMatch(
      /^Reload failed after a change to util\.ts \(still serving the last good build.*wrangler deploy --dry-run exited with 1/s,
    );
  });

  it("a Worker that workerd refuses to start is printed with workerd's error; when the last good one does not start again either, the line says nothing serves", async () => {
    const p = project();
    let fail: Error = new WorkerStartError("The new build's Worker did not start in workerd: Disallowed operation");
    const h = start(p, {
      async reload() {
        throw fail;
      },
    });
    h.touch("util.ts", "export const x = crypto.randomUUID();\n");
    await settled(h, 1);
    expect(h.errors[0]).toBe(
      "Reload failed after a change to util.ts (still serving the last good build; the next change retries): The new build's Worker did not start in workerd: Disallowed operation",
    );
    fail = new WorkerDownError("nor did the last good one again");
    h.touch("util.ts", "export const x = 5;\n");
    await settled(h, 2);
    expect(h.errors[1]).toBe(
      "Reload failed after a change to util.ts (nothing serves until a change builds a Worker that starts): nor did the last good one again",
    );
  });

  it("an edit saved while dev was starting (after its build read the file) rebuilds once at start; files as the build found them do not", async () => {
    const old = new Date(Date.now() - 60_000);
    /** The project as `dev` finds it: its files long saved, and .dev.vars just written by dev itself. */
    const starting = () => {
      const p = project();
      for (const file of ["langgraph.json", "graph.ts", "util.ts", "notes.md"]) utimesSync(join(p.dir, file), old, old);
      writeFileSync(join(p.dir, ".dev.vars"), "KEY=1\n");
      const since = Date.now();
      const hashes = sourceHashes(p.configPath, p.served.buildDir);
      // A module only the new build bundled: known by its modification time alone.
      hashes.delete(join(p.dir, "util.ts"));
      return { p, builtFrom: { since, hashes } };
    };

    const edited = starting();
    // Saved after the build began: the build may have read the old content.
    writeFileSync(join(edited.p.dir, "graph.ts"), 'import "./util.ts";\nexport const graph = 1;\n');
    writeFileSync(join(edited.p.dir, "util.ts"), "export const x = 2;\n");
    // Not a file the build reads: counts for nothing.
    writeFileSync(join(edited.p.dir, "notes.md"), "later\n");
    const h = start(edited.p, { builtFrom: edited.builtFrom });
    await settled(h, 1);
    expect(h.lines).toEqual([expect.stringMatching(/^Reloaded after a change to graph\.ts, util\.ts:/)]);
    expect(h.reloads).toEqual(["build-1.json"]);

    // Nothing saved since the build started (.dev.vars was written before it): no rebuild until a change.
    const quiet = starting();
    const q = start(quiet.p, { builtFrom: quiet.builtFrom });
    q.touch("util.ts", "export const x = 9;\n");
    await settled(q, 1);
    expect(q.builds).toBe(1);
    expect(q.lines).toEqual([expect.stringMatching(/^Reloaded after a change to util\.ts:/)]);
  });
});

describe("what live reload watches", () => {
  it("the files langgraph.json names, the configuration files, and the ui components' folders", () => {
    const dir = scratch("declared");
    const configPath = join(dir, "langgraph.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        graphs: { a: "./src/a.ts:graph", b: { path: "./src/b.ts:make" } },
        auth: { path: "./auth.ts:auth" },
        http: { app: "./app.ts:app" },
        env: ".env.local",
        ui: { a: "./ui/a.tsx" },
      }),
    );
    const { files, uiDirs } = declaredFiles(configPath);
    expect(files).toEqual(
      expect.arrayContaining(
        [
          "langgraph.json",
          ".env",
          ".dev.vars",
          "tsconfig.json",
          "wrangler.json",
          "wrangler.jsonc",
          "wrangler.toml",
          "src/a.ts",
          "src/b.ts",
          "auth.ts",
          "app.ts",
          ".env.local",
          "ui/a.tsx",
        ].map((file) => join(dir, file)),
      ),
    );
    expect(uiDirs).toEqual([join(dir, "ui")]);
    // A config that does not parse still names the configuration files.
    writeFileSync(configPath, "{");
    expect(declaredFiles(configPath).files).toContain(configPath);
  });

  it("the local modules of the last good build, from its source map, without packages", () => {
    const p = project();
    expect(bundledSources(p.served.buildDir).sort()).toEqual([join(p.dir, "graph.ts"), join(p.dir, "util.ts")]);
    expect(bundledSources(scratch("no-build"))).toEqual([]);
  });
});
