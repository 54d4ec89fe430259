import type { HttpConfig } from "./config.ts";

/** One graph of the deployment, as the build step found it. */
export interface GraphEntry {
  id: string;
  /** The graph module's namespace object (statically imported by the generated registry). */
  module: Record<string, unknown>;
  exportName: string;
  /** The spec as written in langgraph.json, for messages. */
  source: string;
  description: string | null;
  /**
   * The JSON schemas the build step extracted from the graph's TypeScript types (as the official LangGraph.js
   * server does), or null when the extraction failed: the Worker then derives them at run time only.
   */
  staticSchemas?: StaticGraphSchemas | null;
}

type JsonSchema = Record<string, unknown>;

/** The schemas of one graph or subgraph; a missing key is a schema TypeScript could not describe. */
export interface StaticGraphSchema {
  state?: JsonSchema;
  input?: JsonSchema;
  output?: JsonSchema;
  config?: JsonSchema;
}

/** A graph's static schemas: its own, and its subgraphs' by namespace (`child`, `child|grandchild`). */
export interface StaticGraphSchemas {
  root: StaticGraphSchema;
  subgraphs: Record<string, StaticGraphSchema>;
}

/** One graph's generative UI (langgraph.json `ui`), bundled by the build into the Worker's assets. */
export interface UiEntry {
  /** The graph id of `POST /ui/{graph_id}`; the assets are served as `/ui/<id>/<file>`. */
  id: string;
  /** Asset file names (`entrypoint.js`, and `entrypoint.css` when the component has styles). */
  files: string[];
}

/** `store.index.embed`: a provider's model, or the deployment's own function (bundled like the graphs). */
export type StoreEmbedEntry =
  | { kind: "openai"; model: string; source: string }
  | { kind: "cloudflare"; model: string; source: string }
  | { kind: "function"; module: Record<string, unknown>; exportName: string; source: string };

/** langgraph.json `store`, validated by the build, with LangGraph's defaults applied. */
export interface StoreManifest {
  /** `store.index`, or null when the store has no semantic index. */
  index: { embed: StoreEmbedEntry; dims: number; fields: string[] } | null;
  /** `store.ttl` (minutes), or null when not configured. */
  ttl: { refreshOnRead: boolean; defaultTtlMinutes: number | null; sweepIntervalMinutes: number | null } | null;
}

/** langgraph.json `checkpointer`, validated by the build, with LangGraph's defaults applied. */
export interface CheckpointerManifest {
  /** `checkpointer.ttl` (minutes), or null when not configured. */
  ttl: {
    strategy: "delete" | "keep_latest";
    defaultTtlMinutes: number | null;
    sweepIntervalMinutes: number;
    sweepLimit: number;
  } | null;
}

/** Everything the Worker knows about its deployment, generated from langgraph.json by scripts/build.ts. */
export interface DeploymentManifest {
  configPath: string;
  graphs: GraphEntry[];
  /** Values from langgraph.json `env` (a map, or the parsed env file). */
  env: Record<string, string>;
  http: HttpConfig;
  versions: { platform: string; langgraph_js: string };
  /** Custom authentication from langgraph.json `auth.path`, or null for API-key auth. */
  auth: {
    module: Record<string, unknown>;
    exportName: string;
    source: string;
    /** `auth.disable_studio_auth`: no studio user, even with a valid key. */
    disableStudioAuth: boolean;
  } | null;
  /** langgraph.json `http.app`: the deployment's Hono app, or null. */
  httpApp: {
    module: Record<string, unknown>;
    exportName: string;
    source: string;
  } | null;
  /** Generative UI bundles from langgraph.json `ui` (absent in registries built before it existed). */
  ui?: UiEntry[];
  /** langgraph.json `store` (absent in registries built before it existed: no index, no TTL). */
  store?: StoreManifest;
  /** langgraph.json `checkpointer` (absent in registries built before it existed: no TTL). */
  checkpointer?: CheckpointerManifest;
}
