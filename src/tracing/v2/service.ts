import { badRequest } from "../../core/errors.ts";
import type { WorkspaceBindings } from "../../workspace/database.ts";
import type { TracesDatabase } from "../directory.ts";
import { type QueryBudget, queryRuns } from "../query.ts";
import type { RunsQuery, TracingRun } from "../schemas.ts";
import type { TraceShardDO } from "../trace-shard-do.ts";
import type { RunSelectField, RunsQueryV2, RunV2 } from "./schemas.ts";

/**
 * `/api/v2/runs`: the v1 runs query and read, answered in the v2 shape (upper-case enums,
 * `project_id`, `latency_seconds`, previews, `items`/`next_cursor`).
 */

/** A run as the v1 reads answer it whole (the shard adds its feedback's stats). */
export type V1Run = Omit<TracingRun, "s3_urls" | "feedback_stats"> & { feedback_stats?: TracingRun["feedback_stats"] };

const DAY_MS = 24 * 60 * 60 * 1000;
/** Runs served per page, whatever `page_size` asks: the SDKs follow `next_cursor`. */
const MAX_PAGE = 100;
/** Characters of a preview (`inputs_preview`, `error_preview`…). */
const PREVIEW_CHARS = 200;

const preview = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
};

/** How each field is read from a v1 run; fields this server does not track are null. */
const FIELDS: {
  [F in RunSelectField]: (run: V1Run, attachments: Record<string, string> | null) => RunV2[Lowercase<F>];
} = {
  ID: (r) => r.id,
  NAME: (r) => r.name,
  RUN_TYPE: (r) => r.run_type.toUpperCase(),
  STATUS: (r) => r.status.toUpperCase(),
  START_TIME: (r) => r.start_time,
  END_TIME: (r) => r.end_time,
  LATENCY_SECONDS: (r) => r.latency,
  FIRST_TOKEN_TIME: (r) => r.first_token_time,
  ERROR: (r) => r.error,
  ERROR_PREVIEW: (r) => preview(r.error),
  EXTRA: (r) => r.extra,
  METADATA: (r) => (r.extra?.metadata as Record<string, unknown> | undefined) ?? null,
  EVENTS: (r) => r.events,
  INPUTS: (r) => r.inputs,
  INPUTS_PREVIEW: (r) => preview(r.inputs),
  OUTPUTS: (r) => r.outputs,
  OUTPUTS_PREVIEW: (r) => preview(r.outputs),
  MANIFEST: () => null,
  PARENT_RUN_IDS: (r) => r.parent_run_ids,
  PROJECT_ID: (r) => r.session_id,
  TRACE_ID: (r) => r.trace_id,
  THREAD_ID: (r) => r.thread_id,
  DOTTED_ORDER: (r) => r.dotted_order,
  IS_ROOT: (r) => r.is_root,
  REFERENCE_EXAMPLE_ID: (r) => r.reference_example_id,
  REFERENCE_DATASET_ID: () => null,
  TOTAL_TOKENS: (r) => r.total_tokens,
  PROMPT_TOKENS: (r) => r.prompt_tokens,
  COMPLETION_TOKENS: (r) => r.completion_tokens,
  TOTAL_COST: (r) => r.total_cost,
  PROMPT_COST: (r) => r.prompt_cost,
  COMPLETION_COST: (r) => r.completion_cost,
  PROMPT_TOKEN_DETAILS: () => null,
  COMPLETION_TOKEN_DETAILS: () => null,
  PROMPT_COST_DETAILS: () => null,
  COMPLETION_COST_DETAILS: () => null,
  PRICE_MODEL_ID: () => null,
  TAGS: (r) => r.tags,
  APP_PATH: (r) => r.app_path,
  ATTACHMENTS: (_r, attachments) => attachments,
  THREAD_EVALUATION_TIME: () => null,
  IS_IN_DATASET: () => false,
  LAST_QUEUED_AT: () => null,
  SHARE_URL: () => null,
  FEEDBACK_STATS: (run) => run.feedback_stats ?? null,
};

/** The selected fields of a run under their lower-case names; `id` only when nothing is selected. */
export function v2Run(
  run: V1Run,
  selects: RunSelectField[] | undefined,
  attachments: Record<string, string> | null = null,
): RunV2 {
  const fields: RunSelectField[] = selects?.length ? [...new Set(selects)] : ["ID"];
  // FIELDS reads each field with the type RunV2Schema declares for it.
  return Object.fromEntries(fields.map((field) => [field.toLowerCase(), FIELDS[field](run, attachments)])) as RunV2;
}

/** The v1 query a v2 body asks for. */
export function v1Query(body: RunsQueryV2, now = Date.now()): RunsQuery {
  if (body.reference_dataset_id !== undefined)
    throw badRequest("reference_dataset_id is not supported: this server keeps no datasets; send project_ids");
  if (!body.project_ids?.length) throw badRequest("project_ids is required (at least one tracing project id)");
  const examples = body.reference_examples?.length
    ? `in(reference_example_id, ${JSON.stringify(body.reference_examples)})`
    : undefined;
  return {
    session: body.project_ids,
    id: body.ids,
    trace: body.trace_id,
    run_type: body.run_type?.toLowerCase(),
    is_root: body.is_root,
    error: body.has_error,
    start_time: body.min_start_time ?? new Date(now - DAY_MS).toISOString(),
    end_time: body.max_start_time ?? new Date(now).toISOString(),
    filter: body.filter?.trim() && examples ? `and(${body.filter}, ${examples})` : (examples ?? body.filter),
    trace_filter: body.trace_filter,
    tree_filter: body.tree_filter,
    limit: Math.min(body.page_size, MAX_PAGE),
    cursor: body.cursor,
    order: "desc",
  };
}

export async function queryRunsV2(
  db: TracesDatabase,
  shards: DurableObjectNamespace<TraceShardDO>,
  workspaceId: string,
  body: RunsQueryV2,
  budget: QueryBudget,
  directory: WorkspaceBindings,
): Promise<{ items: Record<string, unknown>[]; next_cursor: string | null }> {
  const page = await queryRuns(db, shards, workspaceId, v1Query(body), budget, directory);
  return {
    items: page.runs.map((run) => v2Run(run as V1Run, body.selects)),
    next_cursor: page.cursors.next,
  };
}
