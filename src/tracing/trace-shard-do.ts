import { DurableObject } from "cloudflare:workers";
import { durableObjectSql } from "../db/sql.ts";
import { type ExportPage, type ExportPageQuery, readExportPage } from "./export-page.ts";
import { parseModelPrices, type RunAttachment } from "./run-input.ts";
import { projectRun } from "./run-projection.ts";
import { type ShardRunStats, shardRunStats } from "./run-stats.ts";
import type { RunPatch, RunPost } from "./schemas.ts";
import { deleteFeedback, feedbackStatsOf, putFeedback, type ShardFeedback } from "./shard-feedback.ts";
import { type RefusedPatch, ShardRuns, type StoredTracedRun, type TracedRunQuery } from "./shard-runs.ts";

/**
 * One trace shard: the runs of one (workspace, project, UTC day of start_time). A shard is exactly
 * one Hive partition of a bulk export. Storage and derivation live in ShardRuns, export pages in
 * export-page.ts; this class only owns the SQLite handle and exposes them over RPC.
 */
export class TraceShardDO extends DurableObject<Env> {
  readonly #sql = durableObjectSql(this.ctx.storage);
  readonly #runs = new ShardRuns(this.#sql, parseModelPrices(this.env.MODEL_PRICES));

  /** Posts, patches and attachments of one ingest request, for runs of this shard's project; answers the patches it refused. */
  ingest(sessionId: string, posts: RunPost[], patches: RunPatch[], attachments: RunAttachment[] = []): RefusedPatch[] {
    const refused = this.#runs.ingest(posts, patches, sessionId);
    for (const attachment of attachments) this.#runs.putAttachment(attachment);
    return refused;
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
    const feedback_stats = feedbackStatsOf(this.#sql, [id]).get(id) ?? null;
    return run && JSON.stringify({ ...run, feedback_stats, attachments: this.#runs.attachmentsOf(id) });
  }

  /** Stores (or replaces) the shard's copy of feedback on its runs. */
  putFeedback(rows: ShardFeedback[]): void {
    putFeedback(this.#sql, rows);
  }

  deleteFeedback(id: string): void {
    deleteFeedback(this.#sql, id);
  }

  /** Sums and value lists of the runs a query matches (its limit and cursor are ignored). */
  stats(query: Omit<TracedRunQuery, "limit" | "after">): ShardRunStats {
    const { where, params } = this.#runs.conditions(query);
    return shardRunStats(this.#sql, where, params);
  }

  /** One page of export rows, column by column (a few strings and byte arrays cross the RPC). */
  exportPage(query: ExportPageQuery): ExportPage {
    return readExportPage(this.#sql, query);
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
      this.#sql,
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

/** The Durable Object name of a shard; `startTime` is the run's ISO start time. */
export function traceShardName(workspaceId: string, projectId: string, startTime: string): string {
  return `${workspaceId}/${projectId}/${startTime.slice(0, 10)}`;
}
