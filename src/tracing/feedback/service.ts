import { and, desc, eq, gt, inArray, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import { chunked } from "../../core/batches.ts";
import { invalid, notFound } from "../../core/errors.ts";
import { type TraceFeedbackRow, traceFeedback } from "../../db/schema.ts";
import { IDS_PER_STATEMENT } from "../../db/sql-batch.ts";
import { armPartition, type WorkspaceBindings } from "../../workspace/database.ts";
import type { PartitionAlarm } from "../../workspace/workspace-do.ts";
import { locateRun, type TracesDatabase, tracesDatabase } from "../directory.ts";
import { getProject } from "../projects/service.ts";
import type { ShardFeedback } from "../shard-feedback.ts";
import { type TraceShardDO, traceShardName } from "../trace-shard-do.ts";
import type { Feedback, FeedbackCreate, FeedbackListOptions, FeedbackUpdate } from "./schemas.ts";

/**
 * Feedback on traced runs, per workspace. Its traces partition holds each feedback whole (reads, lists, pages); the
 * shard of its run holds a copy of what filters and `feedback_stats` need (shard-feedback.ts), so
 * those stay subqueries beside the runs. A feedback whose run is not stored yet and that names no
 * `session_id` + `start_time` waits there unlocated, and joins its run's shard when the run is posted
 * (`placeWaiting`, called by ingestion) or when the feedback is next read or updated.
 */

/**
 * Workspaces this isolate found with no feedback waiting, and when. Ingestion trusts that for
 * NONE_WAITING_TTL_MS instead of reading the partition on every batch (feedback rarely arrives before its run).
 * Feedback created here clears the entry at once; feedback created in another isolate inside the
 * window is placed by the traces partition's alarm (`placeWaitingFeedback`), or when it is next read.
 */
const noneWaitingSince = new Map<string, number>();
const NONE_WAITING_TTL_MS = 10_000;
const NONE_WAITING_MAX_ENTRIES = 10_000;

/** How far back the minute sweep looks for waiting feedback, and how many it places per tick. */
const SWEEP_WINDOW_MS = 24 * 60 * 60 * 1000;
const SWEEP_BATCH = 100;

const waitingFeedback = () => and(isNull(traceFeedback.day), isNotNull(traceFeedback.runId));

function toFeedback(row: TraceFeedbackRow): Feedback {
  return {
    id: row.id,
    run_id: row.runId,
    trace_id: row.traceId,
    session_id: row.projectId,
    key: row.key,
    score: row.score,
    value: row.value ?? null,
    comment: row.comment,
    correction: row.correction ?? null,
    feedback_source: row.feedbackSource,
    feedback_group_id: row.feedbackGroupId,
    comparative_experiment_id: row.comparativeExperimentId,
    created_at: row.createdAt,
    modified_at: row.modifiedAt,
  };
}

const shardCopy = (row: TraceFeedbackRow): ShardFeedback => ({
  id: row.id,
  run_id: row.runId ?? "",
  key: row.key,
  score: row.score,
  value: row.value === null || row.value === undefined ? null : JSON.stringify(row.value),
});

/** What feedback reaches: the workspace's partitions (feedback, projects, run locator) and the trace shards. */
export type FeedbackEnv = WorkspaceBindings & { TRACE_SHARD: DurableObjectNamespace<TraceShardDO> };

export class FeedbackService {
  private readonly db: TracesDatabase;
  private readonly shards: DurableObjectNamespace<TraceShardDO>;

  /** `db`: the workspace's traces partition, given by the partition itself when it runs this (its alarm). */
  constructor(
    private readonly env: FeedbackEnv,
    private readonly workspaceId: string,
    db?: TracesDatabase,
  ) {
    this.db = db ?? tracesDatabase(env, workspaceId);
    this.shards = env.TRACE_SHARD;
  }

  #shard(row: { projectId: string | null; day: string | null }) {
    return row.projectId && row.day
      ? this.shards.getByName(traceShardName(this.workspaceId, row.projectId, row.day))
      : null;
  }

  /** Where the feedback's run lives: the run's index entry, else the project and start time it names. */
  async #locate(input: {
    run_id?: string | null;
    session_id?: string | null;
    start_time?: string | null;
  }): Promise<{ projectId: string | null; day: string | null }> {
    if (input.run_id) {
      const location = await locateRun(this.env, this.workspaceId, input.run_id);
      if (location) return location;
    }
    if (!input.session_id) return { projectId: null, day: null };
    // Another workspace's project is not found here.
    await getProject(this.db, this.workspaceId, input.session_id);
    // Its shard is not known before the run is: a busy day splits by the trace's root time and id
    // (splits.ts), so the feedback waits for its run and is placed when the run is posted.
    return { projectId: input.session_id, day: null };
  }

  /**
   * Creates a feedback, or replaces the one of this workspace with the same id: the SDKs retry
   * requests and resend multipart batches, so a repeat must not fail.
   */
  async create(input: FeedbackCreate): Promise<Feedback> {
    if (!input.run_id && !input.session_id) throw invalid("Feedback needs a run_id or a session_id");
    const id = input.id ?? crypto.randomUUID();
    const location = await this.#locate(input);
    const now = new Date().toISOString();
    const values = {
      runId: input.run_id ?? null,
      traceId: input.trace_id ?? null,
      projectId: location.projectId,
      day: location.day,
      key: input.key,
      score: input.score ?? null,
      value: input.value ?? null,
      comment: input.comment ?? null,
      correction: input.correction ?? null,
      feedbackSource: input.feedback_source ?? { type: "api", metadata: {} },
      feedbackGroupId: input.feedback_group_id ?? null,
      comparativeExperimentId: input.comparative_experiment_id ?? null,
      modifiedAt: now,
    };
    const previous = await this.#row(id);
    const row = await this.db
      .insert(traceFeedback)
      .values({ id, workspaceId: this.workspaceId, createdAt: now, ...values })
      .onConflictDoUpdate({ target: [traceFeedback.workspaceId, traceFeedback.id], set: values })
      .returning()
      .get();
    // A replaced feedback may have named another run: its old copy goes.
    if (previous?.runId && (previous.runId !== row.runId || previous.day !== row.day))
      await this.#shard(previous)?.deleteFeedback(id);
    if (row.runId) await this.#shard(row)?.putFeedback([shardCopy(row)]);
    // Waiting for its run: the partition's alarm looks for it (placeWaitingFeedback).
    if (row.runId && !row.day)
      await armPartition(this.env, { workspaceId: this.workspaceId, kind: "traces" }, Date.now() + WAITING_RECHECK_MS);
    if (row.runId && !row.day) noneWaitingSince.delete(this.workspaceId);
    return toFeedback(row);
  }

  async #row(id: string): Promise<TraceFeedbackRow | undefined> {
    return this.db
      .select()
      .from(traceFeedback)
      .where(and(eq(traceFeedback.workspaceId, this.workspaceId), eq(traceFeedback.id, id)))
      .get();
  }

  /** The feedback's row, placed in its run's shard if the run has arrived since. */
  async #settled(id: string): Promise<TraceFeedbackRow> {
    const row = await this.#row(id);
    if (!row) throw notFound(`Feedback ${id} not found`);
    if (!row.runId || row.day) return row;
    const location = await locateRun(this.env, this.workspaceId, row.runId);
    if (!location) return row;
    const placed = await this.db
      .update(traceFeedback)
      .set(location)
      .where(and(eq(traceFeedback.workspaceId, this.workspaceId), eq(traceFeedback.id, id)))
      .returning()
      .get();
    if (!placed) throw notFound(`Feedback ${id} not found`);
    await this.#shard(placed)?.putFeedback([shardCopy(placed)]);
    return placed;
  }

  /**
   * Places the waiting feedback of runs just posted into their shards. Usually no read at all (see
   * noneWaitingSince); else one read of the waiting index, then one per 90 runs.
   */
  async placeWaiting(runIds: string[]): Promise<void> {
    const checkedAt = noneWaitingSince.get(this.workspaceId);
    if (checkedAt !== undefined && Date.now() - checkedAt < NONE_WAITING_TTL_MS) return;
    const any = await this.db
      .select({ id: traceFeedback.id })
      .from(traceFeedback)
      .where(and(eq(traceFeedback.workspaceId, this.workspaceId), waitingFeedback()))
      .limit(1)
      .get();
    if (!any) {
      if (noneWaitingSince.size >= NONE_WAITING_MAX_ENTRIES) noneWaitingSince.clear();
      noneWaitingSince.set(this.workspaceId, Date.now());
      return;
    }
    for (const ids of chunked(runIds, IDS_PER_STATEMENT)) {
      const waiting = await this.db
        .select({ id: traceFeedback.id })
        .from(traceFeedback)
        .where(
          and(
            eq(traceFeedback.workspaceId, this.workspaceId),
            inArray(traceFeedback.runId, ids),
            isNull(traceFeedback.day),
          ),
        )
        .all();
      for (const { id } of waiting) await this.#settled(id);
    }
  }

  async get(id: string): Promise<Feedback> {
    return toFeedback(await this.#settled(id));
  }

  /** Sets the fields the update names; null and absent fields stay as they are. */
  async update(id: string, update: FeedbackUpdate): Promise<Feedback> {
    await this.#settled(id);
    const set: Partial<TraceFeedbackRow> = { modifiedAt: new Date().toISOString() };
    if (update.score !== undefined && update.score !== null) set.score = update.score;
    if (update.value !== undefined && update.value !== null) set.value = update.value;
    if (update.comment !== undefined && update.comment !== null) set.comment = update.comment;
    if (update.correction !== undefined && update.correction !== null) set.correction = update.correction;
    const row = await this.db
      .update(traceFeedback)
      .set(set)
      .where(and(eq(traceFeedback.workspaceId, this.workspaceId), eq(traceFeedback.id, id)))
      .returning()
      .get();
    if (!row) throw notFound(`Feedback ${id} not found`);
    if (row.runId) await this.#shard(row)?.putFeedback([shardCopy(row)]);
    // Waiting for its run: the partition's alarm looks for it (placeWaitingFeedback).
    if (row.runId && !row.day)
      await armPartition(this.env, { workspaceId: this.workspaceId, kind: "traces" }, Date.now() + WAITING_RECHECK_MS);
    if (row.runId && !row.day) noneWaitingSince.delete(this.workspaceId);
    return toFeedback(row);
  }

  async delete(id: string): Promise<void> {
    const row = await this.db
      .delete(traceFeedback)
      .where(and(eq(traceFeedback.workspaceId, this.workspaceId), eq(traceFeedback.id, id)))
      .returning()
      .get();
    if (!row) throw notFound(`Feedback ${id} not found`);
    await this.#shard(row)?.deleteFeedback(id);
  }

  /** Newest first, filtered by runs, keys, source types and projects; offset paging. */
  async list(options: FeedbackListOptions): Promise<Feedback[]> {
    const where: SQL[] = [eq(traceFeedback.workspaceId, this.workspaceId)];
    if (options.run) where.push(inArray(traceFeedback.runId, options.run));
    if (options.key) where.push(inArray(traceFeedback.key, options.key));
    if (options.session) where.push(inArray(traceFeedback.projectId, options.session));
    if (options.source)
      where.push(inArray(sql<string>`json_extract(${traceFeedback.feedbackSource}, '$.type')`, options.source));
    const rows = await this.db
      .select()
      .from(traceFeedback)
      .where(and(...where))
      .orderBy(desc(traceFeedback.createdAt), desc(traceFeedback.id))
      .limit(options.limit)
      .offset(options.offset)
      .all();
    return rows.map(toFeedback);
  }
}

/** How soon the traces partition's alarm looks again while feedback waits for its run. */
const WAITING_RECHECK_MS = 60_000;

/** Feedback of the last day still waiting for its run (at most `limit`). */
function waitingSince(db: TracesDatabase, now: number, limit: number) {
  const since = new Date(now - SWEEP_WINDOW_MS).toISOString();
  return db
    .select({ id: traceFeedback.id })
    .from(traceFeedback)
    .where(and(waitingFeedback(), gt(traceFeedback.createdAt, since)))
    .limit(limit)
    .all();
}

/**
 * The workspace's traces partition's alarm: places feedback whose run has arrived since, whichever
 * isolate took the run, so filters and feedback_stats see it within a minute even when no one reads
 * the feedback (at most SWEEP_BATCH per run), and looks again while feedback of the last day waits.
 */
export const placeWaitingFeedback: PartitionAlarm = async (env, partition, db) => {
  const now = Date.now();
  const service = new FeedbackService(env, partition.workspaceId, db);
  // Deleted since the read: nothing to place.
  for (const { id } of await waitingSince(db, now, SWEEP_BATCH)) await service.get(id).catch(() => null);
  return (await waitingSince(db, now, 1)).length ? now + WAITING_RECHECK_MS : null;
};
