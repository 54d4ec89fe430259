// An `agent-platform dev` server started as a user starts it, for the tests of its live reload.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { EXIT_WITH_PARENT, listeningUrl } from "../../scripts/lib/local-runtime.ts";
import { offlineEnv, stopProcessGroup, waitForOk } from "../../scripts/lib/wrangler.ts";
import { until } from "../fixtures/until.ts";

const BIN = join(PROJECT_ROOT, "bin/agent-platform.mjs");
const NODE = join(PROJECT_ROOT, "node_modules/node/bin/node");

/** An `agent-platform dev` process, its output so far, and a way to wait for what it prints next. */
export interface Dev {
  child: ChildProcess;
  url: string;
  apiKey: string;
  client: Client;
  output(): string;
  /** Waits for `line` in what the server prints after `mark` (an offset into its output). */
  printed(line: RegExp, mark: number, timeoutMs?: number): Promise<string>;
}

/** `agent-platform dev` (bin/agent-platform.mjs) in `project`, on a port the system picks; resolves once /ok answers. */
export async function startDevServer(project: string, args: string[] = []): Promise<Dev> {
  const child = spawn(NODE, [BIN, "dev", "--port", "0", ...args], {
    cwd: project,
    // The server ends when this process does (its stdin closes): a killed test run leaves none behind.
    env: offlineEnv({ [EXIT_WITH_PARENT]: "1" }),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  const dev: Dev = {
    child,
    url: "",
    apiKey: "",
    client: undefined as unknown as Client,
    output: () => log,
    async printed(line, mark, timeoutMs = 60_000) {
      const seen = await until(
        async () => {
          if (child.exitCode !== null) throw new Error(`agent-platform dev exited:\n${log}`);
          return log.slice(mark);
        },
        (text) => line.test(text),
        timeoutMs,
        50,
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n--- agent-platform dev printed ---\n${log}`);
      });
      return line.exec(seen)?.[0] ?? "";
    },
  };
  try {
    dev.url = await listeningUrl(child, 120_000);
    await waitForOk(`${dev.url}/ok`, 30_000, child);
  } catch (error) {
    await stopProcessGroup(child);
    throw new Error(`agent-platform dev did not start: ${(error as Error).message}\n${log}`);
  }
  dev.apiKey = /BOOTSTRAP_API_KEY=(.+)/.exec(readFileSync(join(project, ".dev.vars"), "utf8"))?.[1] ?? "";
  dev.client = new Client({ apiUrl: dev.url, apiKey: dev.apiKey });
  return dev;
}

export async function stopDev(dev: Dev): Promise<void> {
  await stopProcessGroup(dev.child);
}

/**
 * The inodes of the folders a process watches (its inotify watches, from /proc): what tells a server
 * that watches the project from one that does not, without waiting to see whether it reloads.
 */
export function watchedInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = "";
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== "anon_inode:inotify") continue;
    for (const match of readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8").matchAll(/\bino:([0-9a-f]+)/g)) {
      inodes.add(Number.parseInt(match[1], 16));
    }
  }
  return inodes;
}

/** The CLI's own process (bin/agent-platform.mjs runs scripts/cli.ts as its child). */
export function cliPid(dev: Dev): number {
  const pid = dev.child.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).map(Number);
  expect(children).toHaveLength(1);
  return children[0];
}
