import { z } from "@hono/zod-openapi";
import { MAX_ID_LENGTH, MAX_JSON_FIELD_BYTES } from "../../core/limits.ts";
import { JsonObject, JsonSetting, jsonWithin } from "../../core/schemas.ts";
import { isoTime } from "../schemas.ts";

/**
 * The wire shapes of feedback on traced runs (`/api/v1/feedback`), as the `langsmith` SDKs send
 * and read them. The SDKs send every absent field as null, so null means "not given" throughout.
 */

const Id = z.uuid().transform((id) => id.toLowerCase());
/** Booleans are stored as 1 and 0, as LangSmith scores them. */
const Score = z
  .union([z.number(), z.boolean()])
  .nullish()
  .transform((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v));
const Key = z.string().trim().min(1).max(MAX_ID_LENGTH);
/** A feedback's value or correction: its row also holds the comment and the source, under 2 MB. */
const FeedbackJson = jsonWithin(JsonSetting, MAX_JSON_FIELD_BYTES);
/** `{type: "api" | "app" | "model", metadata: {...}}` */
const FeedbackSource = z
  .object({
    type: z.string().max(MAX_ID_LENGTH).nullish(),
    metadata: jsonWithin(JsonObject, MAX_JSON_FIELD_BYTES).nullish(),
  })
  .passthrough();

export const FeedbackCreateSchema = z
  .object({
    id: Id.nullish(),
    run_id: Id.nullish(),
    trace_id: Id.nullish(),
    key: Key,
    score: Score,
    value: FeedbackJson.nullish(),
    comment: z.string().max(100_000).nullish(),
    correction: FeedbackJson.nullish(),
    feedback_source: FeedbackSource.nullish(),
    feedback_group_id: Id.nullish(),
    comparative_experiment_id: Id.nullish(),
    /** The project of the run (LangSmith's SmithDB locates runs by it), or of run-less feedback. */
    session_id: Id.nullish(),
    /** The run's start time: with `session_id` it names the run's shard before the run arrives. */
    start_time: isoTime.nullish(),
  })
  .openapi("FeedbackCreate");
export type FeedbackCreate = z.output<typeof FeedbackCreateSchema>;

export const FeedbackUpdateSchema = z
  .object({
    score: Score,
    value: FeedbackJson.nullish(),
    comment: z.string().max(100_000).nullish(),
    correction: FeedbackJson.nullish(),
  })
  .openapi("FeedbackUpdate");
export type FeedbackUpdate = z.output<typeof FeedbackUpdateSchema>;

/** A feedback as the API returns it (LangSmith `FeedbackSchema`). */
export const FeedbackSchema = z
  .object({
    id: z.string(),
    run_id: z.string().nullable(),
    trace_id: z.string().nullable(),
    session_id: z.string().nullable(),
    key: z.string(),
    score: z.number().nullable(),
    value: z.unknown(),
    comment: z.string().nullable(),
    correction: z.unknown(),
    feedback_source: z.record(z.string(), z.unknown()).nullable(),
    feedback_group_id: z.string().nullable(),
    comparative_experiment_id: z.string().nullable(),
    created_at: z.string(),
    modified_at: z.string(),
  })
  .openapi("Feedback");
export type Feedback = z.infer<typeof FeedbackSchema>;

export const FeedbackIdParams = z.object({ feedback_id: Id });

/** One value or a repeated query parameter (at most 20 values: D1 binds at most 100 per statement). */
const many = <T extends z.ZodType>(item: T) =>
  z
    .union([item, z.array(item).max(20)])
    .optional()
    .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]));

export const FeedbackListQuery = z.object({
  run: many(Id).describe("Run ids (repeat the parameter for several)"),
  key: many(Key).describe("Feedback keys"),
  source: many(z.string().max(MAX_ID_LENGTH)).describe("feedback_source types: api, app, model"),
  session: many(Id).describe("Project ids"),
  limit: z.coerce.number().int().min(1).max(100).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
export type FeedbackListOptions = z.output<typeof FeedbackListQuery>;
