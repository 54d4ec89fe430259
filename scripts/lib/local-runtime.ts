/**
 * The local Workers runtime `npm start` serves on: the Worker wrangler bundles for a deploy, run by
 * Miniflare directly with the bindings wrangler derives from wrangler.toml. Unlike `wrangler dev` (kept
 * as `npm run dev`) there is no proxy Worker in front of it and no request logging in Node, so a
 * request costs the Worker's own CPU and little else. Same workerd, bindings and state directory.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { bundleCacheEntry, recordBundle, restoreBundle } from "./bundle-cache.ts";
import { BuildError, PROJECT_ROOT } from "./deployment.ts";
import { offlineEnv, runWrangler, stopProcessGroup, WRANGLER_CONFIG, waitForOk } from "./wrangler.ts";

type MiniflareModule = typeof import("miniflare");
export type LocalRuntime = InstanceType<MiniflareModule["Miniflare"]>;

/** wrangler's own Miniflare (not the vitest plugin's), so the runtime is the one `wrangler dev` runs. */
function wranglerMiniflare(): MiniflareModule {
  const fromWrangler = createRequire(
    createRequire(join(PROJECT_ROOT, "package.json")).resolve("wrangler/package.json"),
  );
  return fromWrangler("miniflare") as MiniflareModule;
}

/** Serves the `[assets]` directory to the Worker's assets binding, nothing else. */
const ASSETS_WORKER = "agent-platform-assets";
const ASSETS_SCRIPT = "export default { fetch: (request, env) => env.ASSETS.fetch(request) };";

/** The limits guard's plan for every local runtime (npm start, npm run dev, the test suites). */
export const LOCAL_LIMITS_GUARD = "paid";

/** The state directory of `--persist-to`, or wrangler dev's default (.wrangler/state). */
export function stateDirectory(persistTo?: string): string {
  return persistTo || join(PROJECT_ROOT, ".wrangler/state");
}

/**
 * Bundles the Worker exactly as `wrangler deploy` would (its [build] command included, so
 * `LANGGRAPH_JSON` in `env` picks the deployment) into `outDir`; or copies the last bundle of the same
 * config and deployment when nothing it was built from has changed (bundle-cache.ts).
 */
export async function bundleWorker(
  outDir: string,
  env: NodeJS.ProcessEnv = offlineEnv(),
  wranglerConfig: string = WRANGLER_CONFIG,
): Promise<void> {
  const cached = bundleCacheEntry(wranglerConfig, env.LANGGRAPH_JSON);
  if (restoreBundle(cached, wranglerConfig, outDir)) return;
  // Bundled beside it first, so a failed bundle leaves the last good one in place.
  const fresh = `${outDir}.new-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  try {
    await runWrangler(
      ["deploy", "--dry-run", "--outdir", fresh, "--metafile", cached.metafile, "--config", wranglerConfig],
      env,
    );
  } catch (error) {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(cached.metafile, { force: true });
    throw error;
  }
  rmSync(outDir, { recursive: true, force: true });
  renameSync(fresh, outDir);
  recordBundle(cached, wranglerConfig, outDir);
}

/** wrangler's table of applied D1 migrations (its default `migrations_table`), so either may apply them. */
const MIGRATIONS_TABLE = "d1_migrations";

/**
 * Applies the pending D1 migrations (this repository's migrations/, which every deployment's database
 * uses) to the local state, as `wrangler d1 migrations apply --local` does: the same table of applied
 * names, each migration and its record in one atomic batch. In this process, on a Miniflare of its own
 * that stops before the Worker's starts: wrangler's command costs a CLI load and a runtime of its own.
 * Returns the names applied.
 */
export async function applyMigrations(wranglerConfig: string, persistTo?: string): Promise<string[]> {
  const { Miniflare, convertV4MiniflareOptions, Log, LogLevel } = wranglerMiniflare();
  const { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } = await import("wrangler");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(wranglerConfig);
  const runtime = new Miniflare(
    convertV4MiniflareOptions({
      // The same persistence root as the Worker's runtime (serveWorker), so the same database file.
      resourcePersistencePath: join(stateDirectory(persistTo), "v3"),
      cf: false,
      log: new Log(LogLevel.WARN),
      workers: [
        {
          name: "agent-platform-migrations",
          compatibilityDate: workerOptions.compatibilityDate,
          d1Databases: workerOptions.d1Databases,
          modules: [{ type: "ESModule", path: "migrations.js", contents: "export default {};" }],
        },
      ],
    } as Parameters<typeof convertV4MiniflareOptions>[0]),
  );
  try {
    const db = await runtime.getD1Database("DB");
    await db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);`,
    );
    const applied = new Set(
      (await db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all<{ name: string }>()).results.map(
        (row: { name: string }) => row.name,
      ),
    );
    const dir = join(PROJECT_ROOT, "migrations");
    const pending = readdirSync(dir)
      .filter((file) => file.endsWith(".sql") && !applied.has(file))
      .sort();
    for (const name of pending) {
      const statements = unstable_splitSqlQuery(readFileSync(join(dir, name), "utf8")).map((sql) => db.prepare(sql));
      statements.push(db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`).bind(name));
      await db.batch(statements).catch((error: Error) => {
        throw new Error(`Migration ${name} failed: ${error.message}`);
      });
    }
    return pending;
  } finally {
    await runtime.dispose();
  }
}

export interface ServeOptions {
  bundleDir: string;
  /** The Worker's wrangler config (this repository's wrangler.toml by default). */
  wranglerConfig?: string;
  ip: string;
  port: number;
  /** `--persist-to`; wrangler dev's default state otherwise. */
  persistTo?: string;
  /** Worker vars and secrets over wrangler.toml's and .dev.vars'. */
  vars?: Record<string, string>;
  /** Exposes workerd's V8 inspector (for ../shared/tools/cpu-profile.mjs). */
  inspectorPort?: number;
  /** Where the Worker's console output goes; stdout/stderr otherwise. */
  log?: (level: string, message: string) => void;
}

/** Serves the bundle in `bundleDir`; resolves once workerd listens. */
export async function serveWorker(options: ServeOptions): Promise<LocalRuntime> {
  const { Miniflare } = wranglerMiniflare();
  const served = await runtimeOptions(options);
  const runtime = new Miniflare(served);
  await runtime.ready;
  servedOptions.set(runtime, served);
  return runtime;
}

type RuntimeOptions = Awaited<ReturnType<typeof runtimeOptions>>;
/** The options each runtime last started with, to serve again when a reload's do not start. */
const servedOptions = new WeakMap<LocalRuntime, RuntimeOptions>();

/**
 * Serves the bundle in `bundleDir` (a new build, maybe of another wrangler config) on a running
 * runtime: Miniflare replaces the workerd process with one of the new config, on the same address
 * (the port it listened on, even when `port` was 0) and the same state directory. Whatever the old
 * process was executing is cut off, as by a crash; resolves once the new one listens.
 * When the new Worker does not start (its modules throw at load in workerd, which a build in Node does
 * not see: random values or I/O in global scope...), serves the options it last started with again
 * (their bundle must still be in its folder: bundle a new build beside it) and rejects with workerd's
 * error.
 */
export async function reloadWorker(runtime: LocalRuntime, options: ServeOptions): Promise<void> {
  const next = await runtimeOptions(options);
  try {
    await runtime.setOptions(next);
    await runtime.ready;
    servedOptions.set(runtime, next);
  } catch (error) {
    const message = String((error as Error).message ?? error);
    const previous = servedOptions.get(runtime);
    try {
      if (!previous) throw new Error("no earlier options to serve");
      await runtime.setOptions(previous);
      await runtime.ready;
    } catch (restoring) {
      throw new WorkerDownError(
        `The new build's Worker did not start in workerd, nor did the last good one again: ${message}\nThen: ${String((restoring as Error).message ?? restoring)}`,
      );
    }
    throw new WorkerStartError(`The new build's Worker did not start in workerd: ${message}`);
  }
}

/** A new build that workerd refused to start (the project's code at fault); the last good one serves again. */
export class WorkerStartError extends BuildError {}

/** Neither the new build nor the last good one started again: nothing serves until a good reload. */
export class WorkerDownError extends Error {}

async function runtimeOptions(options: ServeOptions) {
  const { convertV4MiniflareOptions, Log, LogLevel } = wranglerMiniflare();
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(options.wranglerConfig ?? WRANGLER_CONFIG);
  const assets = workerOptions.assets as { directory: string; binding: string } | undefined;
  const wasm = readdirSync(options.bundleDir).filter((file) => file.endsWith(".wasm"));
  const log =
    options.log ??
    ((level: string, message: string) =>
      (level === "error" || level === "warn" ? console.error : console.log)(message));
  return convertV4MiniflareOptions({
    host: options.ip,
    port: options.port,
    inspectorPort: options.inspectorPort,
    // Request.cf: Miniflare's built-in fallback object, never fetched (the machines are offline).
    cf: false,
    // Same layout as wrangler dev's --persist-to, so `wrangler d1 migrations apply --local` targets it.
    resourcePersistencePath: join(stateDirectory(options.persistTo), "v3"),
    // /cdn-cgi/local/scheduled (LOCAL_SCHEDULED_PATH), which the minute tick calls.
    unsafeTriggerHandlers: true,
    logRequests: false,
    log: new Log(LogLevel.WARN),
    handleStructuredLogs: ({ level, message }: { level: string; message: string }) => log(level, message),
    workers: [
      {
        ...workerOptions,
        name: "agent-platform",
        bindings: {
          ...(workerOptions.bindings as Record<string, unknown> | undefined),
          // The limits guard (src/limits-guard/) is on locally: what Cloudflare refuses fails here too.
          // `--var LIMITS_GUARD:free` holds the Worker to the Free plan, `off` turns it off.
          LIMITS_GUARD: LOCAL_LIMITS_GUARD,
          ...options.vars,
        },
        // The Worker answers every request (run_worker_first); its ASSETS binding is the assets Worker
        // below. Declared on this Worker, Miniflare would route every request through its asset
        // router first, which costs as much CPU as a small request itself.
        assets: undefined,
        serviceBindings: {
          ...(workerOptions.serviceBindings as Record<string, unknown> | undefined),
          ...(assets ? { [assets.binding]: ASSETS_WORKER } : {}),
        },
        // The bundle is already resolved: its modules are listed, not matched by rules.
        modulesRules: undefined,
        modulesRoot: options.bundleDir,
        modules: [
          { type: "ESModule", path: join(options.bundleDir, "index.js") },
          ...wasm.map((file) => ({ type: "CompiledWasm" as const, path: join(options.bundleDir, file) })),
        ],
      },
      ...(assets
        ? [
            {
              name: ASSETS_WORKER,
              compatibilityDate: workerOptions.compatibilityDate,
              modules: [{ type: "ESModule" as const, path: "assets.js", contents: ASSETS_SCRIPT }],
              assets: { ...assets, binding: "ASSETS" },
            },
          ]
        : []),
    ],
  } as Parameters<typeof convertV4MiniflareOptions>[0]);
}

/** A platform server started by `startLocalServer`. */
export interface LocalServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Set by a test that starts `npm start` and fires the scheduled handler itself when it wants a tick
 * (`/cdn-cgi/local/scheduled`): the server has no minute tick of its own, so no tick comes mid-test.
 */
export const NO_MINUTE_TICK = "AGENT_PLATFORM_NO_MINUTE_TICK";

/** Set by a program that starts `npm start` (startLocalServer): the server ends when its stdin closes. */
export const EXIT_WITH_PARENT = "AGENT_PLATFORM_EXIT_WITH_PARENT";

/** The line `npm start` prints once workerd listens; with `--port 0` it is where the port is told. */
const LISTENING = /Agent Platform listening on (http:\/\/\S+)/;

/**
 * `npm start` (scripts/start.ts: the deployment build, migrations, bundle, Miniflare and the minute
 * tick) with its own state directory and the given vars, as a detached process group; on a port the
 * system picks (`--port 0`) unless `port` is given. Resolves once /ok answers at the URL it prints.
 */
export async function startLocalServer(options: {
  persistTo: string;
  /** Another deployment's langgraph.json (`--config`), built into a folder of its own. */
  config?: string;
  vars?: Record<string, string>;
  env?: Record<string, string>;
  port?: number;
  /** Exposes workerd's V8 inspector on this port (see `npm start --inspector-port`). */
  inspectorPort?: number;
  log?: (chunk: string) => void;
}): Promise<LocalServer> {
  const args = [
    join(PROJECT_ROOT, "scripts/start.ts"),
    "--port",
    String(options.port ?? 0),
    "--persist-to",
    options.persistTo,
  ];
  if (options.config) args.push("--config", options.config);
  if (options.inspectorPort) args.push("--inspector-port", String(options.inspectorPort));
  for (const [key, value] of Object.entries(options.vars ?? {})) args.push("--var", `${key}:${value}`);
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    // Its stdin stays open while this process lives: the server ends when it closes (EXIT_WITH_PARENT),
    // so a test run that is killed leaves no server behind.
    env: offlineEnv({ ...options.env, [EXIT_WITH_PARENT]: "1" }),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const log = options.log ?? (() => {});
  const listening = listeningUrl(child);
  child.stdout?.on("data", (chunk) => log(String(chunk)));
  child.stderr?.on("data", (chunk) => log(String(chunk)));
  const stop = () => stopProcessGroup(child);
  try {
    const url = await listening;
    await waitForOk(`${url}/ok`, 30_000, child);
    return { url, child, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The URL a starting server (`npm start`, `agent-platform dev`) prints once workerd listens, which is
 * how a child started with `--port 0` tells its port (`line`'s first group: another server's own line,
 * such as wrangler dev's "Ready on"). Rejects if it exits or stays silent for `timeoutMs`.
 */
export function listeningUrl(child: ChildProcess, timeoutMs = 120_000, line: RegExp = LISTENING): Promise<string> {
  let printed = "";
  const said = new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      printed = (printed + String(chunk)).slice(-4_096);
      const url = line.exec(printed)?.[1];
      if (url) resolve(url);
    });
    child.once("exit", (code, signal) => reject(new Error(`the server exited (${signal ?? `code ${code}`})`)));
  });
  return withDeadline(said, timeoutMs, "the server did not say where it listens");
}

function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
