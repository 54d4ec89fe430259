import type { Feedback } from "../../../../src/tracing/feedback/schemas.ts";
import type { TracerSession } from "../../../../src/tracing/projects/schemas.ts";
import type {
  RunStats,
  RunsPage,
  RunsQuery as ServerRunsQuery,
  TracingRun,
  TracingRunSelection,
} from "../../../../src/tracing/schemas.ts";
import { ApiError, api } from "../../api.ts";
import { isPlainObject } from "../../json-input.ts";

/**
 * The tracing API's shapes (LangSmith-compatible, under /api/v1): the server's own types, inferred
 * from its zod schemas, so a server change that breaks this section fails the console's type check.
 * Type-only imports: esbuild erases them, no server code reaches the bundle.
 */
export type { Feedback } from "../../../../src/tracing/feedback/schemas.ts";
export type { TracerSession } from "../../../../src/tracing/projects/schemas.ts";
export type { RunStats, RunsPage } from "../../../../src/tracing/schemas.ts";

/**
 * A traced run as `/runs/query` pages hold it (fields optional under `select`); `/runs/{id}` answers
 * every field, with the run's attachments in `s3_urls`. Latency is in seconds.
 */
export type TracedRun = TracingRunSelection & Pick<TracingRun, "s3_urls">;

/** The body of `/runs/query` and `/runs/stats`: every field may be left out. */
export type RunsQuery = Partial<ServerRunsQuery>;

/** The columns the runs table shows: a page stays small (no inputs, outputs or events). */
export const TABLE_SELECT = [
  "name",
  "run_type",
  "status",
  "start_time",
  "end_time",
  "latency",
  "total_tokens",
  "total_cost",
  "error",
  "parent_run_id",
];

export const listProjects = (signal?: AbortSignal) =>
  api<TracerSession[]>("/api/v1/sessions", { query: { limit: 100 }, signal });

export const getProject = (id: string, signal?: AbortSignal) =>
  api<TracerSession>(`/api/v1/sessions/${encodeURIComponent(id)}`, { signal });

export const queryRuns = (body: RunsQuery, signal?: AbortSignal) =>
  api<RunsPage>("/api/v1/runs/query", { method: "POST", body, signal });

export const runStats = (body: RunsQuery, signal?: AbortSignal) =>
  api<RunStats>("/api/v1/runs/stats", { method: "POST", body, signal });

export const getRun = (id: string, signal?: AbortSignal) =>
  api<TracedRun>(`/api/v1/runs/${encodeURIComponent(id)}`, { signal });

export const listFeedback = (runId: string, signal?: AbortSignal) =>
  api<Feedback[]>("/api/v1/feedback", { query: { run: runId, limit: 100 }, signal });

/** A trace holds at most this many runs on screen; beyond it the page says so. */
export const MAX_TRACE_RUNS = 2000;

/** Every run of a trace, in execution order (the API pages by 100). */
export async function loadTrace(traceId: string, signal?: AbortSignal): Promise<{ runs: TracedRun[]; more: boolean }> {
  const runs: TracedRun[] = [];
  let cursor: string | undefined;
  do {
    const page = await queryRuns({ trace: traceId, order: "asc", limit: 100, cursor }, signal);
    runs.push(...page.runs);
    cursor = page.cursors.next ?? undefined;
  } while (cursor && runs.length < MAX_TRACE_RUNS);
  return { runs, more: Boolean(cursor) };
}

/** Where the API's filter parser stopped: "Invalid filter at position N: …" (0-based). */
export function filterErrorPosition(error: unknown): number | undefined {
  if (!(error instanceof ApiError) || error.status !== 400) return undefined;
  const match = /Invalid filter at position (\d+)/.exec(error.message);
  return match ? Number(match[1]) : undefined;
}

/** The root run of the trace an Agent Server run produced (its runs carry metadata.run_id), if stored yet. */
export async function findAgentTrace(agentRunId: string, signal?: AbortSignal): Promise<TracedRun | undefined> {
  const filter = `and(eq(metadata_key, "run_id"), eq(metadata_value, ${JSON.stringify(agentRunId)}))`;
  const page = await queryRuns({ filter, is_root: true, limit: 1, select: ["name", "trace_id"] }, signal);
  return page.runs[0];
}

export const toNumber = (value: number | string | null | undefined): number | null => {
  if (value === null || value === undefined || value === "") return null;
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) ? n : null;
};

/** Seconds of a run: the API's latency, else end − start. */
export function runSeconds(run: Pick<TracedRun, "latency" | "start_time" | "end_time">): number | null {
  if (typeof run.latency === "number") return run.latency;
  if (!run.end_time) return null;
  const ms = Date.parse(run.end_time) - Date.parse(run.start_time);
  return Number.isFinite(ms) ? ms / 1000 : null;
}

/**
 * The Agent Server thread a run belongs to: its metadata.thread_id (the API's `thread_id` may also
 * come from session_id or conversation_id, which name no Agent Server thread).
 */
export function threadIdOf(run: Pick<TracedRun, "extra">): string | undefined {
  const metadata = run.extra?.metadata;
  const id = isPlainObject(metadata) ? metadata.thread_id : undefined;
  return typeof id === "string" && id ? id : undefined;
}
