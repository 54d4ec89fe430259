import { DurableObject } from "cloudflare:workers";
import { TRACE_SHARD_CAP_BYTES, TRACE_SHARD_SPLIT_CALLS_PER_SECOND } from "../core/limits.ts";
import { durableObjectSql } from "../db/sql.ts";
import { type ExportPage, type ExportPageQuery, readExportPage } from "./export-page.ts";
import { parseModelPrices, type RunAttachment } from "./run-input.ts";
import { projectRun } from "./run-projection.ts";
import { type ShardRunStats, shardRunStats } from "./run-stats.ts";
import type { RunPatch, RunPost } from "./schemas.ts";
import { deleteFeedback, feedbackStatsOf, putFeedback, type ShardFeedback } from "./shard-feedback.ts";
import { type RefusedPatch, ShardRuns, type StoredTracedRun, type TracedRunQuery } from "./shard-runs.ts";

/**
 * One trace shard: the runs of one split (splits.ts) of a (workspace, project, UTC day of
 * start_time). The splits of a day together are one Hive partition of a bulk export. Storage and derivation live in ShardRuns, export pages in
 * export-page.ts; this class only owns the SQLite handle and exposes them over RPC.
 */
export class TraceShardDO extends DurableObject<Env> {
  readonly #sql = durableObjectSql(this.ctx.storage);
  #shardRuns: ShardRuns | undefined;

  /** The shard's runs; its tables are made on first use (again after a purge). */
  get #runs(): ShardRuns {
    this.#shardRuns ??= new ShardRuns(this.#sql, parseModelPrices(this.env.MODEL_PRICES));
    return this.#shardRuns;
  }

  /** The SQLite handle, once the shard's tables exist. */
  get #tables() {
    void this.#runs;
    return this.#sql;
  }

  /** Deletes everything the shard stores (its project was deleted), so its storage is reclaimed. */
  async purge(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.#shardRuns = undefined;
    this.#expiresAt = undefined;
  }

  /** When the shard's retention ends, as last armed by this instance. */
  #expiresAt: number | undefined;

  /**
   * Arms the alarm at the end of the shard's retention (its last ingest plus its project's tier,
   * `traceExpiry`). The alarm is the expiry's only record; a tier change reaches the shard with its
   * next ingest.
   */
  #expireAt(at: number): void {
    if (this.#expiresAt === at) return;
    this.#expiresAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  /** Retention over: the shard deletes its whole storage (reads then find nothing; the storage is reclaimed). */
  async alarm(): Promise<void> {
    await this.purge();
  }

  /** Ingest calls in the current second (`#second`, epoch s): how busy the shard is. */
  #second = 0;
  #calls = 0;

  /**
   * Posts, patches and attachments of one ingest request, for runs of this shard's project. Past
   * `capBytes` the shard takes only patches (they finish runs it holds): its posts and attachments
   * are refused whole (`full` says why), so it never meets the 10 GB cap where every write fails.
   * Answers the refused patches, the patched runs it does not hold (their patches wait for their
   * posts), the shard's size after the writes, and whether it took more than
   * `splitCalls` ingest calls this second: by size or by load, the Worker splits the project-day.
   */
  ingest(
    sessionId: string,
    posts: RunPost[],
    patches: RunPatch[],
    attachments: RunAttachment[] = [],
    bounds: { capBytes: number; splitCalls: number; expiresAt?: number } = {
      capBytes: TRACE_SHARD_CAP_BYTES,
      splitCalls: TRACE_SHARD_SPLIT_CALLS_PER_SECOND,
    },
  ): ShardIngestAnswer {
    if (bounds.expiresAt !== undefined) this.#expireAt(bounds.expiresAt);
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.#second) [this.#second, this.#calls] = [second, 0];
    this.#calls += 1;
    const before = this.ctx.storage.sql.databaseSize;
    const full = before >= bounds.capBytes && (posts.length > 0 || attachments.length > 0);
    const refused = this.#runs.ingest(full ? [] : posts, patches, sessionId);
    if (!full) for (const attachment of attachments) this.#runs.putAttachment(attachment);
    const waiting = patches.length
      ? this.#tables
          .all<{ id: string }>(
            "SELECT id FROM pending_patches WHERE id IN (SELECT value FROM json_each(?))",
            JSON.stringify(patches.map((patch) => patch.id)),
          )
          .map((row) => row.id)
      : [];
    return {
      refused,
      waiting,
      full: full
        ? `the trace shard holding this run's trace holds ${before} bytes, at its cap of ${bounds.capBytes} (TRACE_SHARD_CAP_BYTES): it takes no new runs or attachments, only patches; a backfill of one project-day past that size is refused`
        : null,
      bytes: this.ctx.storage.sql.databaseSize,
      busy: this.#calls > bounds.splitCalls,
    };
  }

  /** One attachment of a run, or null. */
  attachment(runId: string, name: string): { mime_type: string; data: Uint8Array } | null {
    return this.#runs.attachment(runId, name);
  }

  /** A run's trace_id and dotted_order, when it has one (the lineage of children posted without theirs). */
  lineage(id: string): { trace_id: string; dotted_order: string } | null {
    return this.#runs.lineage(id);
  }

  // Reads answer JSON text: runs hold arbitrary JSON, which RPC's types cannot express, and the
  // routes send the text on without decoding it again.

  /** The run as JSON (`StoredTracedRun`), or null. */
  get(id: string): string | null {
    const run = this.#runs.get(id);
    const feedback_stats = feedbackStatsOf(this.#tables, [id]).get(id) ?? null;
    return run && JSON.stringify({ ...run, feedback_stats, attachments: this.#runs.attachmentsOf(id) });
  }

  /** Stores (or replaces) the shard's copy of feedback on its runs. */
  putFeedback(rows: ShardFeedback[]): void {
    putFeedback(this.#tables, rows);
  }

  deleteFeedback(id: string): void {
    deleteFeedback(this.#tables, id);
  }

  /** Sums and value lists of the runs a query matches (its limit and cursor are ignored). */
  stats(query: Omit<TracedRunQuery, "limit" | "after">): ShardRunStats {
    const { where, params } = this.#runs.conditions(query);
    return shardRunStats(this.#tables, where, params);
  }

  /** One page of export rows, column by column (a few strings and byte arrays cross the RPC). */
  exportPage(query: ExportPageQuery): ExportPage {
    return readExportPage(this.#tables, query);
  }

  /**
   * One page of runs as JSON `ShardRunsPage`: at most `limit` runs and at most `maxBytes` characters
   * of run JSON, so the answer stays far below the 32 MiB RPC cap. The first run comes whatever its
   * size only with `atLeastOne`: a Worker reading many shards at once gives each a small share, and
   * one oversized run per shard would add up. A page that stopped early names the first run it left
   * out (`next`), so the Worker knows how far its merge of the shards is complete.
   */
  query(query: TracedRunQuery & { maxBytes: number; select?: string[]; atLeastOne?: boolean }): string {
    const texts: string[] = [];
    const runs: StoredTracedRun[] = [];
    let size = 0;
    let next: { start_time: string; id: string } | null = null;
    for (const run of this.#runs.rows(query)) {
      const text = JSON.stringify(query.select?.length ? projectRun(run, query.select) : run);
      if ((runs.length > 0 || query.atLeastOne === false) && size + text.length > query.maxBytes) {
        next = { start_time: run.start_time, id: run.id };
        break;
      }
      size += text.length;
      runs.push(run);
      texts.push(text);
    }
    const stats = feedbackStatsOf(
      this.#tables,
      runs.map((run) => run.id),
    );
    // The stats go in as the run's last field, without stringifying the run again.
    const withStats = runs.map(
      (run, i) =>
        `${texts[i].slice(0, -1)}${texts[i].length > 2 ? "," : ""}"feedback_stats":${JSON.stringify(stats.get(run.id) ?? null)}}`,
    );
    return `{"next":${JSON.stringify(next)},"sizes":${JSON.stringify(withStats.map((text) => text.length))},"runs":[${withStats.join(",")}]}`;
  }
}

/**
 * What a shard answers an ingest: the patches it refused, why it refused posts (or null), its size
 * in bytes, and whether it is busy (more ingest calls this second than the split rate).
 */
export type ShardIngestAnswer = {
  refused: RefusedPatch[];
  /** Patched runs this shard does not hold: their patches wait here for a post. */
  waiting: string[];
  full: string | null;
  bytes: number;
  busy: boolean;
};

/**
 * The Durable Object name of a shard. `split` is a split key (splits.ts): the UTC day for a
 * project-day's first shard (the name shards had before splits), `day/<generation>.<bucket>` beyond.
 */
export function traceShardName(workspaceId: string, projectId: string, split: string): string {
  return `${workspaceId}/${projectId}/${split}`;
}
