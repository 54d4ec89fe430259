import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { listeningUrl } from "../../scripts/lib/local-runtime.ts";
import { offlineEnv, stopProcessGroup, waitForOk } from "../../scripts/lib/wrangler.ts";
import { until } from "../fixtures/until.ts";

// The installable package: `npm pack` (its prepack compiles the CLI), the tarball installed into an
// empty folder with npm, offline, from the npm cache this repository's own install filled, beside a
// minimal project (a langgraph.json and a graph). The installed package is made read-only (and, when
// the test runs as root, the command runs as `nobody`, who cannot write to node_modules at all); the
// project is then served with `agent-platform dev` on Node 22 (through npx) and on Node 20 (the
// machine's own, where the command runs on its `node` dependency's Node 22), and driven with the
// official SDK; build and deploy --dry-run run on Node 20 too.

const NODE22 = join(PROJECT_ROOT, "node_modules/node/bin/node");
/** The machine's Node 20, when there is one. */
const NODE20 = ["/usr/bin/node", "/usr/local/bin/node"].find(
  (file) => existsSync(file) && spawnSync(file, ["--version"], { encoding: "utf8" }).stdout.startsWith("v20."),
);

interface LockEntry {
  name?: string;
  version?: string;
  link?: boolean;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [key: string]: unknown;
}

interface Manifest {
  version: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** The lockfile entry `name` resolves to from the package at `from`, as Node walks up node_modules folders. */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const at = base.lastIndexOf("/node_modules/");
    base = at < 0 ? "" : base.slice(0, at);
  }
}

/**
 * The project's package-lock.json: the tarball, and every package it needs at the versions and places
 * this repository's lockfile resolved them. With it npm installs from the cache by integrity, without
 * the registry's metadata (npm asks for full package documents to resolve versions, and the cache
 * holds the abbreviated ones the repository's install fetched).
 */
function projectLock(tarball: string, rootDeps: Record<string, string>, manifest: Manifest): object {
  const repo = (
    JSON.parse(readFileSync(join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;
  const packages: Record<string, LockEntry> = {
    "": { name: "package-e2e", devDependencies: rootDeps },
    "node_modules/agent-platform": {
      version: manifest.version,
      resolved: `file:${basename(tarball)}`,
      integrity: `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`,
      dev: true,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
      peerDependencies: manifest.peerDependencies,
    },
  };
  const queue = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).map((name) => ({
    from: "",
    name,
  }));
  for (let next = queue.shift(); next; next = queue.shift()) {
    const path = resolveIn(repo, next.from, next.name);
    // Another platform's optional binary, or an optional peer nobody installed.
    if (!path || packages[path] || repo[path].link) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = repo[path];
    const name = entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    packages[path] = {
      ...entry,
      resolved: `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`,
      dev: true,
    };
    for (const dependency of Object.keys({
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...entry.peerDependencies,
    })) {
      queue.push({ from: path, name: dependency });
    }
  }
  return { name: "package-e2e", lockfileVersion: 3, requires: true, packages };
}

// The input messages become HumanMessages in the graph's reducer, and the node checks them against the
// class it imports itself; getConfig() reads the run's context: both hold only with one shared copy.
const GRAPH = `import { HumanMessage } from "@langchain/core/messages";
import { Annotation, END, getConfig, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  visitors: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  sharedCore: Annotation<boolean>(),
  threadId: Annotation<string>(),
});

export const graph = new StateGraph(State)
  .addNode("visit", (state: typeof State.State) => ({
    count: 1,
    visitors: [\`visitor \${state.count + 1}\`],
    sharedCore: state.messages.every((message) => message instanceof HumanMessage),
    threadId: getConfig().configurable?.thread_id,
  }))
  .addEdge(START, "visit")
  .addEdge("visit", END)
  .compile();
`;

/** Every file under `dir` (links not followed) with its size and modification time. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const stat = statSync(path, { throwIfNoEntry: false });
    files.set(path, stat ? `${stat.size}:${stat.mtimeMs}` : "dangling");
  }
  return files;
}

function setWritable(dir: string, writable: boolean): void {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const path = join(entry.parentPath, entry.name);
    chmodSync(path, (statSync(path).mode & 0o777 & ~0o222) | (writable ? 0o200 : 0));
  }
  chmodSync(dir, writable ? 0o755 : 0o555);
}

let root: string;
let project: string;
let installedPackage: string;
let before: Map<string, string>;
let skipReason: string | undefined;
const children: ChildProcess[] = [];

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = offlineEnv()) {
  return spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 120_000 });
}

/**
 * Who runs the command. Mode bits do not stop root, so a test run as root runs it as `nobody`, who owns
 * the project but not its node_modules: the install is then really read-only to it.
 */
let user: { uid?: number; gid?: number } = {};
let home: string;

function asProjectUser(): void {
  home = join(root, "home");
  mkdirSync(home);
  if (process.getuid?.() !== 0) return;
  const id = (flag: string) => Number(spawnSync("id", [flag, "nobody"], { encoding: "utf8" }).stdout.trim());
  const [uid, gid] = [id("-u"), id("-g")];
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return;
  user = { uid, gid };
  chmodSync(root, 0o755);
  const own = (path: string) => chownSync(path, uid, gid);
  for (const path of [project, home]) own(path);
  for (const entry of readdirSync(project, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (!path.startsWith(join(project, "node_modules"))) own(path);
  }
}

/** The environment of the command: offline, with its own home (wrangler keeps its settings there). */
function commandEnv(path: string): NodeJS.ProcessEnv {
  return offlineEnv({ PATH: path, HOME: home, npm_config_cache: join(home, ".npm") });
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "agent-platform-package-"));
  const packed = run("npm", ["pack", "--json", "--pack-destination", root], PROJECT_ROOT);
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
  const tarball = join(root, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);

  project = join(root, "project");
  mkdirSync(join(project, "src"), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as Manifest;
  // The peer dependencies at the versions this repository runs them.
  const peers = Object.fromEntries(
    Object.keys(manifest.peerDependencies).map((name) => [name, manifest.devDependencies[name]]),
  );
  const rootDeps = { "agent-platform": `file:${basename(tarball)}`, ...peers };
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "package-e2e", private: true, type: "module", devDependencies: rootDeps }, null, 2),
  );
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(projectLock(tarball, rootDeps, manifest)));
  // The tarball beside the lockfile, where its `file:` entry names it.
  writeFileSync(join(project, basename(tarball)), readFileSync(tarball));
  writeFileSync(join(project, "langgraph.json"), JSON.stringify({ graphs: { visits: "./src/graph.ts:graph" } }));
  writeFileSync(join(project, "src/graph.ts"), GRAPH);

  // Install scripts are skipped: the `node` package's fetches its binary with an npm install of its own,
  // which needs the registry. Its binary is put where that script links it, from the same package.
  const installed = run(
    "npm",
    ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel", "error"],
    project,
  );
  if (installed.status !== 0) {
    const notCached = /ENOTCACHED|only-if-cached/.test(installed.stderr);
    if (!notCached) throw new Error(`npm ci failed:\n${installed.stdout}\n${installed.stderr}`);
    skipReason = `a dependency is not in the npm cache, so the tarball cannot be installed offline: ${installed.stderr.split("\n").find((line) => line.includes("ENOTCACHED") || line.includes("cached")) ?? installed.stderr}`;
    return;
  }
  const nodeBin = join(project, "node_modules/node/bin/node");
  mkdirSync(dirname(nodeBin), { recursive: true });
  symlinkSync(realpathSync(NODE22), nodeBin);

  // A read-only install: nothing the command does may write there (as root the mode bits do not stop
  // writes, so the test compares every file of node_modules before and after too).
  installedPackage = realpathSync(join(project, "node_modules/agent-platform"));
  setWritable(installedPackage, false);
  asProjectUser();
  before = snapshot(join(project, "node_modules"));
}, 180_000);

afterAll(async () => {
  await Promise.all(children.map((child) => stopProcessGroup(child)));
  if (installedPackage && existsSync(installedPackage)) setWritable(installedPackage, true);
  if (root) rmSync(root, { recursive: true, force: true });
});

/** `agent-platform dev` on a port the system picks; resolves with its URL once /ok answers. */
async function startDev(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return (await serveDev(command, args, env, project)).url;
}

/** `agent-platform dev` in `cwd`: its URL once /ok answers, and everything it has printed so far. */
async function serveDev(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(command, [...args, "dev", "--port", "0"], {
    cwd,
    env,
    ...user,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.push(child);
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  try {
    const url = await listeningUrl(child, 150_000);
    await waitForOk(`${url}/ok`, 30_000, child);
    return { url, child, output: () => log };
  } catch (error) {
    throw new Error(`agent-platform dev did not start: ${(error as Error).message}\n${log}`);
  }
}

/** Runs the graph twice on a new thread with the official SDK and checks the thread's state. */
async function visitTwice(url: string): Promise<void> {
  const apiKey = /BOOTSTRAP_API_KEY=(.+)/.exec(readFileSync(join(project, ".dev.vars"), "utf8"))?.[1] ?? "";
  const client = new Client({ apiUrl: url, apiKey });
  const thread = await client.threads.create();
  for (const content of ["hello", "again"]) {
    await client.runs.wait(thread.thread_id, "visits", { input: { messages: [{ role: "user", content }] } });
  }
  const info = (await (await fetch(`${url}/info`)).json()) as { metadata: { config_path: string } };
  expect(info.metadata.config_path).toBe("langgraph.json");
  const { values } = await client.threads.getState(thread.thread_id);
  expect(values).toMatchObject({
    count: 2,
    visitors: ["visitor 1", "visitor 2"],
    sharedCore: true,
    threadId: thread.thread_id,
    messages: [
      { type: "human", content: "hello" },
      { type: "human", content: "again" },
    ],
  });
}

/** Node 20's PATH: no Node 22 on it, so only the command's own choice can run wrangler. */
function node20Env(): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !existsSync(join(dir, "node")) || dir === dirname(NODE20 ?? ""));
  return commandEnv(path.join(delimiter));
}

describe("the packed package, installed into an empty folder", () => {
  it("ships compiled JavaScript and no TypeScript it runs with node", (context) => {
    if (skipReason) return context.skip(skipReason);
    const files = readdirSync(installedPackage, { recursive: true }).map(String);
    expect(files).toContain(join("cli", "agent-platform.js"));
    expect(files.some((file) => file.startsWith("scripts"))).toBe(false);
    expect(files).toContain(join("cli", "assets", "console", "index.html"));
  });

  it("serves the project with `npx agent-platform dev` on Node 22, and the SDK runs its graph", async (context) => {
    if (skipReason) return context.skip(skipReason);
    const env = commandEnv([dirname(NODE22), process.env.PATH].join(delimiter));
    const url = await startDev("npx", ["--offline", "agent-platform"], env);
    await visitTwice(url);
    await stopProcessGroup(children.pop()!);
  }, 200_000);

  it("serves it on Node 20, running wrangler on the package's Node 22", async (context) => {
    if (skipReason) return context.skip(skipReason);
    if (!NODE20) return context.skip("no Node 20 on this machine");
    const version = spawnSync(NODE20, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim();
    expect(version.startsWith("20.")).toBe(true);
    const bin = join(project, "node_modules/.bin/agent-platform");
    const url = await startDev(NODE20, [bin], node20Env());
    await visitTwice(url);
    await stopProcessGroup(children.pop()!);
  }, 200_000);

  it("builds and checks a deploy on Node 20", (context) => {
    if (skipReason) return context.skip(skipReason);
    if (!NODE20) return context.skip("no Node 20 on this machine");
    const bin = join(project, "node_modules/.bin/agent-platform");
    rmSync(join(project, ".agent-platform/build"), { recursive: true, force: true });
    const build = spawnSync(NODE20, [bin, "build"], {
      cwd: project,
      env: node20Env(),
      encoding: "utf8",
      timeout: 120_000,
      ...user,
    });
    expect(build.status, build.stderr).toBe(0);
    expect(readFileSync(join(project, ".agent-platform/build/index.js"), "utf8")).toContain("visitor ");
    const dryRun = spawnSync(NODE20, [bin, "deploy", "--dry-run"], {
      cwd: project,
      env: node20Env(),
      encoding: "utf8",
      timeout: 120_000,
      ...user,
    });
    expect(dryRun.status, dryRun.stderr).toBe(0);
  }, 200_000);

  it("starts a project with `agent-platform new`, and `dev` serves an edit on the next run, keeping the last good build past a broken one", async (context) => {
    if (skipReason) return context.skip(skipReason);
    const bin = join(project, "node_modules/.bin/agent-platform");
    const env = commandEnv([dirname(NODE22), process.env.PATH].join(delimiter));
    // From the installed package's templates, into a folder of the project (whose node_modules it uses).
    const created = spawnSync(bin, ["new", "app", "--template", "minimal"], {
      cwd: project,
      env,
      encoding: "utf8",
      timeout: 60_000,
      ...user,
    });
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toContain('Created app from the "minimal" template');
    const app = join(project, "app");
    // Its devDependency names the tarball the package was installed from, not a registry version.
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    expect(manifest.devDependencies["agent-platform"]).toMatch(/^file:\/.*agent-platform-[\d.]+\.tgz$/);

    const dev = await serveDev(bin, [], env, app);
    const apiKey = /BOOTSTRAP_API_KEY=(.+)/.exec(readFileSync(join(app, ".dev.vars"), "utf8"))?.[1] ?? "";
    const client = new Client({ apiUrl: dev.url, apiKey });
    const thread = await client.threads.create();
    const greet = async (name: string) =>
      (await client.runs.wait(thread.thread_id, "minimal", { input: { name } })) as { greeting: string; count: number };
    expect(await greet("Ada")).toMatchObject({ greeting: "Hello, Ada.", count: 1 });

    // An edit is live on the next run, without a restart; the thread's earlier state is still there.
    const source = join(app, "src/graph.ts");
    const original = readFileSync(source, "utf8");
    writeFileSync(source, original.replace('? "!" : "."', '? "!" : "?"'));
    await until(
      async () => dev.output(),
      (log) => log.includes("Reloaded after a change to"),
      120_000,
    );
    expect(await greet("Ada")).toMatchObject({ greeting: "Hello, Ada?", count: 2 });
    const history = await client.threads.getHistory(thread.thread_id);
    expect(history.length).toBeGreaterThan(2);

    // A broken edit: the error is printed and the last good build keeps serving.
    writeFileSync(source, `${original}\nexport const broken = ;\n`);
    await until(
      async () => dev.output(),
      (log) => log.includes("Reload failed after a change to"),
      120_000,
    );
    expect(await greet("Bo")).toMatchObject({ greeting: "Hello, Bo?", count: 3 });
    await stopProcessGroup(children.pop()!);
  }, 300_000);

  it("wrote everything into the project's .agent-platform/, nothing into node_modules", (context) => {
    if (skipReason) return context.skip(skipReason);
    const after = snapshot(join(project, "node_modules"));
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
      (file) => before.get(file) !== after.get(file),
    );
    expect(changed).toEqual([]);
    const generated = readdirSync(join(project, ".agent-platform"));
    expect(generated).toEqual(expect.arrayContaining(["deployments", "state", "build"]));
    expect(existsSync(join(project, ".agent-platform/deployments/langgraph/wrangler.json"))).toBe(true);
    // Written by the user the command ran as (nobody, when the test runs as root).
    if (user.uid !== undefined) expect(statSync(join(project, ".agent-platform/state")).uid).toBe(user.uid);
  });
});
