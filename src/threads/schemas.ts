import { z } from "@hono/zod-openapi";
import { MAX_ID_LENGTH, MAX_JSON_FIELD_BYTES, MAX_NAME_LENGTH, MAX_TTL_MINUTES } from "../core/limits.ts";
import { Identifier, JsonFilter, JsonGraphData, JsonObject, WellFormedString } from "../core/schemas.ts";
import { MAX_FILTER_CONDITIONS } from "../db/json-filter.ts";

const ThreadStatusSchema = z.enum(["idle", "busy", "interrupted", "error"]);
export type ThreadStatus = z.infer<typeof ThreadStatusSchema>;

/** What a thread's TTL does when it expires: delete the thread, or compact it to its latest checkpoint. */
const TtlStrategySchema = z.enum(["delete", "keep_latest"]);
export type TtlStrategy = z.infer<typeof TtlStrategySchema>;

/**
 * A thread, run or assistant id: any GUID (as the Python server accepts), lower-cased so that one id
 * always names the same Durable Object and index row.
 */
export const Id = z.guid().transform((id) => id.toLowerCase());

export const ThreadIdParam = z.object({ thread_id: Id });
export const CheckpointIdParam = ThreadIdParam.extend({ checkpoint_id: Identifier });

/** `ttl` as the SDK sends it (`{ttl, strategy}`) or as a bare number of minutes. */
export const TtlInput = z
  .union([
    z.number().positive().max(MAX_TTL_MINUTES),
    z.object({
      ttl: z.number().positive().max(MAX_TTL_MINUTES).describe("minutes after the last update"),
      strategy: TtlStrategySchema.default("delete"),
    }),
  ])
  .transform((ttl) => (typeof ttl === "number" ? { ttl, strategy: "delete" as const } : ttl));

/** A TTL as a thread keeps it: `ttl` minutes after the last update. */
export type TtlSetting = z.output<typeof TtlInput>;

export const CheckpointSelectorSchema = z
  .object({
    checkpoint_id: WellFormedString.max(MAX_ID_LENGTH).nullish(),
    checkpoint_ns: z.string().max(MAX_NAME_LENGTH).optional(),
    checkpoint_map: JsonObject.nullish(),
  })
  .openapi("CheckpointConfig");

/** Which checkpoint an operation targets: the latest when `checkpoint_id` is absent. */
export type CheckpointSelector = z.output<typeof CheckpointSelectorSchema>;

export const ThreadSchema = z
  .object({
    thread_id: z.uuid(),
    created_at: z.string(),
    updated_at: z.string(),
    state_updated_at: z.string(),
    metadata: JsonObject,
    status: ThreadStatusSchema,
    config: JsonObject,
    values: JsonObject,
    interrupts: z.record(z.string(), z.array(z.unknown())),
    error: z.string().nullable(),
    ttl: z
      .object({ strategy: TtlStrategySchema, ttl_minutes: z.number(), expires_at: z.string() })
      .nullable()
      .optional(),
  })
  .openapi("Thread");

export type ThreadJson = z.output<typeof ThreadSchema>;

const CheckpointRefSchema = z
  .object({
    thread_id: z.string(),
    checkpoint_ns: z.string(),
    checkpoint_id: z.string().nullable(),
    checkpoint_map: JsonObject.nullable(),
  })
  .openapi("Checkpoint");

export type CheckpointRef = z.output<typeof CheckpointRefSchema>;

export const ThreadStateSchema = z
  .object({
    values: z.unknown(),
    next: z.array(z.string()),
    tasks: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        path: z.array(z.unknown()),
        error: z.string().nullable(),
        interrupts: z.array(z.unknown()),
        checkpoint: JsonObject.nullable(),
        // A subgraph task's own state: a ThreadState (see ThreadTaskJson), documented as any JSON.
        state: z.unknown().nullable(),
        result: z.unknown(),
      }),
    ),
    metadata: JsonObject,
    created_at: z.string().nullable(),
    checkpoint: CheckpointRefSchema.nullable(),
    parent_checkpoint: CheckpointRefSchema.nullable(),
    checkpoint_id: z.string().nullable(),
    parent_checkpoint_id: z.string().nullable(),
    interrupts: z.array(z.unknown()),
  })
  .openapi("ThreadState");

type ThreadStateWire = z.output<typeof ThreadStateSchema>;

/**
 * A task as the thread builds it. The schema leaves `state` as any JSON, since the OpenAPI document
 * does not spell the recursion out; inside, it is the subgraph's ThreadStateJson, or null.
 */
export interface ThreadTaskJson extends Omit<ThreadStateWire["tasks"][number], "state"> {
  state: ThreadStateJson | null;
}

/** A thread's state at a checkpoint: ThreadStateSchema's output, with its tasks' states typed. */
export interface ThreadStateJson extends Omit<ThreadStateWire, "tasks"> {
  tasks: ThreadTaskJson[];
}

export const ThreadCreateSchema = z
  .object({
    thread_id: Id.optional().describe("Generated when absent"),
    metadata: JsonObject.default({}).describe(`At most ${MAX_JSON_FIELD_BYTES} bytes of JSON (422 above)`),
    if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
    graph_id: Identifier.optional().describe("Kept in metadata.graph_id"),
    supersteps: z
      .array(
        z.object({
          updates: z
            .array(
              z.object({
                values: JsonGraphData.optional(),
                command: z
                  .object({
                    update: JsonGraphData.optional(),
                    goto: JsonGraphData.optional(),
                    resume: JsonGraphData.optional(),
                  })
                  .nullish(),
                as_node: Identifier,
              }),
            )
            .min(1),
        }),
      )
      .optional()
      .describe("State updates applied in order to prepopulate the thread; needs a graph"),
    ttl: TtlInput.optional().describe(
      "The thread's TTL; absent: the deployment's default (langgraph.json checkpointer.ttl default_ttl and strategy), or none",
    ),
  })
  .openapi("ThreadCreate");

export const ThreadPatchSchema = z
  .object({
    metadata: JsonObject.optional().describe(
      `Merged into the thread's metadata, which holds at most ${MAX_JSON_FIELD_BYTES} bytes of JSON (422 above)`,
    ),
    ttl: TtlInput.nullish().describe("A new TTL, or null to remove it"),
  })
  .openapi("ThreadPatch");

const filterNote = `Containment: every key must match (nested objects recursively); at most ${MAX_FILTER_CONDITIONS} values`;

export const ThreadCountSchema = z
  .object({
    metadata: JsonFilter.optional().describe(filterNote),
    values: JsonFilter.optional().describe(filterNote),
    status: ThreadStatusSchema.optional(),
  })
  .openapi("ThreadCountRequest");

export const THREAD_FIELDS = ThreadSchema.keyof().options;

export const ThreadSearchSchema = ThreadCountSchema.extend({
  ids: z.array(Id).max(1000).optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  select: z.array(z.enum(THREAD_FIELDS)).min(1).optional().describe("Only these fields in each thread"),
}).openapi("ThreadSearchRequest");

export const ThreadPruneSchema = z
  .object({
    thread_ids: z.array(Id).min(1).max(1000),
    strategy: TtlStrategySchema.default("delete"),
  })
  .openapi("ThreadPruneRequest");

export const StateUpdateSchema = z
  .object({
    values: JsonGraphData.optional(),
    as_node: Identifier.optional(),
    checkpoint_id: WellFormedString.max(MAX_ID_LENGTH).optional(),
    checkpoint: CheckpointSelectorSchema.optional(),
  })
  .openapi("ThreadStateUpdate");

export const StateCheckpointSchema = z
  .object({ checkpoint: CheckpointSelectorSchema, subgraphs: z.boolean().default(false) })
  .openapi("ThreadStateCheckpointRequest");

/** The SDK sends `before` as a config object; older clients as a bare checkpoint id. */
const BeforeInput = z
  .union([
    Identifier,
    z.object({ configurable: z.object({ checkpoint_id: Identifier }).loose() }).loose(),
    z.object({ checkpoint_id: Identifier }).loose(),
  ])
  .transform((before): string => {
    if (typeof before === "string") return before;
    const holder = ("configurable" in before ? before.configurable : before) as { checkpoint_id: string };
    return holder.checkpoint_id;
  });

export const HistoryRequestSchema = z
  .object({
    limit: z.number().int().min(1).max(1000).default(10),
    before: BeforeInput.nullish(),
    metadata: JsonFilter.nullish().describe("Only checkpoints whose metadata contains these keys"),
    checkpoint: CheckpointSelectorSchema.nullish().describe("History of this checkpoint namespace (subgraph)"),
  })
  .openapi("ThreadHistoryRequest");

export const HistoryQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  before: Identifier.optional(),
});
