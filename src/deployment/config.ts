import { z } from "zod";
import { fieldPathProblem } from "../core/field-paths.ts";
import { MAX_EMBEDDING_DIMS, MAX_TTL_MINUTES } from "../core/limits.ts";

/**
 * The deployment configuration, `langgraph.json`, as the official CLI defines it. Keys that only matter
 * to Python or Docker builds are accepted and ignored. Shared by the build step (Node) and tests.
 */

const GraphSpecSchema = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), description: z.string().optional() }),
]);

export const CorsConfigSchema = z.object({
  allow_origins: z.array(z.string()).optional(),
  allow_origin_regex: z.string().optional(),
  allow_methods: z.array(z.string()).optional(),
  allow_headers: z.array(z.string()).optional(),
  allow_credentials: z.boolean().optional(),
  expose_headers: z.array(z.string()).optional(),
  max_age: z.number().int().nonnegative().optional(),
});

export const HttpConfigSchema = z
  .object({
    /** `"./path.ts:export"` of a Hono app mounted before the platform's routes. */
    app: z.string().min(1).optional(),
    cors: CorsConfigSchema.optional(),
    disable_assistants: z.boolean().optional(),
    disable_threads: z.boolean().optional(),
    disable_runs: z.boolean().optional(),
    disable_store: z.boolean().optional(),
    disable_meta: z.boolean().optional(),
    disable_ui: z.boolean().optional(),
    disable_a2a: z.boolean().optional(),
    disable_mcp: z.boolean().optional(),
    /** Whether the platform's authentication applies to `app`'s routes (default true). */
    enable_custom_route_auth: z.boolean().optional(),
  })
  .loose();

/** A `ui` key is a graph id that also names a folder of the Worker's assets and a URL segment. */
const UiSchema = z.record(z.string(), z.string().min(1)).superRefine((ui, ctx) => {
  for (const id of Object.keys(ui)) {
    if (/^[A-Za-z0-9_.-]+$/.test(id) && id !== "." && id !== "..") continue;
    ctx.addIssue({
      code: "custom",
      path: [id],
      message: `ui id "${id}" must use letters, digits, '_', '-' and '.', and not be '.' or '..'`,
    });
  }
});

export const UiConfigSchema = z.object({ shared: z.array(z.string().min(1)).optional() }).loose();

/**
 * `store` and `checkpointer`, with the names, types and defaults of the official CLI's schema
 * (langchain-ai/langgraph libs/cli/langgraph_cli/schemas.py: `StoreConfig`, `IndexConfig`, `TTLConfig`,
 * `CheckpointerConfig`, `ThreadTTLConfig`; langgraph.json's JSON schema is generated from it). TTLs are
 * in minutes. Unknown keys are kept and ignored, as elsewhere in this file (`checkpointer.path` and
 * `checkpointer.serde` are Python-only).
 */

/** How a value is shown in a message: JSON where it has one (`0`, `"5"`, `null`). */
function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  return JSON.stringify(value) ?? String(value);
}

/** A number schema whose every failure says `must be <what>, got <value>`. */
function numberWhich(what: string, int: boolean, positive: boolean) {
  const error = (issue: { input?: unknown }) => `must be ${what}, got ${shown(issue.input)}`;
  let schema = z.number({ error });
  if (int) schema = schema.int({ error });
  if (positive) schema = schema.positive({ error });
  return schema;
}

/** `default_ttl` of `store.ttl` and `checkpointer.ttl`: minutes, at most a century (an expiry past year 9999 breaks). */
const defaultTtl = () =>
  numberWhich("a positive number of minutes", false, true)
    .max(MAX_TTL_MINUTES, {
      error: (issue) => `must be at most ${MAX_TTL_MINUTES} minutes (a century), got ${shown(issue.input)}`,
    })
    .nullable()
    .optional();

/** What `store.index.embed` names: a provider's model, or the deployment's own function. */
export type EmbedSpec =
  | { kind: "openai"; model: string }
  | { kind: "cloudflare"; model: string }
  | { kind: "function"; file: string; exportName: string };

const EMBED_FORMS = '"openai:<model>", "cloudflare:<model>" or "./path/to/file.ts:export"';

/** Parses `store.index.embed`, or returns the message naming what is wrong with it. */
export function parseEmbedSpec(embed: string): EmbedSpec | { error: string } {
  const colon = embed.indexOf(":");
  const prefix = colon > 0 ? embed.slice(0, colon) : "";
  if (prefix === "openai" || prefix === "cloudflare") {
    const model = embed.slice(colon + 1).trim();
    if (!model) return { error: `must name a model after "${prefix}:", got ${shown(embed)}` };
    return { kind: prefix, model };
  }
  // A file path, as graph paths are written: relative, absolute, or with a folder or a module extension.
  if (/^(\.{1,2}\/|\/)/.test(embed) || /\.(ts|mts|cts|tsx|js|mjs|cjs|jsx)(:|$)/.test(embed)) {
    const { file, exportName } = parseGraphSpec(embed);
    return { kind: "function", file, exportName };
  }
  return { error: `must be ${EMBED_FORMS}, got ${shown(embed)}` };
}

export const StoreIndexConfigSchema = z
  .object({
    embed: z
      .string({ error: (issue) => `must be ${EMBED_FORMS}, got ${shown(issue.input)}` })
      .superRefine((embed, ctx) => {
        const parsed = parseEmbedSpec(embed);
        if ("error" in parsed) ctx.addIssue({ code: "custom", message: parsed.error });
      }),
    dims: numberWhich("a positive integer", true, true).max(MAX_EMBEDDING_DIMS, {
      error: (issue) => `must be at most ${MAX_EMBEDDING_DIMS}, got ${shown(issue.input)}`,
    }),
    /** JSON paths of the text to embed, one vector per matched element; `["$"]` (the whole value) by default. */
    fields: z
      .array(z.string({ error: (issue) => `must be a path string, got ${shown(issue.input)}` }), {
        error: (issue) => `must be an array of paths, got ${shown(issue.input)}`,
      })
      .nullable()
      .optional()
      .superRefine((fields, ctx) => {
        for (const [i, field] of (fields ?? []).entries()) {
          const problem = fieldPathProblem(field);
          if (problem) ctx.addIssue({ code: "custom", path: [i], message: `${shown(field)} ${problem}` });
        }
      }),
  })
  .loose();

export const StoreTtlConfigSchema = z
  .object({
    /** Whether get and search refresh an item's TTL unless the request says otherwise (default true). */
    refresh_on_read: z.boolean({ error: (issue) => `must be true or false, got ${shown(issue.input)}` }).optional(),
    /** Minutes a new item lives after its last access; null or absent: items do not expire. */
    default_ttl: defaultTtl(),
    /** Minutes between sweeps of expired items; null or absent: no sweep. */
    sweep_interval_minutes: numberWhich("a positive integer of minutes", true, true).nullable().optional(),
  })
  .loose();

export const StoreConfigSchema = z
  .object({
    index: StoreIndexConfigSchema.nullable().optional(),
    ttl: StoreTtlConfigSchema.nullable().optional(),
  })
  .loose();

export const CheckpointerTtlConfigSchema = z
  .object({
    /** What happens to an expired thread: "delete" removes it; "keep_latest" keeps only its latest state. */
    strategy: z
      .enum(["delete", "keep_latest"], {
        error: (issue) => `must be "delete" or "keep_latest", got ${shown(issue.input)}`,
      })
      .optional(),
    /** Minutes a thread lives after its last update; null or absent: threads do not expire. */
    default_ttl: defaultTtl(),
    /** Minutes between sweeps (the reference's default is about 5). */
    sweep_interval_minutes: numberWhich("a positive integer of minutes", true, true).nullable().optional(),
    /** Threads handled per sweep (the reference's default is 1000). */
    sweep_limit: numberWhich("a positive integer", true, true).nullable().optional(),
  })
  .loose();

export const CheckpointerConfigSchema = z.object({ ttl: CheckpointerTtlConfigSchema.nullable().optional() }).loose();

export const LanggraphConfigSchema = z
  .object({
    graphs: z.record(
      z.string().regex(/^[A-Za-z0-9_.-]+$/, "graph ids use letters, digits, '_', '-' and '.'"),
      GraphSpecSchema,
    ),
    env: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
    auth: z.object({ path: z.string().optional(), disable_studio_auth: z.boolean().optional() }).loose().optional(),
    http: HttpConfigSchema.optional(),
    /** Package folders (".", "./packages/x") whose node_modules the deployment's imports resolve from. */
    dependencies: z.array(z.string().min(1)).optional(),
    node_version: z
      .union([z.string(), z.number()])
      .transform(String)
      .pipe(z.enum(["20", "22", "24"], { error: 'node_version is one of "20", "22", "24"' }))
      .optional(),
    /** Generative UI: graph id → component file (.tsx/.jsx) whose default export maps names to components. */
    ui: UiSchema.optional(),
    /** Packages the UI bundles take from the host page instead of bundling (beyond React and the SDK). */
    ui_config: UiConfigSchema.optional(),
    /** The long-term memory store: semantic search (`index`) and item lifetimes (`ttl`). */
    store: StoreConfigSchema.nullable().optional(),
    /** Thread lifetimes (`ttl`). */
    checkpointer: CheckpointerConfigSchema.nullable().optional(),
  })
  .loose();

export type LanggraphConfig = z.infer<typeof LanggraphConfigSchema>;
export type CorsConfig = z.infer<typeof CorsConfigSchema>;
export type HttpConfig = z.infer<typeof HttpConfigSchema>;
export type StoreConfig = z.infer<typeof StoreConfigSchema>;
export type CheckpointerConfig = z.infer<typeof CheckpointerConfigSchema>;

/** `"./graphs/echo.ts:graph"` → file and export name (the default export when no name is given). */
export function parseGraphSpec(spec: z.infer<typeof GraphSpecSchema>): {
  file: string;
  exportName: string;
  description: string | null;
} {
  const { path, description } = typeof spec === "string" ? { path: spec, description: undefined } : spec;
  const colon = path.lastIndexOf(":");
  // A colon at index 1 is a Windows drive letter, not an export separator.
  if (colon > 1)
    return {
      file: path.slice(0, colon),
      exportName: path.slice(colon + 1) || "default",
      description: description ?? null,
    };
  return { file: path, exportName: "default", description: description ?? null };
}
