/**
 * A cache of Worker bundles, so a server started again on unchanged code skips wrangler's bundle (a CLI
 * load and esbuild: most of a start's CPU). An entry is keyed by the wrangler config and the deployment
 * it builds; it is valid while every file esbuild read for it (its metafile's inputs), the config itself
 * and package-lock.json hash as they did.
 */
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { PROJECT_ROOT } from "./deployment.ts";

const PLATFORM_CACHE_ROOT = join(PROJECT_ROOT, "node_modules/.cache/agent-platform/worker-bundles");

/**
 * The platform's node_modules/.cache for its own configs; a config generated outside its tree (a
 * project's .agent-platform/, the platform maybe a read-only installed package) keeps its cache beside it.
 */
function cacheRoot(wranglerConfig: string): string {
  const inPlatformTree = !relative(PROJECT_ROOT, resolve(wranglerConfig)).startsWith("..");
  return inPlatformTree ? PLATFORM_CACHE_ROOT : join(dirname(resolve(wranglerConfig)), "worker-bundle-cache");
}
const INPUTS_FILE = "inputs.json";
/** Entries kept (one per config and deployment; the oldest go first). */
const MAX_ENTRIES = 8;

/** An esbuild input in a plugin's namespace (`node-built-in-modules:fs/promises`), not a file. */
const VIRTUAL_INPUT = /^[a-z][\w-]+:/i;

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** The files a bundle depends on besides its metafile's inputs. */
function fixedInputs(wranglerConfig: string): string[] {
  // esbuild reads the tsconfig too (paths, JSX), but does not list it among the metafile's inputs. An
  // installed package has no lockfile (the files esbuild read from node_modules are inputs anyway).
  const platformFiles = ["package-lock.json", "tsconfig.json"].map((file) => join(PROJECT_ROOT, file));
  return [wranglerConfig, ...platformFiles.filter((file) => existsSync(file))];
}

function hashes(files: string[]): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file, existsSync(file) ? sha(readFileSync(file)) : "missing"]));
}

export interface BundleCacheEntry {
  dir: string;
  /** Where wrangler writes esbuild's metafile for `record`. */
  metafile: string;
}

export function bundleCacheEntry(wranglerConfig: string, deployment: string | undefined): BundleCacheEntry {
  const root = cacheRoot(wranglerConfig);
  const dir = join(root, sha(`${resolve(wranglerConfig)}\n${deployment ?? ""}`).slice(0, 16));
  mkdirSync(root, { recursive: true });
  return { dir, metafile: `${dir}.meta-${process.pid}.json` };
}

/** Copies the cached bundle into `outDir` when it is still valid; false when it is not (or absent). */
export function restoreBundle(entry: BundleCacheEntry, wranglerConfig: string, outDir: string): boolean {
  const fresh = `${outDir}.new-${process.pid}`;
  try {
    const inputs = JSON.parse(readFileSync(join(entry.dir, INPUTS_FILE), "utf8")) as Record<string, string>;
    // An entry naming a file it could not find (recorded before inputs were resolved from the config's
    // folder) could never go stale: never restored.
    if (Object.values(inputs).includes("missing")) return false;
    const now = hashes([...new Set([...Object.keys(inputs), ...fixedInputs(wranglerConfig)])]);
    if (Object.entries(now).some(([file, hash]) => inputs[file] !== hash)) return false;
    rmSync(fresh, { recursive: true, force: true });
    cpSync(entry.dir, fresh, { recursive: true, filter: (source) => !source.endsWith(INPUTS_FILE) });
  } catch {
    // No entry, or another start replacing it right now: bundle afresh.
    rmSync(fresh, { recursive: true, force: true });
    return false;
  }
  rmSync(outDir, { recursive: true, force: true });
  renameSync(fresh, outDir);
  return true;
}

/**
 * Records the bundle just written to `outDir`, with the hashes of what it was built from. Best effort:
 * when another start records the same entry at the same moment, one of them wins and the other keeps
 * its bundle unrecorded.
 */
export function recordBundle(entry: BundleCacheEntry, wranglerConfig: string, outDir: string): void {
  const staged = `${entry.dir}.new-${process.pid}`;
  try {
    const meta = JSON.parse(readFileSync(entry.metafile, "utf8")) as { inputs: Record<string, unknown> };
    // esbuild names inputs relative to where wrangler ran it: the config's folder (a `--config`
    // deployment's is under dist/deployments/); `namespace:path` inputs are a plugin's virtual modules
    // (`node-built-in-modules:fs`), not files. A file that cannot be found could never invalidate the
    // entry, so such a bundle is not recorded.
    const files = Object.keys(meta.inputs)
      .filter((input) => !VIRTUAL_INPUT.test(input))
      .map((input) => resolve(dirname(wranglerConfig), input));
    const inputs = hashes([...files, ...fixedInputs(wranglerConfig)]);
    if (Object.values(inputs).includes("missing")) return;
    rmSync(staged, { recursive: true, force: true });
    cpSync(outDir, staged, { recursive: true });
    writeFileSync(join(staged, INPUTS_FILE), JSON.stringify(inputs));
    rmSync(entry.dir, { recursive: true, force: true });
    renameSync(staged, entry.dir);
    evictOldest(dirname(entry.dir));
  } catch {
    rmSync(staged, { recursive: true, force: true });
  } finally {
    rmSync(entry.metafile, { force: true });
  }
}

function evictOldest(root: string): void {
  const entries = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.includes(".new-"))
    .map((e) => join(root, e.name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const dir of entries.slice(MAX_ENTRIES)) rmSync(dir, { recursive: true, force: true });
}
