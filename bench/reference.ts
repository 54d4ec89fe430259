/**
 * The reference server for --compare: the official LangGraph.js dev server (in-memory, graphs `echo`
 * and `steps`), started and stopped through the anchor's start.sh, which writes its PID (the root of a
 * process group) to <ANCHOR_DIR>/server.pid.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../scripts/lib/deployment.ts";

const run = promisify(execFile);

/** start.sh: BENCH_ANCHOR (its path), else ../shared/anchor/start.sh beside the checkout or its parent. */
function startScript(): string {
  const candidates = [
    process.env.BENCH_ANCHOR,
    resolve(PROJECT_ROOT, "../shared/anchor/start.sh"),
    resolve(PROJECT_ROOT, "../../shared/anchor/start.sh"),
  ].filter((path): path is string => Boolean(path));
  const found = candidates.find((path) => existsSync(path));
  if (!found)
    throw new Error(`the reference server's start.sh was not found (set BENCH_ANCHOR); tried ${candidates.join(", ")}`);
  return found;
}

export interface ReferenceServer {
  url: string;
  pid: number;
  /** Stops it, if this process started it (a server that was already up is left running). */
  stop(): Promise<void>;
}

/** start.sh's defaults, passed to it explicitly so a HOST or PORT in the environment cannot move it. */
const HOST = "127.0.0.1";
const PORT = "2931";
const scriptEnv = () => ({ ...process.env, HOST, PORT });

const anchorDir = () => process.env.ANCHOR_DIR ?? join(process.env.TMPDIR ?? tmpdir(), "lg-anchor");

function readPid(): number | undefined {
  try {
    const pid = Number(readFileSync(join(anchorDir(), "server.pid"), "utf8").trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function isUp(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

/** Reuses a reference server start.sh already started, or starts one (installing it on first use). */
export async function startReference(log: (message: string) => void): Promise<ReferenceServer> {
  const url = `http://${HOST}:${PORT}`;
  const running = readPid();
  if (running && (await isUp(url))) {
    log(`Reference server already up at ${url} (pid ${running}); reusing it and leaving it running`);
    return { url, pid: running, stop: async () => {} };
  }
  const script = startScript();
  log(`Starting the reference server (${script}) ...`);
  const { stdout, stderr } = await run("bash", [script], { env: scriptEnv(), maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: Error & { stderr?: string }) => {
      throw new Error(`the reference server did not start: ${error.message}\n${error.stderr ?? ""}`);
    },
  );
  const pid = readPid();
  if (!pid) throw new Error(`the reference server wrote no live PID\n${stdout}${stderr}`);
  log(stdout.trim());
  return {
    url,
    pid,
    stop: async () => {
      await run("bash", [script, "--stop"], { env: scriptEnv() }).catch(() => {});
    },
  };
}
