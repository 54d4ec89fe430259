import { rmSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { type LocalServer, startLocalServer } from "../../scripts/lib/local-runtime.ts";
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
 * `npm start` (scripts/start.ts) on a free port with the documented development key, on fresh local state — or on
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
      vars: { BOOTSTRAP_API_KEY: DEV_API_KEY, EXPORT_ENCRYPTION_KEY: "e2e-export-encryption-key-0123456789" },
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

/**
 * `npm start -- --config <configPath>` on a free port with fresh state: another deployment, served
 * the way a user would. `stop()` ends it and rebuilds the root deployment for whatever runs next.
 */
export async function startDeployment(configPath: string): Promise<{ url: string; stop(): Promise<void> }> {
  const { spawn } = await import("node:child_process");
  const { freePort, stopProcessGroup, waitForOk } = await import("../../scripts/lib/wrangler.ts");
  const { buildDeployment } = await import("../../scripts/lib/deployment.ts");
  const state = scratchDir("deployment-state");
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["scripts/start.ts", "--config", configPath, "--port", String(port), "--persist-to", state],
    {
      cwd: PROJECT_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, CI: "true" },
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr?.on("data", (chunk) => (output = (output + chunk).slice(-20_000)));
  const stop = async () => {
    await stopProcessGroup(child, 10_000);
    rmSync(state, { recursive: true, force: true });
    await buildDeployment(join(PROJECT_ROOT, "langgraph.json"));
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForOk(`${url}/ok`, 90_000, child);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output.slice(-5000)}`);
  }
  return { url, stop };
}
