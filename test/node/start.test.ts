import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { GENERATED_REGISTRY } from "../../scripts/lib/deployment.ts";
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
