import { z } from "@hono/zod-openapi";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from "../core/limits.ts";
import { Identifier, JsonFilter } from "../core/schemas.ts";
import { RunCreateSchema } from "../threads/runs/schemas.ts";
import { Id } from "../threads/schemas.ts";

const JsonObject = z.record(z.string(), z.unknown());
const Schedule = z.string().min(1).max(MAX_NAME_LENGTH);

/** The run-create fields a cron stores and replays on every run. */
const PAYLOAD_FIELDS = {
  input: true,
  command: true,
  config: true,
  context: true,
  webhook: true,
  interrupt_before: true,
  interrupt_after: true,
  multitask_strategy: true,
  stream_mode: true,
  stream_subgraphs: true,
  stream_resumable: true,
  durability: true,
  checkpoint_id: true,
  checkpoint: true,
  if_not_exists: true,
  after_seconds: true,
  metadata: true,
} as const;

export const CronPayloadSchema = RunCreateSchema.pick(PAYLOAD_FIELDS);
/** What a cron's runs are created with, besides its assistant. */
export type CronPayload = z.infer<typeof CronPayloadSchema>;

declare module "../db/schema.ts" {
  /** The `payload` column of a cron row holds a `CronPayload`. */
  interface CronPayloadColumn extends CronPayload {}
}

/** The stored part of a cron request: its run-create fields, those it gives. */
export function payloadOf(body: CronPayload): CronPayload {
  const payload: CronPayload = {};
  for (const field of CronPayloadSchema.keyof().options) copyDefined(body, payload, field);
  return payload;
}

function copyDefined<K extends keyof CronPayload>(from: CronPayload, to: CronPayload, field: K): void {
  if (from[field] !== undefined) to[field] = from[field];
}

const CronFields = {
  schedule: Schedule.describe("5-field cron expression"),
  timezone: Identifier.default("UTC").describe("IANA time zone"),
  end_time: z.iso.datetime({ offset: true }).nullish(),
  enabled: z.boolean().default(true),
  on_run_completed: z.enum(["delete", "keep"]).nullish().describe("Stateless crons: keep or delete each run's thread"),
  user_id: z.string().max(MAX_ID_LENGTH).nullish(),
};

export const CronCreateSchema = RunCreateSchema.omit({ on_completion: true, on_disconnect: true })
  .extend(CronFields)
  .openapi("CronCreate");
export type CronCreate = z.infer<typeof CronCreateSchema>;

export const CronPatchSchema = RunCreateSchema.omit({ assistant_id: true, on_completion: true, on_disconnect: true })
  .partial()
  .extend({
    schedule: Schedule.optional(),
    timezone: Identifier.optional(),
    end_time: z.iso.datetime({ offset: true }).nullish(),
    enabled: z.boolean().optional(),
    on_run_completed: z.enum(["delete", "keep"]).nullish(),
    user_id: z.string().max(MAX_ID_LENGTH).nullish(),
  })
  .openapi("CronPatch");
export type CronPatch = z.infer<typeof CronPatchSchema>;

export const CronSchema = z
  .object({
    cron_id: z.string(),
    assistant_id: z.string(),
    thread_id: z.string().nullable(),
    schedule: z.string(),
    timezone: z.string(),
    end_time: z.string().nullable(),
    enabled: z.boolean(),
    on_run_completed: z.enum(["delete", "keep"]).nullable(),
    user_id: z.string().nullable(),
    payload: JsonObject,
    metadata: JsonObject,
    next_run_date: z.string().nullable(),
    disabled_reason: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Cron");
export type Cron = z.infer<typeof CronSchema>;

export const CronCountSchema = z
  .object({
    assistant_id: z.string().max(MAX_ID_LENGTH).nullish(),
    thread_id: Id.nullish(),
    enabled: z.boolean().nullish(),
    metadata: JsonFilter.nullish(),
  })
  .openapi("CronCountRequest");
export type CronCount = z.infer<typeof CronCountSchema>;

export const CronSearchSchema = CronCountSchema.extend({
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z
    .enum(["cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"])
    .default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  select: z.array(z.enum(CronSchema.keyof().options)).min(1).optional(),
}).openapi("CronSearchRequest");

export const CronIdParam = z.object({ cron_id: Id });
