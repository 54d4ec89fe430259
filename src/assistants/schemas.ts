import { z } from "@hono/zod-openapi";
import { MAX_ID_LENGTH, MAX_METADATA_DEPTH } from "../core/limits.ts";
import {
  BoolQuery,
  Description,
  Identifier,
  JsonFilter,
  JsonObject,
  JsonSetting,
  Name,
  nestedAtMost,
} from "../core/schemas.ts";
import { MAX_FILTER_CONDITIONS } from "../db/json-filter.ts";

/**
 * A count LangGraph loops on: below 1 (or not an integer) `max_concurrency` starts no task and the
 * run never ends, and `recursion_limit` fails every run.
 */
function atLeastOne(field: string) {
  const error = `config.${field} must be an integer ≥ 1`;
  return z.number({ error }).int({ error }).min(1, { error });
}

/** `config.<field>`, which LangGraph reads as a string (or null: unset). */
const configString = (field: string) => z.string({ error: `config.${field} must be a string` }).max(MAX_ID_LENGTH);

/**
 * The fields of a run config that reach LangGraph (run-manager.ts passes no others), each with what
 * LangGraph needs of it. Checked where a config enters (runs, crons, assistants) and again when a
 * run starts, for configs stored before these checks.
 */
export const RunnableConfigFields = z.object({
  tags: z.array(Name, { error: "config.tags must be a list of strings" }).optional(),
  recursion_limit: atLeastOne("recursion_limit").optional(),
  max_concurrency: atLeastOne("max_concurrency").optional(),
  configurable: z
    .object(
      {
        checkpoint_id: configString("configurable.checkpoint_id").nullish(),
        checkpoint_ns: configString("configurable.checkpoint_ns").optional(),
        checkpoint_map: z
          .record(z.string(), z.unknown(), { error: "config.configurable.checkpoint_map must be an object" })
          .nullish(),
      },
      { error: "config.configurable must be an object" },
    )
    .loose()
    .optional(),
});

/** A run config (of an assistant or a run): its extra keys are kept as given, so the whole object is depth-checked. */
export const ConfigSchema = RunnableConfigFields.loose().superRefine(nestedAtMost(MAX_METADATA_DEPTH));

/** What is wrong with a stored run config, in the words of the 422 a request would get; null when nothing. */
export function runConfigProblem(config: unknown): string | null {
  const parsed = RunnableConfigFields.safeParse(config);
  if (parsed.success) return null;
  const [issue] = parsed.error.issues;
  // The field-level messages name their field; others (a tag too long) get its path.
  return issue.message.startsWith("config.") ? issue.message : `config.${issue.path.join(".")}: ${issue.message}`;
}

export const AssistantSchema = z
  .object({
    assistant_id: z.string(),
    graph_id: z.string(),
    config: JsonObject,
    context: z.unknown(),
    metadata: JsonObject,
    version: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Assistant");

export const AssistantVersionSchema = AssistantSchema.omit({ updated_at: true }).openapi("AssistantVersion");

export type Assistant = z.infer<typeof AssistantSchema>;
export type AssistantVersion = z.infer<typeof AssistantVersionSchema>;

/** An assistant id, or a graph id naming its system assistant. */
export const AssistantIdParam = z.object({ assistant_id: z.string().min(1).max(MAX_ID_LENGTH) });

export const AssistantCreateSchema = z
  .object({
    graph_id: Identifier.describe("A graph of this deployment"),
    assistant_id: z
      .guid()
      .transform((id) => id.toLowerCase())
      .optional(),
    config: ConfigSchema.default({}),
    context: JsonSetting.optional(),
    metadata: JsonObject.default({}),
    if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
    name: Name.min(1).optional(),
    description: Description.nullish(),
  })
  .openapi("AssistantCreate");

export const AssistantPatchSchema = z
  .object({
    graph_id: Identifier.optional(),
    config: ConfigSchema.optional().describe("Replaces the config"),
    context: JsonSetting.optional().describe("Replaces the context (null keeps it)"),
    metadata: JsonObject.optional().describe("Merged into the metadata"),
    name: Name.min(1).optional(),
    description: Description.nullish(),
  })
  .openapi("AssistantPatch");

const filterNote = `Containment: every key must match (nested objects recursively); at most ${MAX_FILTER_CONDITIONS} values`;

export const AssistantCountSchema = z
  .object({
    metadata: JsonFilter.optional().describe(filterNote),
    graph_id: Identifier.optional(),
    name: Name.optional().describe("Case-insensitive substring"),
  })
  .openapi("AssistantCountRequest");

export const ASSISTANT_FIELDS = AssistantSchema.keyof().options;

export const AssistantSearchSchema = AssistantCountSchema.extend({
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  select: z.array(z.enum(ASSISTANT_FIELDS)).min(1).optional(),
}).openapi("AssistantSearchRequest");

export const VersionsRequestSchema = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    metadata: JsonFilter.optional(),
  })
  .openapi("AssistantVersionsRequest");

export const LatestRequestSchema = z
  .object({ version: z.number().int().min(1).optional() })
  .openapi("AssistantSetLatest");

export const XrayQuery = z.object({
  xray: z
    .string()
    .optional()
    .transform((value, ctx): boolean | number => {
      if (value === undefined) return false;
      if (/^(true|yes)$/i.test(value)) return true;
      if (/^(false|no)$/i.test(value)) return false;
      const depth = Number(value);
      if (Number.isInteger(depth) && depth >= 0) return depth;
      ctx.addIssue({ code: "custom", message: "xray is a boolean or a depth (non-negative integer)" });
      return z.NEVER;
    }),
});

export const RecurseQuery = z.object({ recurse: BoolQuery });

const JsonSchemaObject = z.record(z.string(), z.unknown()).openapi({ description: "A JSON schema" });

/**
 * One namespace of `GET /assistants/{id}/subgraphs`: the official LangGraph.js server's fields (`state`,
 * `input`, `output`, `config`, each left out when the graph gives none), then the same schemas under
 * the Agent Server API reference's names.
 */
export const SubgraphSchemasSchema = z
  .object({
    state: JsonSchemaObject.optional(),
    input: JsonSchemaObject.optional(),
    output: JsonSchemaObject.optional(),
    config: JsonSchemaObject.optional(),
    state_schema: JsonSchemaObject.nullable(),
    input_schema: JsonSchemaObject.nullable(),
    output_schema: JsonSchemaObject.nullable(),
    config_schema: JsonSchemaObject.nullable(),
    context_schema: JsonSchemaObject.nullable(),
  })
  .openapi("SubgraphSchemas");
