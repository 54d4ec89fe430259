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

/** `wrangler dev` on a free port with fresh local state and the documented development key. */
export async function startTestServer(): Promise<LocalServer & { apiKey: string }> {
  const persistTo = scratchDir("e2e-state");
  let output = "";
  try {
    const server = await startLocalServer({
      persistTo,
      vars: { BOOTSTRAP_API_KEY: DEV_API_KEY },
      log: (chunk) => (output = (output + chunk).slice(-20_000)),
    });
    return {
      ...server,
      apiKey: DEV_API_KEY,
      stop: async () => {
        await server.stop();
        rmSync(persistTo, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(persistTo, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n--- wrangler output ---\n${output}`);
  }
}
