import { chunked } from "../core/batches.ts";
import type { SqlStore } from "../db/sql.ts";
import { IDS_PER_STATEMENT, placeholders } from "../db/sql-batch.ts";

/**
 * The feedback copy a trace shard keeps beside its runs: what filters (`feedback_key`,
 * `feedback_score`, see filter/compile.ts) and `feedback_stats` read, in the same SQLite as the
 * runs so both are plain subqueries. The full feedback record lives in D1 (feedback/service.ts).
 */

export const FEEDBACK_TABLE = `CREATE TABLE IF NOT EXISTS feedback (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  score REAL,
  value TEXT
)`;
export const FEEDBACK_INDEX = "CREATE INDEX IF NOT EXISTS feedback_by_run ON feedback (run_id, key)";

/** One feedback row as the shard keeps it; `value` is JSON text or null. */
export type ShardFeedback = { id: string; run_id: string; key: string; score: number | null; value: string | null };

/** Per key: count, average and standard deviation of the numeric scores, and counts of string values. */
export type FeedbackStats = Record<
  string,
  { n: number; avg: number | null; stdev: number | null; values: Record<string, number> }
>;

export function createFeedbackTable(sql: SqlStore): void {
  sql.run(FEEDBACK_TABLE);
  sql.run(FEEDBACK_INDEX);
}

export function putFeedback(sql: SqlStore, rows: ShardFeedback[]): void {
  sql.transaction(() => {
    for (const row of rows)
      sql.run(
        "INSERT OR REPLACE INTO feedback (id, run_id, key, score, value) VALUES (?, ?, ?, ?, ?)",
        row.id,
        row.run_id,
        row.key,
        row.score,
        row.value,
      );
  });
}

export function deleteFeedback(sql: SqlStore, id: string): void {
  sql.run("DELETE FROM feedback WHERE id = ?", id);
}

/** `feedback_stats` of each of `runIds` that has feedback. */
export function feedbackStatsOf(sql: SqlStore, runIds: string[]): Map<string, FeedbackStats> {
  const stats = new Map<string, FeedbackStats>();
  for (const chunk of chunked(runIds, IDS_PER_STATEMENT)) {
    const rows = sql.all<{ run_id: string; key: string; score: number | null; value: string | null }>(
      `SELECT run_id, key, score, value FROM feedback WHERE run_id IN (${placeholders(chunk.length)})`,
      ...chunk,
    );
    const grouped = new Map<string, Map<string, { scores: number[]; n: number; values: Record<string, number> }>>();
    for (const row of rows) {
      const keys = grouped.get(row.run_id) ?? grouped.set(row.run_id, new Map()).get(row.run_id)!;
      const entry = keys.get(row.key) ?? keys.set(row.key, { scores: [], n: 0, values: {} }).get(row.key)!;
      entry.n++;
      if (row.score !== null) entry.scores.push(row.score);
      const value = row.value === null ? null : (JSON.parse(row.value) as unknown);
      // LangSmith breaks down string values only.
      if (typeof value === "string") entry.values[value] = (entry.values[value] ?? 0) + 1;
    }
    for (const [runId, keys] of grouped) {
      const perKey: FeedbackStats = {};
      for (const [key, { scores, n, values }] of keys) {
        const avg = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null;
        const stdev =
          avg === null ? null : Math.sqrt(scores.reduce((sum, s) => sum + (s - avg) ** 2, 0) / scores.length);
        perKey[key] = { n, avg, stdev, values };
      }
      stats.set(runId, perKey);
    }
  }
  return stats;
}
