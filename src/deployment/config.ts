import { z } from "zod";

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
  })
  .loose();

export type LanggraphConfig = z.infer<typeof LanggraphConfigSchema>;
export type CorsConfig = z.infer<typeof CorsConfigSchema>;
export type HttpConfig = z.infer<typeof HttpConfigSchema>;

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
