import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { REGISTRY_IMPORT, renderWranglerConfig } from "../../scripts/lib/project.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { createSdkLogger } from "../../src/observability/sdk-logger.ts";

// The agent-platform command's generated wrangler config, and the SDK logger graphs get.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function projectConfig(config: unknown): { dir: string; file: string } {
  const dir = scratchDir("project");
  dirs.push(dir);
  const file = join(dir, "wrangler.json");
  writeFileSync(file, JSON.stringify(config));
  return { dir, file };
}

type Entry = Record<string, unknown>;

describe("a project's wrangler config", () => {
  it("aliases the registry import the Worker really uses", () => {
    expect(readFileSync(join(PROJECT_ROOT, "src/deployment/index.ts"), "utf8")).toContain(`from "${REGISTRY_IMPORT}"`);
  });

  it("is the platform's, with the project's registry, assets and migrations by absolute path", async () => {
    const config = await renderWranglerConfig("/builds/p");
    expect(config.main).toBe(join(PROJECT_ROOT, "src/index.ts"));
    expect(config.alias).toEqual({ [REGISTRY_IMPORT]: "/builds/p/registry.generated.ts" });
    expect((config.assets as Entry).directory).toBe("/builds/p/assets");
    expect(config.build).toBeUndefined();
    expect((config.d1_databases as Entry[])[0].migrations_dir).toBe(join(PROJECT_ROOT, "migrations"));
  });

  it("merges the project's bindings by name and keeps the platform's", async () => {
    const { dir, file } = projectConfig({
      name: "my-agent",
      d1_databases: [{ binding: "DB", database_name: "mine", database_id: "1234", migrations_dir: "elsewhere" }],
      r2_buckets: [{ binding: "FILES", bucket_name: "my-files" }],
      queues: { producers: [{ binding: "MORE", queue: "more" }] },
      compatibility_flags: ["nodejs_compat", "some_flag"],
      vars: { MODEL_PRICES: '{"m":{}}', MINE: "1" },
    });
    const config = await renderWranglerConfig(dir, file);
    expect(config.name).toBe("my-agent");
    expect(config.d1_databases).toEqual([
      expect.objectContaining({ binding: "DB", database_id: "1234", migrations_dir: join(PROJECT_ROOT, "migrations") }),
    ]);
    expect((config.r2_buckets as Entry[]).map((b) => b.binding)).toEqual(["EXPORT_BUCKET", "FILES"]);
    const queues = config.queues as { producers: Entry[]; consumers: Entry[] };
    expect(queues.producers.map((q) => q.binding)).toEqual(["QUEUE", "MORE"]);
    expect(queues.consumers).toHaveLength(1);
    expect(config.compatibility_flags).toEqual(["nodejs_compat", "some_flag"]);
    expect(config.vars).toMatchObject({ MODEL_PRICES: '{"m":{}}', MINE: "1", AGENT_TRACING: "on" });
  });

  it("moves the platform's queue consumer to the queue the project names for QUEUE", async () => {
    const { dir, file } = projectConfig({ queues: { producers: [{ binding: "QUEUE", queue: "my-agent-work" }] } });
    const queues = (await renderWranglerConfig(dir, file)).queues as { producers: Entry[]; consumers: Entry[] };
    expect(queues.producers).toEqual([{ binding: "QUEUE", queue: "my-agent-work" }]);
    // Consumed with the platform's settings, and the platform's default queue is no longer consumed.
    expect(queues.consumers).toEqual([expect.objectContaining({ queue: "my-agent-work", max_batch_size: 1 })]);
  });

  it("refuses keys that define the platform's Worker, naming them", async () => {
    const { dir, file } = projectConfig({ main: "./src/worker.ts" });
    await expect(renderWranglerConfig(dir, file)).rejects.toThrow(`sets "main", which the platform's Worker defines`);
  });
});

describe("the SDK logger", () => {
  it("never throws, even for metadata JSON cannot carry", () => {
    const lines: string[] = [];
    const quiet = (line: string) => void lines.push(line);
    vi.spyOn(console, "log").mockImplementation(quiet);
    vi.spyOn(console, "warn").mockImplementation(quiet);
    vi.spyOn(console, "error").mockImplementation(quiet);
    const logger = createSdkLogger();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(logger.info("cyclic", circular)).toBe(logger);
    expect(logger.warn("big", { n: 1n })).toBe(logger);
    expect(logger.error(new Error("boom"))).toBe(logger);
    vi.restoreAllMocks();
    expect(lines.map((line) => JSON.parse(line).message)).toEqual(["cyclic", "big", "boom"]);
    expect(JSON.parse(lines[0])).toMatchObject({ unserializable_meta: true, sdk_level: "info" });
  });
});
