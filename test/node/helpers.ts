import { rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { type LocalServer, NO_MINUTE_TICK, startLocalServer } from "../../scripts/lib/local-runtime.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { DEV_API_KEY } from "../../scripts/lib/wrangler.ts";

export interface TestServer extends LocalServer {
  apiKey: string;
  /** The state directory (`--persist-to`). */
  persistTo: string;
  /** The last 20 kB of the server's output. */
  output(): string;
  /** SIGKILLs the server and workerd (the whole process group), as a crash would; keeps the state. */
  kill(): Promise<void>;
}

/**
 * `npm start` (scripts/start.ts) on a port the system picks, with the documented development key, on fresh
 * local state — or on `persistTo` (e.g. a killed server's, to restart it); `config` serves another
 * deployment's langgraph.json (built into a folder of its own, so servers start side by side).
 * `stop()` removes the state unless `keep`.
 */
export async function startTestServer(
  options: {
    persistTo?: string;
    keep?: boolean;
    config?: string;
    vars?: Record<string, string>;
    /** Fire the scheduled handler at every minute boundary, as `npm start` does; off by default, so a
     * test that wants a tick fires it itself and none comes mid-test. */
    minuteTick?: boolean;
  } = {},
): Promise<TestServer> {
  const persistTo = options.persistTo ?? scratchDir("e2e-state");
  const cleanup = () => {
    if (!options.keep) rmSync(persistTo, { recursive: true, force: true });
  };
  let output = "";
  try {
    const server = await startLocalServer({
      persistTo,
      config: options.config && join(PROJECT_ROOT, options.config),
      vars: {
        BOOTSTRAP_API_KEY: DEV_API_KEY,
        EXPORT_ENCRYPTION_KEY: "e2e-export-encryption-key-0123456789",
        ...options.vars,
      },
      env: options.minuteTick ? {} : { [NO_MINUTE_TICK]: "1" },
      log: (chunk) => (output = (output + chunk).slice(-20_000)),
    });
    const exited = () => server.child.exitCode !== null || server.child.signalCode !== null;
    const kill = () =>
      new Promise<void>((resolve) => {
        if (exited()) return resolve();
        server.child.once("exit", () => resolve());
        try {
          process.kill(-server.child.pid!, "SIGKILL");
        } catch {
          server.child.kill("SIGKILL");
        }
      });
    return {
      ...server,
      apiKey: DEV_API_KEY,
      persistTo,
      output: () => output,
      kill,
      stop: async () => {
        // LocalServer.stop() waits for an exit that already happened when a signal ended the process.
        if (!exited()) await server.stop();
        cleanup();
      },
    };
  } catch (error) {
    cleanup();
    throw new Error(`${(error as Error).message}\n--- server output ---\n${output}`);
  }
}

/** `npm start -- --config <configPath>` (relative to the project root) with fresh state: another deployment. */
export function startDeployment(configPath: string, options: { minuteTick?: boolean } = {}): Promise<TestServer> {
  return startTestServer({ config: configPath, ...options });
}

/** The shared server, as the global setup provides it to the test files. */
export interface SharedServerInfo {
  url: string;
  apiKey: string;
  /** What the server printed while it started. */
  startupOutput: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedServer: SharedServerInfo;
  }
}

/**
 * The server the end-to-end files share (test/node/shared-server.ts starts it once per `vitest run`).
 * Its state outlives the file: use ids of the file's own, and never assert on what the whole server holds.
 */
export function sharedServer(): SharedServerInfo {
  return inject("sharedServer");
}
