/**
 * `agent-platform dev`'s live reload: watches what the project's build reads (langgraph.json, its env
 * file, .env, .dev.vars, tsconfig.json, the project's wrangler config, the graph, auth, http.app and ui
 * files, and the local modules the last build bundled with them) and, on a change, rebuilds the project and serves
 * the new Worker in place of the running one (serve.ts `reload`): debounced, one rebuild at a time.
 *
 * The reload replaces the workerd process on the same port and the same state directory, so threads,
 * runs, the store and traces stay. A run the old Worker was executing is cut off as by a restart: its
 * thread's next alarm (at most HEARTBEAT_MS later, src/threads/runs/run-manager.ts) resumes it from its
 * last checkpoint, on the new code. A failed rebuild changes nothing that is served: the error is
 * printed, the last good build keeps answering, and the next change tries again.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, watch } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { parseGraphSpec } from "../../src/deployment/config.ts";
import { BuildError, readConfig } from "./deployment.ts";
import { WorkerDownError } from "./local-runtime.ts";
import type { ProjectDeployment } from "./project.ts";

/** How long the files must stay unchanged before a rebuild starts (an editor's save is several events). */
export const RELOAD_DEBOUNCE_MS = 150;

/** How far a file's modification time may lag behind Date.now() taken before the write. */
const MTIME_SLACK_MS = 100;

/** The bundle of the project's modules (deployment.ts `modulesFile`) whose source map lists its inputs. */
const MODULES_MAP = "deployment-modules.js.map";
/** The entry esbuild bundles them from: in the map's sources, not a file. */
const MODULES_ENTRY = "deployment-modules-entry.js";

/** Folders whose changes are never the project's sources (its packages, this CLI's own output, VCS). */
const IGNORED_SEGMENTS = new Set(["node_modules", ".agent-platform", ".git", ".wrangler"]);

export interface LiveReloadOptions {
  configPath: string;
  /** The build being served. */
  project: ProjectDeployment;
  /**
   * What that build started from, so that an edit saved while `dev` was starting (after the build read
   * the file) rebuilds once right away: `hashes` of the files it would read (sourceHashes, taken just
   * before it), and when it started (Date.now()), for the modules it bundled that `hashes` lacks (any
   * modified since counts).
   */
  builtFrom?: { hashes: Map<string, string>; since: number };
  /** Builds the project (buildProject); throws a BuildError on a user's mistake. */
  build(configPath: string): Promise<ProjectDeployment>;
  /** Serves a new build (serve.ts `LocalServing.reload`); throws when its bundle fails. */
  reload(wranglerConfig: string): Promise<void>;
  debounceMs?: number;
  /**
   * Watches a folder, calling back with the name of each entry that changes, and `onGone` once the
   * watch fails (its folder removed). fs.watch by default; tests fake it.
   */
  watch?: (dir: string, onEntry: (name: string) => void, onGone: () => void) => { close(): void };
  log?: (line: string) => void;
  error?: (line: string) => void;
}

export interface LiveReload {
  /** Stops watching; a rebuild under way finishes. */
  close(): void;
}

/** The files the last good build read, besides the configuration files watched always. */
export function bundledSources(buildDir: string): string[] {
  const map = join(buildDir, MODULES_MAP);
  try {
    const { sources, sourceRoot } = JSON.parse(readFileSync(map, "utf8")) as {
      sources: string[];
      sourceRoot?: string;
    };
    const root = resolve(dirname(map), sourceRoot ?? "");
    return sources
      .filter((source) => !source.endsWith(MODULES_ENTRY) && !/^[a-z][\w-]+:/i.test(source))
      .map((source) => resolve(root, source))
      .filter((file) => !file.split(sep).includes("node_modules"));
  } catch {
    return [];
  }
}

/**
 * What a change to the project can be to: its configuration files, and the files langgraph.json names
 * (when it parses), with `uiDirs` the folders of its ui components (a component's own imports are not
 * known, so any change beside it counts).
 */
export function declaredFiles(configPath: string): { files: string[]; uiDirs: string[] } {
  const dir = dirname(configPath);
  const files = [
    configPath,
    join(dir, ".env"),
    join(dir, ".dev.vars"),
    // esbuild and the static schemas' TypeScript read it (paths, JSX, module resolution).
    join(dir, "tsconfig.json"),
    ...["wrangler.jsonc", "wrangler.json", "wrangler.toml"].map((name) => join(dir, name)),
  ];
  const uiDirs: string[] = [];
  let config: ReturnType<typeof readConfig>;
  try {
    config = readConfig(configPath);
  } catch {
    return { files, uiDirs };
  }
  const moduleFile = (spec: string) => resolve(dir, parseGraphSpec(spec).file);
  for (const spec of Object.values(config.graphs)) files.push(moduleFile(typeof spec === "string" ? spec : spec.path));
  if (config.auth?.path) files.push(moduleFile(config.auth.path));
  if (config.http?.app) files.push(moduleFile(config.http.app));
  if (typeof config.env === "string") files.push(resolve(dir, config.env));
  for (const file of Object.values(config.ui ?? {})) {
    files.push(resolve(dir, file));
    uiDirs.push(dirname(resolve(dir, file)));
  }
  return { files, uiDirs };
}

/**
 * The content of the files a build of `configPath` reads as far as they are known before it: the
 * configuration's, and the modules the last build in `buildDir` bundled (startLiveReload's `builtFrom`).
 */
export function sourceHashes(configPath: string, buildDir: string): Map<string, string> {
  const files = new Set([...declaredFiles(configPath).files, ...bundledSources(buildDir)]);
  return new Map([...files].map((file) => [file, contentHash(file)]));
}

const contentHash = (file: string) => {
  try {
    return createHash("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    return "missing";
  }
};

function watchFolder(dir: string, onEntry: (name: string) => void, onGone: () => void): { close(): void } {
  const watcher = watch(dir, (_event, filename) => {
    if (filename) onEntry(filename.toString());
  });
  watcher.on("error", onGone);
  return watcher;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function startLiveReload(options: LiveReloadOptions): LiveReload {
  const { configPath } = options;
  const projectDir = dirname(configPath);
  const debounceMs = options.debounceMs ?? RELOAD_DEBOUNCE_MS;
  const log = options.log ?? ((line: string) => console.log(line));
  const error = options.error ?? ((line: string) => console.error(line));
  const watchers = new Map<string, { close(): void }>();
  const watchDir = options.watch ?? watchFolder;
  let served = options.project;
  /** The content of every file a change counts for, as the served build (or the last attempt) saw it. */
  let known = new Map<string, string>();
  let uiDirs: string[] = [];
  /** Set while the last rebuild failed: then any change in a watched folder retries. */
  let failed = false;
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let building = false;
  let closed = false;

  const name = (file: string) => relative(projectDir, file) || file;
  const ignored = (file: string) =>
    relative(projectDir, file)
      .split(sep)
      .some((segment) => IGNORED_SEGMENTS.has(segment));

  /**
   * Watches the folders of the files a change counts for: the configuration's, and the modules the
   * served build bundled (its source map is rewritten only by a good build). `seen` holds the content
   * a rebuild started from, so an edit made while it ran still counts. A folder's watch survives an
   * editor's save-by-rename; a file's does not.
   */
  const track = (seen = new Map<string, string>()) => {
    const declared = declaredFiles(configPath);
    const files = [...new Set([...declared.files, ...bundledSources(served.buildDir)])];
    known = new Map(files.map((file) => [file, seen.get(file) ?? contentHash(file)]));
    uiDirs = declared.uiDirs;
    const dirs = new Set([projectDir, ...files.map((file) => dirname(file)), ...uiDirs]);
    for (const [dir, watcher] of watchers) {
      if (!dirs.has(dir)) {
        watcher.close();
        watchers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (watchers.has(dir) || !existsSync(dir) || ignored(dir)) continue;
      try {
        const gone = () => {
          watchers.get(dir)?.close();
          watchers.delete(dir);
        };
        watchers.set(
          dir,
          watchDir(dir, (entry) => onChange(join(dir, entry)), gone),
        );
      } catch {
        // A folder that cannot be watched (gone, or not there yet): the next rebuild looks again.
      }
    }
  };

  const onChange = (file: string) => {
    if (closed || ignored(file)) return;
    const counts = known.has(file)
      ? known.get(file) !== contentHash(file)
      : uiDirs.includes(dirname(file)) || (failed && existsSync(file));
    if (!counts) return;
    changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(rebuild, debounceMs);
  };

  const rebuild = async () => {
    if (building || closed || changed.size === 0) return;
    building = true;
    const what = [...changed].map(name).join(", ");
    changed.clear();
    const started = Date.now();
    const seen = new Map([...known.keys()].map((file) => [file, contentHash(file)]));
    try {
      const project = await options.build(configPath);
      const built = Date.now();
      await options.reload(project.wranglerConfig);
      served = project;
      failed = false;
      log(
        `Reloaded after a change to ${what}: rebuilt in ${seconds(built - started)}, serving the new build ${seconds(Date.now() - built)} later (graphs ${project.graphs.join(", ")})`,
      );
    } catch (cause) {
      failed = true;
      const message =
        cause instanceof BuildError || cause instanceof WorkerDownError
          ? cause.message
          : String((cause as Error).stack ?? cause);
      const serving =
        cause instanceof WorkerDownError
          ? "nothing serves until a change builds a Worker that starts"
          : "still serving the last good build; the next change retries";
      error(`Reload failed after a change to ${what} (${serving}): ${message}`);
    } finally {
      track(seen);
      building = false;
      // Changes made during the rebuild: the next one.
      if (changed.size > 0 && !closed) timer = setTimeout(rebuild, debounceMs);
    }
  };

  track();
  if (options.builtFrom) {
    const { hashes } = options.builtFrom;
    // The file system's clock is coarser than Date.now() (a kernel tick): a write just after the build
    // started can be stamped a little before it.
    const since = options.builtFrom.since - MTIME_SLACK_MS;
    for (const [file, hash] of known) {
      const before = hashes.get(file);
      const edited =
        before === undefined ? (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= since : before !== hash;
      if (edited) changed.add(file);
    }
    if (changed.size > 0) timer = setTimeout(rebuild, debounceMs);
  }
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
