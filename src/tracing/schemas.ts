import { z } from "@hono/zod-openapi";
import { isObject } from "../core/json.ts";
import { MAX_ID_LENGTH, MAX_ID_LIST, MAX_NAME_LENGTH } from "../core/limits.ts";
import { JsonData, JsonDataObject } from "../core/schemas.ts";
import { usageProblem } from "./run-input.ts";
import { endsBeforeStart, toRunTime, toStoredTime } from "./times.ts";

/**
 * The wire shapes of traced runs (`/api/v1/runs` and `/api/v1/info`): runs as the `langsmith` SDKs
 * send them, validated with times normalised to ISO strings, and the bodies the
 * tracing routes take and answer.
 */

/**
 * ISO-8601 text (the SDKs send 6 fractional digits) or epoch milliseconds (the JS SDK's `end_time`),
 * stored with its microseconds (see times.ts).
 */
const time = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const run = toRunTime(value);
  if ("problem" in run) {
    ctx.addIssue({ code: "custom", message: run.problem });
    return z.NEVER;
  }
  return run.time;
});

/** A bound on run times in a query, in the stored form (microseconds) so it compares with stored times as text. */
export const runTimeBound = z
  .string()
  .refine((value) => toStoredTime(value) !== undefined, "must be an ISO-8601 time")
  .transform((value) => toStoredTime(value) as string);

/** An ISO-8601 time in a project or export body, normalised to `toISOString()` (run times: see times.ts). */
export const isoTime = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), "must be an ISO-8601 time")
  .transform((value) => new Date(value).toISOString());

/**
 * An object body in which a JSON null means "not sent": the SDKs send null for every field they
 * leave unset (Python's `update_run` and `update_project`, the JS `listRuns`'s `start_time`), so
 * null-valued keys are dropped before validation and an optional field reads as absent. A required
 * field sent as null is reported as missing.
 */
export function nullMeansAbsent<T extends z.ZodType>(schema: T) {
  return z.preprocess(
    (value) =>
      isObject(value) ? Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null)) : value,
    schema,
  );
}

/** Run ids as the SDKs send them, compared lowercase. */
const runUuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID")
  .transform((s) => s.toLowerCase());
const json = JsonDataObject;
const name = z.string().min(1).max(MAX_NAME_LENGTH);

/** Fields a post or a patch may carry; a post additionally needs `name`, `run_type` and `start_time`. */
const runFields = {
  id: runUuid,
  name: name.optional(),
  run_type: z.string().min(1).max(MAX_ID_LENGTH).optional(),
  start_time: time.optional(),
  end_time: time.nullish(),
  inputs: json.nullish(),
  outputs: json.nullish(),
  error: z.string().nullish(),
  extra: json.nullish(),
  serialized: JsonData.optional(),
  events: z.array(json).nullish(),
  tags: z.array(z.string().max(MAX_NAME_LENGTH)).nullish(),
  parent_run_id: runUuid.nullish(),
  trace_id: runUuid.optional(),
  dotted_order: z.string().optional(),
  session_id: runUuid.nullish(),
  session_name: name.nullish(),
  reference_example_id: runUuid.nullish(),
  status: z.string().nullish(),
};

/**
 * What a run says that must agree with itself: it ends no earlier than it starts, a streamed
 * token's time is a run time (it becomes `first_token_time`), and its usage can be summed.
 */
function checkRun(
  run: {
    start_time?: string;
    end_time?: string | null;
    events?: Record<string, unknown>[] | null;
    outputs?: Record<string, unknown> | null;
    extra?: Record<string, unknown> | null;
  },
  ctx: z.RefinementCtx,
): void {
  if (run.start_time && run.end_time && endsBeforeStart(run.start_time, run.end_time))
    ctx.addIssue({
      code: "custom",
      path: ["end_time"],
      message: `${run.end_time} is before start_time ${run.start_time}`,
    });
  run.events?.forEach((event, i) => {
    // The first new_token event's time is exported as first_token_time.
    if (event.name !== "new_token" || typeof event.time !== "string" || !/^\d{4}-\d\d-\d\dT/.test(event.time)) return;
    const checked = toRunTime(event.time);
    if ("problem" in checked) ctx.addIssue({ code: "custom", path: ["events", i, "time"], message: checked.problem });
  });
  const usage = usageProblem(run.outputs, run.extra);
  if (usage) ctx.addIssue({ code: "custom", path: usage.path.split("."), message: usage.message });
}

export const RunPostSchema = nullMeansAbsent(
  z
    .object({
      ...runFields,
      name,
      run_type: z.string().min(1).max(MAX_ID_LENGTH),
      start_time: time,
    })
    .superRefine(checkRun),
);
export const RunPatchSchema = nullMeansAbsent(z.object(runFields).superRefine(checkRun));

export type RunPost = z.output<typeof RunPostSchema>;
export type RunPatch = z.output<typeof RunPatchSchema>;

// ---- the tracing routes' bodies ----

const uuid = z.uuid().transform((id) => id.toLowerCase());

// Runs are validated one by one in the ingestor, so one bad run in a batch is reported on its own.
export const RunBody = z.record(z.string(), z.unknown()).openapi("RunIngest");
export const RunBatchSchema = z
  .object({ post: z.array(RunBody).default([]), patch: z.array(RunBody).default([]) })
  .openapi("RunBatch");
export const RunIdParams = z.object({ run_id: uuid });
export const AttachmentParams = z.object({ run_id: uuid, name: z.string().min(1) });

/** A refused run of an ingest request, with the status its refusal would have as a whole response. */
export const IngestProblemSchema = z.object({
  run_id: z.string().nullable(),
  operation: z.enum(["post", "patch", "feedback"]),
  status: z.number(),
  detail: z.string(),
});
export const IngestResultSchema = z
  .object({ accepted: z.number(), errors: z.array(IngestProblemSchema) })
  .openapi("IngestResult");
export type IngestProblem = z.infer<typeof IngestProblemSchema>;
export type IngestResultBody = z.infer<typeof IngestResultSchema>;

const storedTime = (what: string) =>
  z.string().describe(`${what}: ISO-8601 UTC with microseconds, e.g. 2026-11-20T10:00:00.123456Z`);
const nullableCount = (what: string) => z.number().int().min(0).nullable().describe(what);
const nullableCost = (what: string) => z.number().min(0).nullable().describe(what);

/** The fields of a traced run as the API answers it (LangSmith's `RunSchema`). */
const tracingRunFields = {
  id: z.string().describe("The run's id (a UUID)"),
  name: z.string(),
  run_type: z.string().describe("tool, chain, llm, retriever, embedding, prompt, parser, or the client's own"),
  status: z.string().describe("success, error or pending, unless the client set its own"),
  start_time: storedTime("When the run started"),
  end_time: storedTime("When the run ended; null while it runs").nullable(),
  latency: z.number().min(0).nullable().describe("end_time − start_time in seconds, to the microsecond"),
  first_token_time: storedTime("The time of a streamed LLM run's first new_token event").nullable(),
  inputs: JsonDataObject.nullable(),
  outputs: JsonDataObject.nullable(),
  error: z.string().nullable(),
  extra: JsonDataObject.nullable().describe("Holds metadata (extra.metadata) and runtime information"),
  events: z.array(JsonDataObject).nullable(),
  tags: z.array(z.string()),
  trace_id: z.string().describe("The id of the trace's root run"),
  parent_run_id: z.string().nullable(),
  parent_run_ids: z.array(z.string()).describe("Every ancestor's id, root first"),
  dotted_order: z
    .string()
    .describe("<YYYYMMDDTHHMMSSffffff>Z<id> of each ancestor and then the run, joined by dots; empty when not known"),
  is_root: z.boolean(),
  execution_order: z.number().int(),
  session_id: z.string().describe("The tracing project's id"),
  reference_example_id: z.string().nullable(),
  thread_id: z.string().nullable().describe("From metadata thread_id, session_id or conversation_id"),
  prompt_tokens: nullableCount("From the run's usage (outputs.usage_metadata, llm_output.token_usage or metadata)"),
  completion_tokens: nullableCount("From the run's usage"),
  total_tokens: nullableCount("From the run's usage, else prompt + completion"),
  prompt_cost: nullableCost("As sent, else from MODEL_PRICES"),
  completion_cost: nullableCost("As sent, else from MODEL_PRICES"),
  total_cost: nullableCost("As sent, else prompt + completion cost"),
  feedback_stats: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("Per feedback key: n, avg and, for categorical values, their counts"),
  app_path: z.string().describe("The run's path in a LangSmith-style UI"),
  s3_urls: z
    .record(z.string(), z.object({ presigned_url: z.string(), mime_type: z.string(), size: z.number().int() }))
    .optional()
    .describe("GET /runs/{id} only: attachment.<name> → a pre-signed download URL"),
};

/**
 * A traced run as `GET /api/v1/runs/{id}` answers it (LangSmith's `RunSchema`): its own component,
 * not the Agent Server's `Run`.
 */
export const TracingRunSchema = z.object(tracingRunFields).openapi("TracingRun");
export type TracingRun = z.infer<typeof TracingRunSchema>;

/**
 * A run of a `/runs/query` page: every field of TracingRun but `s3_urls`; with `select`, only the
 * fields selected and those every run carries (the ones the SDKs' `Run` models require; see
 * run-projection.ts).
 */
export const TracingRunSelectionSchema = z
  .object(tracingRunFields)
  .omit({ s3_urls: true })
  .partial()
  .required({
    id: true,
    name: true,
    start_time: true,
    run_type: true,
    trace_id: true,
    dotted_order: true,
    status: true,
    session_id: true,
    app_path: true,
  })
  .openapi("TracingRunSelection");
export type TracingRunSelection = z.infer<typeof TracingRunSelectionSchema>;

export const RunsQuerySchema = nullMeansAbsent(
  z.object({
    session: z
      .array(uuid)
      .max(MAX_ID_LIST)
      .optional()
      .describe(`Project ids (at most ${MAX_ID_LIST}); all projects of the workspace when absent`),
    id: z.array(uuid).max(50).optional().describe("At most 50 run ids"),
    trace: uuid.optional(),
    parent_run: uuid.optional(),
    run_type: z.string().optional(),
    is_root: z
      .boolean()
      .nullish()
      .transform((v) => v ?? undefined),
    error: z
      .boolean()
      .nullish()
      .transform((v) => v ?? undefined)
      .describe("true: only failed runs; false: only runs without error"),
    start_time: runTimeBound.optional().describe("Runs that started at or after this time"),
    end_time: runTimeBound.optional().describe("Runs that started at or before this time"),
    filter: z
      .string()
      .nullish()
      .transform((v) => v ?? undefined),
    trace_filter: z
      .string()
      .nullish()
      .transform((v) => v ?? undefined)
      .describe("Applied to the root run of each trace"),
    tree_filter: z
      .string()
      .nullish()
      .transform((v) => v ?? undefined)
      .describe("Matches traces holding any run that passes"),
    query: z.string().optional().describe("Full-text search, as the filter search(query)"),
    select: z.array(z.string()).optional(),
    limit: z.number().int().min(1).default(100),
    cursor: z
      .string()
      .nullish()
      .transform((v) => v ?? undefined),
    order: z.enum(["asc", "desc"]).default("desc"),
  }),
).openapi("RunsQuery");
export type RunsQuery = z.output<typeof RunsQuerySchema>;

export const RunsPageSchema = z.object({
  runs: z.array(TracingRunSelectionSchema),
  cursors: z.object({ next: z.string().nullable(), prev: z.null() }),
});
export type RunsPage = z.infer<typeof RunsPageSchema>;

export const RunsQueryValidateSchema = z
  .object({ filter: z.string().nullish(), trace_filter: z.string().nullish(), tree_filter: z.string().nullish() })
  .openapi("RunsQueryValidate");
export const FilterValidationSchema = z
  .object({
    valid: z.boolean(),
    errors: z.array(z.object({ field: z.string(), message: z.string(), position: z.number() })),
  })
  .openapi("FilterValidation");

export const TracingInfoSchema = z
  .object({
    version: z.string(),
    platform_version: z.string(),
    batch_ingest_config: z.object({
      use_multipart_endpoint: z.boolean(),
      size_limit: z.number(),
      size_limit_bytes: z.number(),
      scale_up_qsize_trigger: z.number(),
      scale_up_nthreads_limit: z.number(),
      scale_down_nempty_trigger: z.number(),
    }),
    instance_flags: z.record(z.string(), z.boolean()),
  })
  .openapi("TracingInfo");

const nullableNumber = z.number().nullable();
/** LangSmith's `RunStats` (`POST /runs/stats`); latencies in seconds. */
export const RunStatsSchema = z
  .object({
    run_count: z.number(),
    latency_p50: nullableNumber,
    latency_p99: nullableNumber,
    latency_avg: nullableNumber,
    first_token_p50: nullableNumber,
    first_token_p99: nullableNumber,
    total_tokens: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    median_tokens: nullableNumber,
    prompt_tokens_p50: nullableNumber,
    completion_tokens_p50: nullableNumber,
    tokens_p99: nullableNumber,
    prompt_tokens_p99: nullableNumber,
    completion_tokens_p99: nullableNumber,
    last_run_start_time: z.string().nullable(),
    feedback_stats: z.record(z.string(), z.object({ n: z.number(), avg: nullableNumber })),
    run_facets: z.array(z.unknown()),
    error_rate: nullableNumber,
    streaming_rate: nullableNumber,
    total_cost: nullableNumber,
    prompt_cost: nullableNumber,
    completion_cost: nullableNumber,
    cost_p50: nullableNumber,
    cost_p99: nullableNumber,
  })
  .openapi("RunStats");
export type RunStats = z.infer<typeof RunStatsSchema>;
