import { z } from "@hono/zod-openapi";
import { ConfigSchema } from "../../assistants/schemas.ts";
import { MAX_ID_LENGTH } from "../../core/limits.ts";
import { Identifier, JsonGraphData, JsonObject, JsonSetting, Name } from "../../core/schemas.ts";
import { CheckpointSelectorSchema, Id } from "../schemas.ts";

/** The statuses of a run. */
export const RUN_STATUSES = ["pending", "running", "error", "success", "timeout", "interrupted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The stream modes a run may ask for. */
export const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "debug",
  "events",
  "custom",
  "tasks",
  "checkpoints",
  "tools",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

const StreamModeSchema = z.enum(STREAM_MODES);
const Breakpoints = z.union([z.literal("*"), z.array(Identifier)]);
const MultitaskStrategySchema = z.enum(["reject", "enqueue", "interrupt", "rollback"]);
export type MultitaskStrategy = z.infer<typeof MultitaskStrategySchema>;
const OnCompletion = z.enum(["delete", "keep"]);
const Durability = z.enum(["sync", "async", "exit"]);
/** The SDK's `_langsmithTracer`: which tracing project a run is traced into. */
const LangsmithTracer = z
  .object({ project_name: Name.min(1).optional(), example_id: z.string().max(MAX_ID_LENGTH).optional() })
  .nullish()
  .openapi({ description: "Trace this run into the named tracing project instead of the deployment's." });

/** Fields shared by every run-creating endpoint (the Agent Server's run body). */
export const RunCreateSchema = z
  .object({
    assistant_id: Identifier.describe("Assistant id or graph id"),
    input: JsonGraphData.optional(),
    command: z
      .object({ resume: JsonGraphData.optional(), update: JsonGraphData.optional(), goto: JsonGraphData.optional() })
      .nullish(),
    metadata: JsonObject.nullish(),
    config: ConfigSchema.nullish(),
    context: JsonSetting.optional(),
    checkpoint_id: Identifier.nullish(),
    checkpoint: CheckpointSelectorSchema.nullish(),
    stream_mode: z.union([StreamModeSchema, z.array(StreamModeSchema)]).nullish(),
    stream_subgraphs: z.boolean().nullish(),
    stream_resumable: z.boolean().nullish(),
    interrupt_before: Breakpoints.nullish(),
    interrupt_after: Breakpoints.nullish(),
    webhook: z.url({ protocol: /^https?$/ }).nullish(),
    multitask_strategy: MultitaskStrategySchema.nullish(),
    if_not_exists: z.enum(["create", "reject"]).nullish(),
    after_seconds: z
      .number()
      .min(0)
      .max(7 * 24 * 3600)
      .nullish(),
    on_disconnect: z.enum(["cancel", "continue"]).nullish(),
    on_completion: OnCompletion.nullish(),
    durability: Durability.nullish(),
    feedback_keys: z.array(Name).nullish(),
    langsmith_tracer: LangsmithTracer,
    checkpoint_during: z.boolean().nullish(),
  })
  .openapi("RunCreate");

/** A run request's own fields, as every run creator gives them (the API's `RunCreate`). */
export type RunCreate = z.infer<typeof RunCreateSchema>;

export const RunSchema = z
  .object({
    run_id: z.uuid(),
    thread_id: z.uuid(),
    assistant_id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    status: z.enum(RUN_STATUSES),
    metadata: JsonObject,
    kwargs: z
      .object({
        input: z.unknown(),
        command: z
          .object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() })
          .nullable(),
        config: JsonObject,
        context: z.unknown().describe("The run's context, as it was sent ({} when none)"),
        stream_mode: z.array(StreamModeSchema),
        subgraphs: z.boolean(),
        resumable: z.boolean(),
        interrupt_before: Breakpoints.nullable(),
        interrupt_after: Breakpoints.nullable(),
        webhook: z.string().nullable(),
        on_completion: OnCompletion.nullable(),
        durability: Durability.nullable(),
        langsmith_tracer: LangsmithTracer,
        // Copied `x-*` request headers and the user agent, for config.configurable.
        headers: z.record(z.string(), z.string()),
        protocol_stream: z
          .boolean()
          .optional()
          .describe("Started by a protocol v2 command: its events go to the thread's protocol event stream"),
      })
      .describe("What the run was created with"),
    multitask_strategy: MultitaskStrategySchema,
  })
  .openapi("Run");

export type RunJson = z.output<typeof RunSchema>;
/** Everything the run was created with, as the API reports it in `kwargs`. */
export type RunKwargs = RunJson["kwargs"];
export type RunCommand = NonNullable<RunKwargs["command"]>;

export const RunIdParams = z.object({ thread_id: Id, run_id: Id });
export const StatelessRunIdParams = z.object({ run_id: Id });

export const Truthy = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .optional()
  .transform((v) => v === "true" || v === "1" || v === "yes");

export const RunListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(RUN_STATUSES).optional(),
});

const CancelActionSchema = z.enum(["interrupt", "rollback"]);
export type CancelAction = z.infer<typeof CancelActionSchema>;

export const CancelQuery = z.object({
  wait: Truthy,
  action: CancelActionSchema.default("interrupt"),
});

export const JoinStreamQuery = z.object({
  cancel_on_disconnect: Truthy,
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
});

export const BulkCancelSchema = z
  .object({
    thread_id: Id.nullish(),
    run_ids: z.array(Id).min(1).max(100).nullish(),
    status: z.enum(["pending", "running", "all"]).nullish(),
  })
  .refine((body) => body.thread_id || body.run_ids || body.status, { message: "Give thread_id, run_ids or status" })
  .openapi("RunsCancel");
