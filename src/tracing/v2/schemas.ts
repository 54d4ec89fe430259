import { z } from "@hono/zod-openapi";
import { MAX_ID_LIST } from "../../core/limits.ts";
import { isoTime, nullMeansAbsent, runTimeBound, TracingRunSchema } from "../schemas.ts";

/**
 * The wire shapes of `/api/v2/runs` (LangSmith 0.16), as the SDKs' generated clients call them
 * (`client.runs.query_v2()`/`queryV2()`, `retrieve_v2()`/`retrieveV2()`): upper-case `selects`
 * and enums, `items` and `next_cursor` pages.
 */

const uuid = z.uuid().transform((id) => id.toLowerCase());

/** The fields a v2 run may carry; each is returned under its lower-case name. Omitted `selects` return only `id`. */
export const RUN_SELECT_FIELDS = [
  "ID",
  "NAME",
  "RUN_TYPE",
  "STATUS",
  "START_TIME",
  "END_TIME",
  "LATENCY_SECONDS",
  "FIRST_TOKEN_TIME",
  "ERROR",
  "ERROR_PREVIEW",
  "EXTRA",
  "METADATA",
  "EVENTS",
  "INPUTS",
  "INPUTS_PREVIEW",
  "OUTPUTS",
  "OUTPUTS_PREVIEW",
  "MANIFEST",
  "PARENT_RUN_IDS",
  "PROJECT_ID",
  "TRACE_ID",
  "THREAD_ID",
  "DOTTED_ORDER",
  "IS_ROOT",
  "REFERENCE_EXAMPLE_ID",
  "REFERENCE_DATASET_ID",
  "TOTAL_TOKENS",
  "PROMPT_TOKENS",
  "COMPLETION_TOKENS",
  "TOTAL_COST",
  "PROMPT_COST",
  "COMPLETION_COST",
  "PROMPT_TOKEN_DETAILS",
  "COMPLETION_TOKEN_DETAILS",
  "PROMPT_COST_DETAILS",
  "COMPLETION_COST_DETAILS",
  "PRICE_MODEL_ID",
  "TAGS",
  "APP_PATH",
  "ATTACHMENTS",
  "THREAD_EVALUATION_TIME",
  "IS_IN_DATASET",
  "LAST_QUEUED_AT",
  "SHARE_URL",
  "FEEDBACK_STATS",
] as const;
export type RunSelectField = (typeof RUN_SELECT_FIELDS)[number];

const RunSelect = z.preprocess(
  (value) => (typeof value === "string" ? value.toUpperCase() : value),
  z.enum(RUN_SELECT_FIELDS),
);
const RUN_TYPES = ["TOOL", "CHAIN", "LLM", "RETRIEVER", "EMBEDDING", "PROMPT", "PARSER"] as const;

export const RunsQueryV2Schema = nullMeansAbsent(
  z.object({
    project_ids: z
      .array(uuid)
      .max(MAX_ID_LIST)
      .optional()
      .describe(`Tracing project ids (at most ${MAX_ID_LIST}); required (no datasets on this server)`),
    reference_dataset_id: z.string().optional().describe("Not supported here: this server keeps no datasets"),
    ids: z.array(uuid).max(50).optional(),
    trace_id: uuid.optional(),
    run_type: z.preprocess((v) => (typeof v === "string" ? v.toUpperCase() : v), z.enum(RUN_TYPES)).optional(),
    is_root: z.boolean().optional(),
    has_error: z.boolean().optional(),
    min_start_time: runTimeBound.optional().describe("Lower bound of start_time; defaults to one day ago"),
    max_start_time: runTimeBound.optional().describe("Upper bound of start_time; defaults to now"),
    reference_examples: z.array(uuid).max(40).optional(),
    filter: z.string().optional(),
    trace_filter: z.string().optional(),
    tree_filter: z.string().optional(),
    selects: z.array(RunSelect).optional(),
    page_size: z.number().int().min(1).max(1000).default(100).describe("At most 100 runs are served per page"),
    cursor: z.string().optional(),
  }),
).openapi("RunsQueryV2");
export type RunsQueryV2 = z.output<typeof RunsQueryV2Schema>;

const run = TracingRunSchema.shape;
const preview = z.string().nullable().describe("The first 200 characters of the field's JSON (or text), then …");
/** A field this server does not track: always null. */
const untracked = z.null();

/** A v2 run: the selected fields only, under their lower-case names (`id` alone when nothing is selected). */
export const RunV2Schema = z
  .object({
    id: run.id,
    name: run.name,
    run_type: z.string().describe("In upper case: TOOL, CHAIN, LLM… or the client's own"),
    status: z.string().describe("In upper case: SUCCESS, ERROR or PENDING, unless the client set its own"),
    start_time: run.start_time,
    end_time: run.end_time,
    latency_seconds: run.latency,
    first_token_time: run.first_token_time,
    error: run.error,
    error_preview: preview,
    extra: run.extra,
    metadata: z.record(z.string(), z.unknown()).nullable().describe("extra.metadata"),
    events: run.events,
    inputs: run.inputs,
    inputs_preview: preview,
    outputs: run.outputs,
    outputs_preview: preview,
    manifest: untracked,
    parent_run_ids: run.parent_run_ids,
    project_id: run.session_id,
    trace_id: run.trace_id,
    thread_id: run.thread_id,
    dotted_order: run.dotted_order,
    is_root: run.is_root,
    reference_example_id: run.reference_example_id,
    reference_dataset_id: untracked,
    total_tokens: run.total_tokens,
    prompt_tokens: run.prompt_tokens,
    completion_tokens: run.completion_tokens,
    total_cost: run.total_cost,
    prompt_cost: run.prompt_cost,
    completion_cost: run.completion_cost,
    prompt_token_details: untracked,
    completion_token_details: untracked,
    prompt_cost_details: untracked,
    completion_cost_details: untracked,
    price_model_id: untracked,
    tags: run.tags,
    app_path: run.app_path,
    attachments: z
      .record(z.string(), z.string())
      .nullable()
      .describe("GET /api/v2/runs/{id} only: attachment name → its download URL"),
    thread_evaluation_time: untracked,
    is_in_dataset: z.boolean(),
    last_queued_at: untracked,
    share_url: untracked,
    feedback_stats: run.feedback_stats,
  } satisfies Record<Lowercase<RunSelectField>, z.ZodType>)
  .partial()
  .openapi("RunV2");
export type RunV2 = z.infer<typeof RunV2Schema>;
export const RunsPageV2Schema = z
  .object({ items: z.array(RunV2Schema), next_cursor: z.string().nullable() })
  .openapi("RunsPageV2");

export const RunV2Params = z.object({ run_id: uuid });
/** Repeated `selects=ID&selects=NAME` arrive as an array, a single one as a string. */
export const RunV2Query = z.object({
  project_id: uuid,
  selects: z
    .union([RunSelect, z.array(RunSelect)])
    .optional()
    .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v])),
  start_time: isoTime.optional().describe("The run's start_time; accepted, not needed here"),
});
