/**
 * A user's agent project (a folder with a langgraph.json) built into a deployment of this platform, for
 * the `agent-platform` command (scripts/cli.ts). The platform's Worker (src/index.ts) is compiled with
 * the project's registry in place of this repository's: each project gets its own build folder in its
 * own .agent-platform/ (nothing is written into the platform's folder, which may be a read-only
 * node_modules/agent-platform; the shared packages resolve to the platform's copy through links there,
 * deployment-modules.ts) and its own wrangler config, generated from the platform's wrangler.toml plus
 * the project's own wrangler settings.
 */

import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { StoreManifest } from "../../src/deployment/manifest.ts";
import { BuildError, buildDeployment, PROJECT_ROOT } from "./deployment.ts";
import { WRANGLER_CONFIG } from "./wrangler.ts";

/** How src/deployment/index.ts imports the registry; a project's wrangler config aliases it. */
export const REGISTRY_IMPORT = "../../dist/registry.generated.ts";

/**
 * Keys of the project's wrangler config that cannot replace the platform's: the Worker's code, its
 * build and its Durable Object classes are the platform's. Binding lists and flags are merged, so the
 * platform's own bindings (DB, QUEUE, EXPORT_BUCKET) stay.
 */
const PLATFORM_KEYS = ["main", "build", "alias", "assets", "durable_objects", "migrations", "migrations_dir"];

export interface ProjectDeployment {
  /** The project's langgraph.json. */
  configPath: string;
  projectDir: string;
  /** The build folder, in the project's .agent-platform/. */
  buildDir: string;
  /** The generated wrangler config the Worker is bundled, served and deployed with. */
  wranglerConfig: string;
  graphs: string[];
}

/** Where the CLI keeps what it generates for a project: its own `.agent-platform/`, beside the config. */
export function projectStateDir(configPath: string): string {
  return join(dirname(configPath), ".agent-platform");
}

/** `<project>/.agent-platform/deployments/<config file name>`: one per config, so `--config` builds never mix. */
export function projectBuildDir(configPath: string): string {
  const name = basename(configPath, ".json").replace(/[^A-Za-z0-9_.-]/g, "_") || "langgraph";
  return join(projectStateDir(configPath), "deployments", name);
}

/** A package name as a Worker name (lowercase letters, digits and dashes, at most 63), or undefined. */
export function workerName(packageName: string | undefined): string | undefined {
  const name = (packageName ?? "")
    .toLowerCase()
    .replace(/^@[^/]*\//, "")
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return name || undefined;
}

/** The Worker name a project's package gives it (its package.json `name`), when it has one. */
export function packageWorkerName(projectDir: string): string | undefined {
  const manifest = join(projectDir, "package.json");
  if (!existsSync(manifest)) return undefined;
  const { name } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown };
  return typeof name === "string" ? workerName(name) : undefined;
}

/** The project's own wrangler config (wrangler.jsonc, wrangler.json or wrangler.toml), if it has one. */
export function projectWranglerConfig(projectDir: string): string | undefined {
  return ["wrangler.jsonc", "wrangler.json", "wrangler.toml"]
    .map((name) => join(projectDir, name))
    .find((file) => existsSync(file));
}

type RawConfig = Record<string, unknown>;

/** Binding lists a project's config merges into the platform's by binding name (it never removes one). */
const BINDING_LISTS = ["d1_databases", "r2_buckets", "kv_namespaces", "services", "vectorize", "hyperdrive"];

/** `base` with `extra`'s entries replacing those of the same `key`, and the rest appended. */
function mergeByKey(base: unknown, extra: unknown, key: string): RawConfig[] {
  const merged = [...((base as RawConfig[] | undefined) ?? [])];
  for (const entry of (extra as RawConfig[] | undefined) ?? []) {
    const at = merged.findIndex((existing) => existing[key] === entry[key]);
    if (at >= 0) merged[at] = { ...merged[at], ...entry };
    else merged.push(entry);
  }
  return merged;
}

async function readRawConfig(file: string): Promise<RawConfig> {
  const { experimental_readRawConfig } = await import("wrangler");
  return experimental_readRawConfig({ config: file }).rawConfig as RawConfig;
}

/** The binding Workers AI embeddings (`store.index.embed` "cloudflare:<model>") are read through. */
export const WORKERS_AI_BINDING = "AI";

/**
 * The platform's wrangler.toml with its paths made absolute, the registry import aliased to the
 * project's, and the project's own settings (name, account, database ids, routes, vars...) on top.
 * A store embedding with Workers AI adds the `AI` binding; without one the config binds no remote
 * service, so the local runtime stays offline.
 */
export async function renderWranglerConfig(
  buildDir: string,
  projectConfig?: string,
  store?: StoreManifest,
  defaultName?: string,
): Promise<RawConfig> {
  const base = await readRawConfig(WRANGLER_CONFIG);
  const config: RawConfig = {
    ...base,
    // The project's own `name` (merged below) wins; else its package's, so projects on one account are
    // different Workers, not all "agent-platform".
    ...(defaultName ? { name: defaultName } : {}),
    main: join(PROJECT_ROOT, "src/index.ts"),
    alias: { [REGISTRY_IMPORT]: join(buildDir, "registry.generated.ts") },
    assets: { ...(base.assets as RawConfig), directory: join(buildDir, "assets") },
    d1_databases: (base.d1_databases as RawConfig[]).map((db) => ({
      ...db,
      migrations_dir: join(PROJECT_ROOT, String(db.migrations_dir ?? "migrations")),
    })),
  };
  // The CLI builds before it bundles; wrangler must not run this repository's build instead.
  delete config.build;
  if (!projectConfig) return withWorkersAi(config, store);
  const own = await readRawConfig(projectConfig);
  for (const [key, value] of Object.entries(own)) {
    if (PLATFORM_KEYS.includes(key)) {
      throw new BuildError(
        `${projectConfig} sets "${key}", which the platform's Worker defines; remove it (the project may set ${["name", "account_id", "routes", "vars", "d1_databases", "r2_buckets", "queues", "triggers", "observability"].join(", ")}...)`,
      );
    }
    if (key === "vars") config.vars = { ...(config.vars as RawConfig), ...(value as RawConfig) };
    else if (BINDING_LISTS.includes(key)) config[key] = mergeByKey(config[key], value, "binding");
    else if (key === "queues") {
      const base = (config.queues ?? {}) as RawConfig;
      const mine = value as RawConfig;
      const producers = mergeByKey(base.producers, mine.producers, "binding");
      // The platform consumes the queue its QUEUE binding sends to: renamed by the project, it follows.
      const renamed = new Map(
        ((base.producers as RawConfig[] | undefined) ?? []).map((p) => [
          p.queue,
          producers.find((q) => q.binding === p.binding)?.queue ?? p.queue,
        ]),
      );
      const consumers = ((base.consumers as RawConfig[] | undefined) ?? []).map((c) => ({
        ...c,
        queue: renamed.get(c.queue) ?? c.queue,
      }));
      config.queues = {
        ...base,
        ...mine,
        producers,
        consumers: mergeByKey(consumers, mine.consumers, "queue"),
      };
    } else if (key === "compatibility_flags") {
      config.compatibility_flags = [
        ...new Set([...((config.compatibility_flags as string[]) ?? []), ...(value as string[])]),
      ];
    } else config[key] = value;
  }
  // The database's migrations are the platform's whatever the project's entry says.
  config.d1_databases = (config.d1_databases as RawConfig[]).map((db) =>
    db.binding === "DB" ? { ...db, migrations_dir: join(PROJECT_ROOT, "migrations") } : db,
  );
  return withWorkersAi(config, store, projectConfig);
}

/** The config with the `ai` binding Workers AI embeddings need, unless the project already binds it as `AI`. */
function withWorkersAi(config: RawConfig, store: StoreManifest | undefined, projectConfig?: string): RawConfig {
  const embed = store?.index?.embed;
  if (embed?.kind !== "cloudflare") return config;
  const own = config.ai as RawConfig | undefined;
  if (own === undefined) return { ...config, ai: { binding: WORKERS_AI_BINDING } };
  if (own.binding !== WORKERS_AI_BINDING) {
    throw new BuildError(
      `store.index.embed "${embed.source}" reads Workers AI through the binding "${WORKERS_AI_BINDING}", but ${projectConfig} binds ai as ${JSON.stringify(own.binding)}; name it "${WORKERS_AI_BINDING}" or remove the "ai" key (the build adds it)`,
    );
  }
  return config;
}

/**
 * Builds the project at `configPath`: the registry and the bundle of its modules into its build folder,
 * the generated wrangler config beside them, and its .dev.vars (local secrets) next to that config,
 * where wrangler and Miniflare read them.
 */
export async function buildProject(
  configPath: string,
  options: { omitEnvFile?: boolean } = {},
): Promise<ProjectDeployment> {
  const projectDir = dirname(configPath);
  const buildDir = projectBuildDir(configPath);
  mkdirSync(buildDir, { recursive: true });
  const { graphs, store } = await buildDeployment(configPath, {
    outFile: join(buildDir, "registry.generated.ts"),
    schemaCacheDir: join(projectStateDir(configPath), "schema-cache"),
    omitEnvFile: options.omitEnvFile,
  });
  const wranglerConfig = join(buildDir, "wrangler.json");
  const rendered = await renderWranglerConfig(
    buildDir,
    projectWranglerConfig(projectDir),
    store,
    packageWorkerName(projectDir),
  );
  writeFileSync(wranglerConfig, `${JSON.stringify(rendered, null, 2)}\n`);
  const devVars = join(projectDir, ".dev.vars");
  // Deleted from the project, the local secrets go from the build too.
  if (existsSync(devVars)) copyFileSync(devVars, join(buildDir, ".dev.vars"));
  else rmSync(join(buildDir, ".dev.vars"), { force: true });
  return { configPath, projectDir, buildDir, wranglerConfig, graphs };
}
