/**
 * Runs wrangler on this Node (22: the checkout's `node` devDependency, or the Node bin/agent-platform.mjs
 * picked for the installed package), always with the offline settings.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { PROJECT_ROOT } from "./deployment.ts";

/** wrangler where Node resolves it from the platform (hoisted into the project's node_modules when installed). */
const WRANGLER_BIN = join(
  dirname(createRequire(join(PROJECT_ROOT, "package.json")).resolve("wrangler/package.json")),
  "bin/wrangler.js",
);
/** This repository's own Worker config; a deployment built by the CLI has a generated one. */
export const WRANGLER_CONFIG = join(PROJECT_ROOT, "wrangler.toml");

/** The development API key `npm start` writes to .dev.vars when none is set (documented in the README). */
export const DEV_API_KEY = "lgp_dev_local_only_change_me";

/** Keeps wrangler off the network (metrics, error reports, Request.cf) and its logs in the project. */
export function offlineEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CI: process.env.CI ?? "true",
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_SEND_ERROR_REPORTS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    // The CLI sets it to the project's .agent-platform/logs (the platform's folder may be read-only).
    WRANGLER_LOG_PATH: process.env.WRANGLER_LOG_PATH ?? join(PROJECT_ROOT, ".wrangler/logs"),
    ...extra,
  };
}

export function spawnWrangler(args: string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [WRANGLER_BIN, ...args], {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
    ...options,
    env: options.env ?? offlineEnv(),
  });
}

/** Runs a wrangler command to completion; rejects with its output when it fails. */
export function runWrangler(args: string[], env: NodeJS.ProcessEnv = offlineEnv()): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawnWrangler(args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`wrangler ${args.join(" ")} exited with ${code}:\n${output}`)),
    );
  });
}

/** Applies the D1 migrations to the local state (optionally a separate --persist-to directory). */
export function applyLocalMigrations(
  persistTo?: string,
  env?: NodeJS.ProcessEnv,
  wranglerConfig: string = WRANGLER_CONFIG,
): Promise<string> {
  const args = ["d1", "migrations", "apply", "DB", "--local", "--config", wranglerConfig];
  if (persistTo) args.push("--persist-to", persistTo);
  return runWrangler(args, env);
}

/** A TCP port nothing listens on right now (some well-known ports are taken on these machines). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Polls `url` until it answers 200 or the deadline passes. */
export async function waitForOk(url: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/**
 * Ends a detached child and its process group (wrangler and its workerd children): SIGTERM, then
 * SIGKILL after `graceMs`. Resolves when the child has exited.
 */
export function stopProcessGroup(child: ChildProcess, graceMs = 5_000): Promise<void> {
  return new Promise<void>((resolve) => {
    // A child ended by a signal has a signalCode and a null exitCode.
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      child.kill("SIGTERM");
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, graceMs).unref();
  });
}
