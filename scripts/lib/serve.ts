/**
 * Serving a built deployment on the local Workers runtime, shared by `npm start` and `agent-platform
 * dev`: applies the D1 migrations, bundles the Worker as `wrangler deploy` does, serves it with Miniflare
 * (local-runtime.ts) and fires the scheduled handler at every minute boundary as the Cron Trigger does.
 * Ends the process on SIGINT/SIGTERM after disposing of the runtime.
 */
import { join } from "node:path";
import {
  applyMigrations,
  bundleWorker,
  EXIT_WITH_PARENT,
  LOCAL_LIMITS_GUARD,
  type LocalRuntime,
  NO_MINUTE_TICK,
  reloadWorker,
  type ServeOptions,
  serveWorker,
  stateDirectory,
} from "./local-runtime.ts";
import { configuredCrons, localBaseUrl, type MinuteTicker, startMinuteTicker } from "./minute-tick.ts";
import { offlineEnv } from "./wrangler.ts";

export interface LocalServeOptions {
  wranglerConfig: string;
  ip: string;
  port: number;
  persistTo?: string;
  vars?: Record<string, string>;
  inspectorPort?: number;
  /** Environment for wrangler (the bundle step). */
  env?: Record<string, string>;
}

/** A second SIGINT/SIGTERM sooner than this after the first is the same stop request, not an impatient one. */
const REPEATED_SIGNAL_MS = 1_000;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** A server started by `serveLocally`. */
export interface LocalServing {
  baseUrl: string;
  /**
   * Bundles the Worker of `wranglerConfig` (a new build) and serves it in place of the running one, on
   * the same address and state; rejects, still serving the last bundle, when the bundle fails or workerd
   * does not start the new Worker (reloadWorker serves the last one again). A run the
   * old Worker was executing is cut off as by a restart (see reloadWorker). Calls must not overlap.
   */
  reload(wranglerConfig: string): Promise<void>;
}

export async function serveLocally(options: LocalServeOptions): Promise<LocalServing> {
  const env = offlineEnv(options.env);
  const bundleDir = join(stateDirectory(options.persistTo), "bundle");
  try {
    const applied = await applyMigrations(options.wranglerConfig, options.persistTo);
    if (applied.length) console.log(`Applied ${applied.length} D1 migration(s): ${applied.join(", ")}`);
    await bundleWorker(bundleDir, env, options.wranglerConfig);
  } catch (error) {
    fail(`Preparing the Worker failed: ${(error as Error).message}`);
  }

  let runtime: LocalRuntime | undefined;
  let ticker: MinuteTicker | undefined;
  let stopping = false;
  // Installed before workerd starts: a signal during startup ends this process (workerd, in its process
  // group, gets the terminal's signal too); once up, workerd is disposed of first.
  let stoppedAt = 0;
  const shutDown = () => {
    // One Ctrl-C can arrive twice: from the terminal (to the whole process group) and forwarded by
    // bin/agent-platform.mjs. Only a signal well after the first one forces the exit.
    if (stopping && Date.now() - stoppedAt < REPEATED_SIGNAL_MS) return;
    if (stopping || !runtime) process.exit(stopping ? 1 : 0);
    stopping = true;
    stoppedAt = Date.now();
    ticker?.stop();
    runtime.dispose().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, shutDown);
  // A server started by a program (the tests) ends with it, however that program ends: the program
  // holds this process's stdin open and the system closes it when the program exits.
  if (process.env[EXIT_WITH_PARENT] === "1") {
    process.stdin.on("end", shutDown);
    process.stdin.resume();
  }

  const serveOptions: ServeOptions = {
    bundleDir,
    wranglerConfig: options.wranglerConfig,
    ip: options.ip,
    port: options.port,
    persistTo: options.persistTo,
    vars: options.vars,
    inspectorPort: options.inspectorPort,
  };
  try {
    runtime = await serveWorker(serveOptions);
  } catch (error) {
    const message = String((error as Error).message ?? error);
    if ((error as { code?: string }).code === "ERR_ADDRESS_IN_USE" || message.includes("Address already in use")) {
      fail(`Port ${options.port} on ${options.ip} is already in use: pass --port with another one`);
    }
    fail(`The local Workers runtime did not start: ${(error as Error).stack ?? error}`);
  }
  // Miniflare's exit hook ends the process on SIGINT/SIGTERM at once (code 130/143), while shutDown
  // still awaits the runtime's disposal: shutDown alone answers them (it disposes of the same runtime).
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    for (const listener of process.listeners(signal)) if (listener !== shutDown) process.off(signal, listener);
  }
  // With --port 0 the system picks the port; the runtime knows which.
  const baseUrl = options.port === 0 ? (await runtime.ready).origin : localBaseUrl(options.ip, options.port);
  console.log(`Agent Platform listening on ${baseUrl} (state ${stateDirectory(options.persistTo)})`);
  console.log(limitsGuardNotice(options.vars?.LIMITS_GUARD ?? LOCAL_LIMITS_GUARD));
  if (options.inspectorPort) {
    console.log(`V8 inspector: ws://127.0.0.1:${options.inspectorPort}/core:user:agent-platform`);
  }

  /** (Re)starts the minute tick for the crons of `wranglerConfig`, saying so when they change. */
  let tickedCrons = "";
  const tick = async (wranglerConfig: string) => {
    try {
      const crons = await configuredCrons(wranglerConfig);
      if (crons.join("\n") === tickedCrons) return;
      tickedCrons = crons.join("\n");
      ticker?.stop();
      ticker = undefined;
      if (crons.length && process.env[NO_MINUTE_TICK] === "1") {
        console.log("No minute tick: whoever started this server fires the scheduled handler itself");
      } else if (crons.length) {
        ticker = startMinuteTicker({ baseUrl, crons });
        console.log(
          `Firing the scheduled handler at every minute boundary for crons ${crons.map((c) => `"${c}"`).join(", ")}, as the deployed Cron Trigger does`,
        );
      }
    } catch (error) {
      console.error(`Cannot read the crons of ${wranglerConfig}, so no minute tick: ${(error as Error).message}`);
    }
  };
  await tick(options.wranglerConfig);

  // A new build is bundled into the folder the served one is not in, so the served bundle stays whole
  // until workerd runs the new one, and serves again if the new one fails to start.
  const bundleDirs = [bundleDir, `${bundleDir}-next`];
  let served: ServeOptions = serveOptions;
  const reload = async (wranglerConfig: string) => {
    if (stopping || !runtime) throw new Error("the server is stopping");
    const next: ServeOptions = {
      ...served,
      wranglerConfig,
      bundleDir: bundleDirs.find((dir) => dir !== served.bundleDir) ?? bundleDir,
    };
    await bundleWorker(next.bundleDir, env, wranglerConfig);
    await reloadWorker(runtime, next);
    served = next;
    await tick(wranglerConfig);
  };
  return { baseUrl, reload };
}

/** The startup line saying which Cloudflare limits the local runtime enforces (src/limits-guard/). */
export function limitsGuardNotice(mode: string): string {
  return mode === "off"
    ? "Limits guard off: Cloudflare's row, function-argument, subrequest and D1-query limits are not enforced"
    : `Limits guard ${mode}: requests fail past the Workers ${mode === "free" ? "Free" : "Paid"} plan's limits (2 MB per D1/Durable Object row, 32 SQL function arguments, ${mode === "free" ? 50 : 1000} subrequests and D1 queries per invocation), as deployed`;
}

/** `--var NAME:value` flags → vars; throws on a malformed one. */
export function parseVars(pairs: string[] = []): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf(":");
    if (at <= 0) throw new Error(`--var takes NAME:value, got ${pair}`);
    vars[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return vars;
}

/** A TCP port from a flag value; throws when it is not one. */
export function parsePort(value: string, flag: string, allowZero = true): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < (allowZero ? 0 : 1) || port > 65_535) {
    throw new Error(`${flag} must be a TCP port, got ${value}`);
  }
  return port;
}
