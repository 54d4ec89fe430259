import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BuildError, buildDeployment, readConfig } from "../../scripts/lib/deployment.ts";
import { buildProject, renderWranglerConfig } from "../../scripts/lib/project.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import type { DeploymentManifest } from "../../src/deployment/manifest.ts";
import {
  checkpointerConfig,
  embedFunction,
  normalizeCheckpointer,
  normalizeStore,
  storeConfig,
} from "../../src/deployment/store-config.ts";
import { embedderFor } from "../../src/store/semantic/providers.ts";
import { defaultThreadTtl, newThreadRecord } from "../../src/threads/object/record.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const GRAPH_SOURCE = `
import { Annotation, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ n: Annotation<number>() });
export const graph = new StateGraph(State).addNode("a", () => ({ n: 1 })).addEdge("__start__", "a").compile();
`;
const EMBED_SOURCE = `
export async function embed(texts: string[]): Promise<number[][]> {
  return texts.map((text) => [text.length, 1, 0]);
}
export const notAFunction = { dims: 3 };
`;

/** A deployment in a scratch directory: its langgraph.json (graph "g" plus `extra`) and files. */
function deployment(extra: Record<string, unknown>, files: Record<string, string> = {}) {
  const dir = scratchDir("store-config");
  dirs.push(dir);
  const configPath = join(dir, "langgraph.json");
  writeFileSync(configPath, JSON.stringify({ graphs: { g: "./graph.ts:graph" }, ...extra }));
  for (const [name, content] of Object.entries({ "graph.ts": GRAPH_SOURCE, ...files })) {
    writeFileSync(join(dir, name), content);
  }
  return { dir, configPath, outFile: join(dir, "registry.generated.ts") };
}

/** The settings the build would write for `extra` (validation and defaults, without bundling). */
function settings(extra: Record<string, unknown>) {
  const config = readConfig(deployment(extra).configPath);
  const store = normalizeStore(config.store, (_file, exportName, source) => ({
    kind: "function",
    module: {},
    exportName,
    source,
  }));
  return { store, checkpointer: normalizeCheckpointer(config.checkpointer) };
}

/** The exact BuildError message for an invalid config. */
function invalid(extra: Record<string, unknown>): string {
  const { configPath } = deployment(extra);
  let error: unknown;
  try {
    readConfig(configPath);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(BuildError);
  const prefix = `Deployment config ${configPath} is invalid: `;
  expect((error as Error).message.startsWith(prefix)).toBe(true);
  return (error as Error).message.slice(prefix.length);
}

async function buildError(extra: Record<string, unknown>, files: Record<string, string>): Promise<string> {
  const { configPath, outFile } = deployment(extra, files);
  const error = await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BuildError);
  return (error as Error).message;
}

describe("langgraph.json store and checkpointer: valid forms", () => {
  it("store.index with a provider's model, fields defaulting to the whole value", () => {
    expect(settings({ store: { index: { embed: "openai:text-embedding-3-small", dims: 1536 } } }).store).toEqual({
      index: {
        embed: { kind: "openai", model: "text-embedding-3-small", source: "openai:text-embedding-3-small" },
        dims: 1536,
        fields: ["$"],
      },
      ttl: null,
    });
    const cloudflare = settings({
      store: { index: { embed: "cloudflare:@cf/baai/bge-base-en-v1.5", dims: 768, fields: null } },
    }).store;
    expect(cloudflare.index).toEqual({
      embed: { kind: "cloudflare", model: "@cf/baai/bge-base-en-v1.5", source: "cloudflare:@cf/baai/bge-base-en-v1.5" },
      dims: 768,
      fields: ["$"],
    });
  });

  it("store.index.fields takes each path form of the reference", () => {
    const fields = ["$", "text", "a.b", "arr[*].f", "arr[0]", "arr[-1]", "m[0][1].x", "*", "{title, author.name}"];
    expect(settings({ store: { index: { embed: "openai:m", dims: 3, fields } } }).store.index?.fields).toEqual(fields);
  });

  it("store.ttl and checkpointer.ttl, with LangGraph's defaults and nulls", () => {
    expect(settings({ store: { ttl: {} } }).store.ttl).toEqual({
      refreshOnRead: true,
      defaultTtlMinutes: null,
      sweepIntervalMinutes: null,
    });
    expect(
      settings({ store: { ttl: { refresh_on_read: false, default_ttl: 1.5, sweep_interval_minutes: 60 } } }).store.ttl,
    ).toEqual({ refreshOnRead: false, defaultTtlMinutes: 1.5, sweepIntervalMinutes: 60 });
    expect(settings({ store: { ttl: { default_ttl: null, sweep_interval_minutes: null } } }).store.ttl).toEqual({
      refreshOnRead: true,
      defaultTtlMinutes: null,
      sweepIntervalMinutes: null,
    });
    expect(settings({ checkpointer: { ttl: {} } }).checkpointer).toEqual({
      ttl: { strategy: "delete", defaultTtlMinutes: null, sweepIntervalMinutes: 5, sweepLimit: 1000 },
    });
    expect(
      settings({
        checkpointer: {
          ttl: { strategy: "keep_latest", default_ttl: 43200, sweep_interval_minutes: 10, sweep_limit: 200 },
        },
      }).checkpointer,
    ).toEqual({
      ttl: { strategy: "keep_latest", defaultTtlMinutes: 43200, sweepIntervalMinutes: 10, sweepLimit: 200 },
    });
  });

  it("checkpointer.ttl becomes the TTL of threads created without one, counted like any thread TTL", () => {
    const threadTtl = (extra: Record<string, unknown>) => defaultThreadTtl(settings(extra).checkpointer);
    expect(threadTtl({ checkpointer: { ttl: { strategy: "keep_latest", default_ttl: 1.5 } } })).toEqual({
      ttl: 1.5,
      strategy: "keep_latest",
    });
    expect(threadTtl({ checkpointer: { ttl: { default_ttl: 60 } } })).toEqual({ ttl: 60, strategy: "delete" });
    // Without default_ttl (or without the section) threads do not expire unless a request says so.
    expect(threadTtl({ checkpointer: { ttl: { strategy: "keep_latest" } } })).toBeNull();
    expect(threadTtl({})).toBeNull();

    const at = new Date().toISOString();
    const fields = { threadId: "t", workspaceId: "w", metadata: {} };
    const fallback = { ttl: 60, strategy: "keep_latest" as const };
    expect(newThreadRecord(fields, at, fallback).ttl).toEqual(fallback);
    expect(newThreadRecord({ ...fields, ttl: { ttl: 5, strategy: "delete" } }, at, fallback).ttl).toEqual({
      ttl: 5,
      strategy: "delete",
    });
    expect(newThreadRecord(fields, at, null).ttl).toBeNull();
  });

  it("no store or checkpointer section, or null ones, means no index and no TTL; unknown keys are ignored", () => {
    expect(settings({})).toEqual({ store: { index: null, ttl: null }, checkpointer: { ttl: null } });
    expect(settings({ store: null, checkpointer: null })).toEqual({
      store: { index: null, ttl: null },
      checkpointer: { ttl: null },
    });
    expect(
      settings({
        store: { index: { embed: "openai:m", dims: 3, ann_index_config: { kind: "hnsw" } }, extra: 1 },
        checkpointer: { serde: { pickle_fallback: false }, ttl: { strategy: "delete", future: true } },
      }).store.index?.dims,
    ).toBe(3);
  });
});

describe("langgraph.json store and checkpointer: invalid forms name the key", () => {
  const index = (fields: Record<string, unknown>) => ({ store: { index: { embed: "openai:m", dims: 3, ...fields } } });

  it("store.index", () => {
    expect(invalid(index({ dims: 0 }))).toBe("store.index.dims: must be a positive integer, got 0");
    // A vector of more is over 16 KiB a row and past what a scan of the store reads in bounded memory.
    expect(invalid(index({ dims: 4097 }))).toBe("store.index.dims: must be at most 4096, got 4097");
    expect(settings({ store: { index: { embed: "openai:m", dims: 4096 } } }).store.index?.dims).toBe(4096);
    expect(invalid(index({ dims: 1.5 }))).toBe("store.index.dims: must be a positive integer, got 1.5");
    expect(invalid(index({ dims: "768" }))).toBe('store.index.dims: must be a positive integer, got "768"');
    expect(invalid({ store: { index: { embed: "openai:m" } } })).toBe(
      "store.index.dims: must be a positive integer, got nothing",
    );
    expect(invalid({ store: { index: { dims: 3 } } })).toBe(
      'store.index.embed: must be "openai:<model>", "cloudflare:<model>" or "./path/to/file.ts:export", got nothing',
    );
    expect(invalid(index({ embed: "cohere:embed-english-v3.0" }))).toBe(
      'store.index.embed: must be "openai:<model>", "cloudflare:<model>" or "./path/to/file.ts:export", got "cohere:embed-english-v3.0"',
    );
    expect(invalid(index({ embed: "openai:" }))).toBe(
      'store.index.embed: must name a model after "openai:", got "openai:"',
    );
    expect(invalid(index({ fields: "text" }))).toBe('store.index.fields: must be an array of paths, got "text"');
    expect(invalid(index({ fields: ["text", 3] }))).toBe("store.index.fields.1: must be a path string, got 3");
    // The same check as a put's own `index` (src/core/field-paths.ts), saying what is wrong.
    for (const [bad, why] of [
      ["", "is empty"],
      ["a..b", "has an empty segment"],
      [".a", "has an empty segment"],
      ["a.", "has an empty segment"],
      ["arr[x]", "has [x]: an index is [*], [n] or [-n]"],
      ["arr[", "has [: an index is [*], [n] or [-n]"],
      ["a]b", "has an unmatched ]"],
      ["{}", "has {}: a field set is {name,other.name}"],
    ]) {
      expect(invalid(index({ fields: ["ok", bad] }))).toBe(`store.index.fields.1: ${JSON.stringify(bad)} ${why}`);
    }
  });

  it("store.ttl and checkpointer.ttl", () => {
    expect(invalid({ store: { ttl: { refresh_on_read: "yes" } } })).toBe(
      'store.ttl.refresh_on_read: must be true or false, got "yes"',
    );
    expect(invalid({ store: { ttl: { default_ttl: 0 } } })).toBe(
      "store.ttl.default_ttl: must be a positive number of minutes, got 0",
    );
    expect(invalid({ store: { ttl: { sweep_interval_minutes: 1.5 } } })).toBe(
      "store.ttl.sweep_interval_minutes: must be a positive integer of minutes, got 1.5",
    );
    expect(invalid({ checkpointer: { ttl: { strategy: "archive" } } })).toBe(
      'checkpointer.ttl.strategy: must be "delete" or "keep_latest", got "archive"',
    );
    expect(invalid({ checkpointer: { ttl: { default_ttl: -1 } } })).toBe(
      "checkpointer.ttl.default_ttl: must be a positive number of minutes, got -1",
    );
    // An item's expiry past year 9999 would sort before today's (ISO text) and read as expired at once.
    expect(invalid({ store: { ttl: { default_ttl: 5e9 } } })).toBe(
      "store.ttl.default_ttl: must be at most 52560000 minutes (a century), got 5000000000",
    );
    // Longer than a request's `ttl` may be (a century), and its expiry would overflow the thread's alarm time.
    expect(invalid({ checkpointer: { ttl: { default_ttl: 1e12 } } })).toBe(
      "checkpointer.ttl.default_ttl: must be at most 52560000 minutes (a century), got 1000000000000",
    );
    expect(invalid({ checkpointer: { ttl: { sweep_interval_minutes: 0 } } })).toBe(
      "checkpointer.ttl.sweep_interval_minutes: must be a positive integer of minutes, got 0",
    );
    expect(invalid({ checkpointer: { ttl: { sweep_limit: 0.5 } } })).toBe(
      "checkpointer.ttl.sweep_limit: must be a positive integer, got 0.5",
    );
  });
});

describe("langgraph.json store.index.embed naming the deployment's own function", () => {
  it("is bundled like the graphs and reachable from the registry through the accessors", async () => {
    const { configPath, outFile } = deployment(
      {
        store: { index: { embed: "./embed.ts:embed", dims: 3, fields: ["text"] }, ttl: { default_ttl: 60 } },
        checkpointer: { ttl: { default_ttl: 1440 } },
      },
      { "embed.ts": EMBED_SOURCE },
    );
    await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false });
    const { manifest } = (await import(pathToFileURL(outFile).href)) as { manifest: DeploymentManifest };
    const store = storeConfig(manifest);
    expect(store.index?.embed).toMatchObject({ kind: "function", exportName: "embed", source: "./embed.ts:embed" });
    expect(store.index?.fields).toEqual(["text"]);
    expect(store.ttl).toEqual({ refreshOnRead: true, defaultTtlMinutes: 60, sweepIntervalMinutes: null });
    expect(checkpointerConfig(manifest).ttl).toEqual({
      strategy: "delete",
      defaultTtlMinutes: 1440,
      sweepIntervalMinutes: 5,
      sweepLimit: 1000,
    });
    const embed = embedFunction(store);
    expect(await embed?.(["hello", "hi"])).toEqual([
      [5, 1, 0],
      [2, 1, 0],
    ]);
  });

  it("names the key and path when the file is missing, the export is missing, or it is not a function", async () => {
    expect(await buildError({ store: { index: { embed: "./missing.ts:embed", dims: 3 } } }, {})).toMatch(
      /^Cannot build store\.index\.embed \(\.\/missing\.ts:embed\): file .*missing\.ts does not exist$/,
    );
    expect(
      await buildError({ store: { index: { embed: "./embed.ts:nope", dims: 3 } } }, { "embed.ts": EMBED_SOURCE }),
    ).toMatch(
      /^Cannot load store\.index\.embed \(\.\/embed\.ts:nope\): .*embed\.ts has no export named "nope" \(exports: embed, notAFunction\)$/,
    );
    expect(
      await buildError(
        { store: { index: { embed: "./embed.ts:notAFunction", dims: 3 } } },
        { "embed.ts": EMBED_SOURCE },
      ),
    ).toBe(
      'Export "notAFunction" of store.index.embed (./embed.ts:notAFunction) is not a function: export a function from texts (string[]) to vectors (number[][]), got an object (Object)',
    );
  });
});

describe("store and checkpointer accessors", () => {
  it("a registry without the sections has no index and no TTL", () => {
    expect(storeConfig({})).toEqual({ index: null, ttl: null });
    expect(checkpointerConfig({})).toEqual({ ttl: null });
    expect(embedFunction(storeConfig({}))).toBeNull();
  });

  it("a provider's model has no function; a manifest whose export is not a function is refused", () => {
    const provider = normalizeStore({ index: { embed: "openai:m", dims: 3 } }, () => {
      throw new Error("not a function embed");
    });
    expect(embedFunction(provider)).toBeNull();
    expect(() =>
      embedFunction({
        index: {
          embed: { kind: "function", module: { embed: 1 }, exportName: "embed", source: "./e.ts:embed" },
          dims: 3,
          fields: ["$"],
        },
        ttl: null,
      }),
    ).toThrow('store.index.embed (./e.ts:embed): export "embed" is not a function');
  });
});

describe("a project's generated wrangler config and the store's embedding provider", () => {
  async function built(extra: Record<string, unknown>, files: Record<string, string> = {}) {
    const { dir, configPath, outFile } = deployment(extra, files);
    const { store } = await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false });
    return { dir, store };
  }

  it('binds Workers AI as "AI" for cloudflare:<model>, and nothing remote for the other providers', async () => {
    const cloudflare = await built({ store: { index: { embed: "cloudflare:@cf/baai/bge-base-en-v1.5", dims: 768 } } });
    expect((await renderWranglerConfig(cloudflare.dir, undefined, cloudflare.store)).ai).toEqual({ binding: "AI" });
    const others = [
      await built({ store: { index: { embed: "openai:text-embedding-3-small", dims: 1536 } } }),
      await built({ store: { index: { embed: "./embed.ts:embed", dims: 3 } } }, { "embed.ts": EMBED_SOURCE }),
      await built({ store: { ttl: { default_ttl: 60 } } }),
      await built({}),
    ];
    for (const { dir, store } of others)
      expect(await renderWranglerConfig(dir, undefined, store)).not.toHaveProperty("ai");
  });

  it("is written by the project's build with the binding", async () => {
    const { configPath } = deployment({
      store: { index: { embed: "cloudflare:@cf/baai/bge-base-en-v1.5", dims: 768 } },
    });
    const project = await buildProject(configPath);
    try {
      expect(JSON.parse(readFileSync(project.wranglerConfig, "utf8")).ai).toEqual({ binding: "AI" });
    } finally {
      rmSync(project.buildDir, { recursive: true, force: true });
    }
  });

  it("keeps a project's own AI binding, and refuses one of another name", async () => {
    const { dir, store } = await built({ store: { index: { embed: "cloudflare:@cf/baai/bge-m3", dims: 1024 } } });
    const own = join(dir, "wrangler.json");
    writeFileSync(own, JSON.stringify({ ai: { binding: "AI", remote: true } }));
    expect((await renderWranglerConfig(dir, own, store)).ai).toEqual({ binding: "AI", remote: true });
    writeFileSync(own, JSON.stringify({ ai: { binding: "WORKERS_AI" } }));
    await expect(renderWranglerConfig(dir, own, store)).rejects.toThrow(
      new BuildError(
        `store.index.embed "cloudflare:@cf/baai/bge-m3" reads Workers AI through the binding "AI", but ${own} binds ai as "WORKERS_AI"; name it "AI" or remove the "ai" key (the build adds it)`,
      ),
    );
  });

  it("gives the bundled function to embedderFor", async () => {
    const { configPath, outFile } = deployment(
      { store: { index: { embed: "./embed.ts:embed", dims: 3 } } },
      { "embed.ts": EMBED_SOURCE },
    );
    await buildDeployment(configPath, { outFile, stageAssets: false, staticSchemas: false });
    const { manifest } = (await import(pathToFileURL(outFile).href)) as { manifest: DeploymentManifest };
    const embedder = embedderFor(storeConfig(manifest), {});
    expect(embedder?.provider).toBe("./embed.ts:embed");
    expect(await embedder?.embed(["hello"])).toEqual([[5, 1, 0]]);
  });
});
