import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { DEV_API_KEY, startLocalServer, type LocalServer } from "../../scripts/lib/wrangler.ts";

/** A scratch directory inside the project (so packages resolve from node_modules), removed by the caller. */
export function scratchDir(prefix: string): string {
  const root = join(PROJECT_ROOT, ".tmp");
  mkdirSync(root, { recursive: true });
  return mkdtempSync(join(root, `${prefix}-`));
}

export interface TestServer extends LocalServer {
  apiKey: string;
  /** The wrangler state directory (`--persist-to`). */
  persistTo: string;
  /** The last 20 kB of wrangler's output. */
  output(): string;
  /** SIGKILLs wrangler and workerd (the whole process group), as a crash would; keeps the state. */
  kill(): Promise<void>;
}

/**
 * `wrangler dev` on a free port with the documented development key, on fresh local state — or on
 * `persistTo` (e.g. a killed server's, to restart it). `stop()` removes the state unless `keep`.
 */
export async function startTestServer(options: { persistTo?: string; keep?: boolean } = {}): Promise<TestServer> {
  const persistTo = options.persistTo ?? scratchDir("e2e-state");
  const cleanup = () => {
    if (!options.keep) rmSync(persistTo, { recursive: true, force: true });
  };
  let output = "";
  try {
    const server = await startLocalServer({
      persistTo,
      vars: { BOOTSTRAP_API_KEY: DEV_API_KEY },
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
    throw new Error(`${(error as Error).message}\n--- wrangler output ---\n${output}`);
  }
}
