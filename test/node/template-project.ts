// A project written by `agent-platform new` from one of the templates, outside the repository, with
// this repository's packages linked in as `npm install` would put them, and served by
// `agent-platform dev` from its own folder: what a user gets, for the end-to-end tests of the templates.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { listeningUrl } from "../../scripts/lib/local-runtime.ts";
import { projectBuildDir } from "../../scripts/lib/project.ts";
import { offlineEnv, stopProcessGroup, waitForOk } from "../../scripts/lib/wrangler.ts";

const BIN = join(PROJECT_ROOT, "bin/agent-platform.mjs");
const NODE = join(PROJECT_ROOT, "node_modules/node/bin/node");

export interface ServedTemplate {
  /** The project's folder. */
  dir: string;
  url: string;
  /** The development API key `dev` wrote to the project's .dev.vars. */
  apiKey: string;
  /** What the server printed. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * `agent-platform new <tmp>/<name> --template <template>`, the settings `env` written into the
 * project's .env (as a user fills it in), then `agent-platform dev --port 0` in the project.
 */
export async function serveTemplate(
  template: string,
  name: string,
  env: Record<string, string>,
): Promise<ServedTemplate> {
  const root = mkdtempSync(join(tmpdir(), `template-${template}-`));
  const dir = join(root, name);
  let child: ChildProcess | undefined;
  let log = "";
  const stop = async () => {
    if (child) await stopProcessGroup(child);
    rmSync(projectBuildDir(join(dir, "langgraph.json")), { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const created = spawnSync(NODE, [BIN, "new", name, "--template", template], {
      cwd: root,
      encoding: "utf8",
      env: offlineEnv(),
    });
    if (created.status !== 0) throw new Error(`agent-platform new failed: ${created.stderr}`);
    symlinkSync(join(PROJECT_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    let dotEnv = readFileSync(join(dir, ".env"), "utf8");
    for (const [key, value] of Object.entries(env)) {
      const line = new RegExp(`^${key}=.*$`, "m");
      dotEnv = line.test(dotEnv) ? dotEnv.replace(line, `${key}=${value}`) : `${dotEnv}${key}=${value}\n`;
    }
    writeFileSync(join(dir, ".env"), dotEnv);

    const server = spawn(NODE, [BIN, "dev", "--port", "0"], {
      cwd: dir,
      env: offlineEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    child = server;
    server.stdout?.on("data", (chunk) => (log += chunk));
    server.stderr?.on("data", (chunk) => (log += chunk));
    const url = await listeningUrl(server, 150_000);
    await waitForOk(`${url}/ok`, 30_000, server);
    const apiKey = /BOOTSTRAP_API_KEY=(.+)/.exec(readFileSync(join(dir, ".dev.vars"), "utf8"))?.[1] ?? "";
    return { dir, url, apiKey, log: () => log, stop };
  } catch (error) {
    await stop();
    throw new Error(`agent-platform dev did not serve the ${template} template: ${(error as Error).message}\n${log}`);
  }
}
