import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GENERATED_REGISTRY, PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { until } from "../fixtures/until.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer | undefined;
afterAll(async () => {
  await server?.stop();
});

describe("npm start -- --config <other langgraph.json>", () => {
  it("serves that deployment's graphs, with paths resolved relative to its file, and leaves this repository's build alone", async () => {
    const registry = readFileSync(GENERATED_REGISTRY, "utf8");
    server = await startTestServer({ config: "examples/minimal/langgraph.json" });
    const info = (await (await fetch(`${server.url}/info`)).json()) as {
      metadata: { graphs: string[]; config_path: string };
    };
    expect(info.metadata.graphs).toEqual(["counter", "greeter"]);
    expect(info.metadata.config_path).toBe("examples/minimal/langgraph.json");
    // Built into a folder of its own: a server of the root deployment started now would serve the root's graphs.
    expect(readFileSync(GENERATED_REGISTRY, "utf8")).toBe(registry);
  });
});

describe("a server a program starts", () => {
  it("ends when that program ends without stopping it, so a killed test run leaves no server behind", async () => {
    const dir = scratchDir("orphan");
    try {
      const launcher = join(dir, "launch.ts");
      writeFileSync(
        launcher,
        `import { startLocalServer } from ${JSON.stringify(join(PROJECT_ROOT, "scripts/lib/local-runtime.ts"))};
const server = await startLocalServer({ persistTo: ${JSON.stringify(join(dir, "state"))} });
console.log(JSON.stringify({ pid: server.child.pid, url: server.url }));
process.exit(0);
`,
      );
      const launched = spawnSync(process.execPath, [launcher], { encoding: "utf8", timeout: 120_000 });
      const { pid, url } = JSON.parse(launched.stdout.trim().split("\n").at(-1)!) as { pid: number; url: string };
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await until(
        async () => alive(),
        (running) => !running,
        20_000,
        100,
      );
      await expect(fetch(`${url}/ok`)).rejects.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
