import { CHUNKS_SCHEMA, ChunkedTexts } from "../../db/chunked-text.ts";
import type { SqlStore } from "../../db/sql.ts";
import type { MultitaskStrategy, RunJson, RunKwargs, RunStatus } from "./types.ts";

/** An agent run as its thread keeps it: the API shape plus what scheduling and recovery need. */
export interface AgentRun extends RunJson {
  graphId: string;
  attempt: number;
  /** Not started before this time (`after_seconds`), ms since epoch. */
  notBefore: number;
  startedAt: string | null;
  endedAt: string | null;
  /** `/wait` and `/join` answer: the final values, or `{__error__}`; JSON text. */
  result: string | null;
  error: string | null;
  /** The custom-auth user (JSON); never part of the API's view of the run. */
  authUser: Record<string, unknown> | null;
  /** The wall-clock limit it was created with, ms (null: created before there was one). */
  timeoutMs: number | null;
  /** When it times out, ms since epoch: set at its first start and kept across restarts. */
  deadline: number | null;
}

interface AgentRunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  graph_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: string;
  kwargs: string;
  multitask_strategy: MultitaskStrategy;
  attempt: number;
  not_before: number;
  started_at: string | null;
  ended_at: string | null;
  result: string | null;
  error: string | null;
  auth_user: string | null;
  timeout_ms: number | null;
  deadline: number | null;
  [column: string]: string | number | null;
}

// WITHOUT ROWID: a row lives in its primary key's b-tree, so a write touches one row, not a row and
// its key's separate index entry (Cloudflare bills each). Tables made before keep their layout.
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    graph_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL,
    metadata TEXT NOT NULL,
    kwargs TEXT NOT NULL,
    multitask_strategy TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    not_before INTEGER NOT NULL,
    started_at TEXT,
    ended_at TEXT,
    result TEXT,
    error TEXT,
    auth_user TEXT,
    timeout_ms INTEGER,
    deadline INTEGER
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS runs_status_idx ON runs (status, not_before, created_at)",
  "CREATE INDEX IF NOT EXISTS runs_created_idx ON runs (created_at)",
  // The event log of resumable runs, replayed from `Last-Event-ID`.
  `CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID`,
  // kwargs, results and events too long for a row.
  CHUNKS_SCHEMA,
];

/** Columns added since the table was first made: threads created before them get them on first use. */
const ADDED_COLUMNS = ["timeout_ms INTEGER", "deadline INTEGER"];

const ACTIVE: RunStatus[] = ["pending", "running"];

/**
 * The thread's agent runs and the event log of resumable ones, in the Durable Object's SQLite.
 * (Trace runs live elsewhere: `tracing/`.)
 */
export class RunTable {
  #ready = false;
  #absent = false;
  readonly #texts: ChunkedTexts;

  constructor(private readonly sql: SqlStore) {
    this.#texts = new ChunkedTexts(sql);
  }

  /** Whether the thread has run tables; when it has, tables added since they were made are created. */
  #exists(): boolean {
    if (this.#ready) return true;
    // Only this table creates its tables, so "none yet" holds until #ensure (or a wipe) says otherwise.
    if (this.#absent) return false;
    if (this.sql.all("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'runs'").length === 0) {
      this.#absent = true;
      return false;
    }
    this.#ensure();
    return true;
  }

  #ensure(): void {
    if (this.#ready) return;
    for (const statement of SCHEMA) this.sql.run(statement);
    // Tables this call just created have every column already.
    const [table] = this.#absent
      ? []
      : this.sql.all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
    for (const column of ADDED_COLUMNS) {
      const name = column.split(" ")[0];
      if (table && !new RegExp(`\\b${name}\\b`).test(table.sql)) this.sql.run(`ALTER TABLE runs ADD COLUMN ${column}`);
    }
    this.#ready = true;
    this.#absent = false;
  }

  reset(): void {
    this.#ready = false;
    this.#absent = false;
  }

  /** Inserts the run; its kwargs (which hold its input) may be of any size the Worker accepted. */
  insert(run: AgentRun): void {
    this.#ensure();
    this.sql.transaction(() => this.#insert(run));
  }

  #insert(run: AgentRun): void {
    this.sql.run(
      `INSERT INTO runs (run_id, thread_id, assistant_id, graph_id, created_at, updated_at, status, metadata, kwargs,
         multitask_strategy, attempt, not_before, started_at, ended_at, result, error, auth_user, timeout_ms, deadline)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      run.run_id,
      run.thread_id,
      run.assistant_id,
      run.graphId,
      run.created_at,
      run.updated_at,
      run.status,
      JSON.stringify(run.metadata),
      this.#texts.store(run.run_id, "kwargs", JSON.stringify(run.kwargs)),
      run.multitask_strategy,
      run.attempt,
      run.notBefore,
      run.startedAt,
      run.endedAt,
      run.result === null ? null : this.#texts.store(run.run_id, "result", run.result),
      run.error,
      run.authUser ? JSON.stringify(run.authUser) : null,
      run.timeoutMs,
      run.deadline,
    );
  }

  update(run: AgentRun): void {
    this.sql.transaction(() =>
      this.sql.run(
        `UPDATE runs SET status = ?, updated_at = ?, attempt = ?, started_at = ?, ended_at = ?, result = ?, error = ?,
         deadline = ? WHERE run_id = ?`,
        run.status,
        run.updated_at,
        run.attempt,
        run.startedAt,
        run.endedAt,
        run.result === null ? null : this.#texts.store(run.run_id, "result", run.result),
        run.error,
        run.deadline,
        run.run_id,
      ),
    );
  }

  get(runId: string): AgentRun | undefined {
    if (!this.#exists()) return undefined;
    const row = this.sql.all<AgentRunRow>("SELECT * FROM runs WHERE run_id = ?", runId)[0];
    return row && this.#fromRow(row);
  }

  /** Newest first, as the Python server lists them. */
  list(options: { limit: number; offset: number; status?: RunStatus }): AgentRun[] {
    if (!this.#exists()) return [];
    const where = options.status ? "WHERE status = ?" : "";
    const params = options.status ? [options.status] : [];
    return this.sql
      .all<AgentRunRow>(
        `SELECT * FROM runs ${where} ORDER BY created_at DESC, run_id DESC LIMIT ? OFFSET ?`,
        ...params,
        options.limit,
        options.offset,
      )
      .map((row) => this.#fromRow(row));
  }

  active(): AgentRun[] {
    if (!this.#exists()) return [];
    return this.sql
      .all<AgentRunRow>("SELECT * FROM runs WHERE status IN ('pending', 'running') ORDER BY created_at, run_id")
      .map((row) => this.#fromRow(row));
  }

  /** Whether any run is pending or running, without reading the runs. */
  hasActive(): boolean {
    if (!this.#exists()) return false;
    return this.sql.all("SELECT 1 FROM runs WHERE status IN ('pending', 'running') LIMIT 1").length > 0;
  }

  /** The next run to start: pending, due, oldest first. */
  nextDue(now: number): AgentRun | undefined {
    if (!this.#exists()) return undefined;
    const row = this.sql.all<AgentRunRow>(
      "SELECT * FROM runs WHERE status = 'pending' AND not_before <= ? ORDER BY created_at, run_id LIMIT 1",
      now,
    )[0];
    return row && this.#fromRow(row);
  }

  /** When the earliest delayed pending run becomes due. */
  nextNotBefore(): number | null {
    if (!this.#exists()) return null;
    const row = this.sql.all<{ at: number | null }>(
      "SELECT MIN(not_before) AS at FROM runs WHERE status = 'pending'",
    )[0];
    return row?.at ?? null;
  }

  delete(runId: string): void {
    if (!this.#exists()) return;
    this.sql.transaction(() => {
      this.sql.run("DELETE FROM run_events WHERE run_id = ?", runId);
      this.#texts.deleteRun(runId);
      this.sql.run("DELETE FROM runs WHERE run_id = ?", runId);
    });
  }

  appendEvent(runId: string, seq: number, event: string, data: string): void {
    this.#ensure();
    this.sql.transaction(() =>
      this.sql.run(
        "INSERT OR REPLACE INTO run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)",
        runId,
        seq,
        event,
        this.#texts.store(runId, `event:${seq}`, data),
      ),
    );
  }

  eventsAfter(runId: string, afterSeq: number): { seq: number; event: string; data: string }[] {
    if (!this.#exists()) return [];
    return this.sql
      .all<{ seq: number; event: string; data: string }>(
        "SELECT seq, event, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq",
        runId,
        afterSeq,
      )
      .map((row) => ({ ...row, data: this.#texts.load(runId, `event:${row.seq}`, row.data) }));
  }

  lastSeq(runId: string): number {
    if (!this.#exists()) return -1;
    const row = this.sql.all<{ seq: number | null }>(
      "SELECT MAX(seq) AS seq FROM run_events WHERE run_id = ?",
      runId,
    )[0];
    return row?.seq ?? -1;
  }

  #fromRow(row: AgentRunRow): AgentRun {
    return fromRow({
      ...row,
      kwargs: this.#texts.load(row.run_id, "kwargs", row.kwargs),
      result: row.result === null ? null : this.#texts.load(row.run_id, "result", row.result),
    });
  }
}

export const isActive = (status: RunStatus) => ACTIVE.includes(status);

export function runJson(run: AgentRun): RunJson {
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    created_at: run.created_at,
    updated_at: run.updated_at,
    status: run.status,
    metadata: run.metadata,
    kwargs: run.kwargs,
    multitask_strategy: run.multitask_strategy,
  };
}

function fromRow(row: AgentRunRow): AgentRun {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    graphId: row.graph_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status: row.status,
    metadata: JSON.parse(row.metadata),
    kwargs: JSON.parse(row.kwargs) as RunKwargs,
    multitask_strategy: row.multitask_strategy,
    attempt: row.attempt,
    notBefore: row.not_before,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    result: row.result,
    error: row.error,
    authUser: row.auth_user ? JSON.parse(row.auth_user) : null,
    timeoutMs: row.timeout_ms ?? null,
    deadline: row.deadline ?? null,
  };
}
