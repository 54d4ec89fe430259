import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildDeployment, PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { freePort, waitForOk } from "../../scripts/lib/wrangler.ts";

let child: ChildProcess | undefined;
const state = scratchDir("start-state");

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    process.kill(-child.pid!, "SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  rmSync(state, { recursive: true, force: true });
  // Put the root deployment's registry back for whatever runs next.
  await buildDeployment(join(PROJECT_ROOT, "langgraph.json"));
});

describe("npm start -- --config <other langgraph.json>", () => {
  it("serves that deployment's graphs, with paths resolved relative to its file", async () => {
    const port = await freePort();
    child = spawn(
      process.execPath,
      [
        "scripts/start.ts",
        "--config",
        "examples/minimal/langgraph.json",
        "--port",
        String(port),
        "--persist-to",
        state,
      ],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, CI: "true" } },
    );
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(`${url}/ok`, 90_000, child).catch((error) => {
      throw new Error(`${(error as Error).message}\n${output.slice(-5000)}`);
    });
    const info = (await (await fetch(`${url}/info`)).json()) as { metadata: { graphs: string[]; config_path: string } };
    expect(info.metadata.graphs).toEqual(["counter", "greeter"]);
    expect(info.metadata.config_path).toBe("examples/minimal/langgraph.json");
  });
});
