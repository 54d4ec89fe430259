import { DurableObject } from "cloudflare:workers";
import { database } from "../db/client.ts";
import { deployment } from "../deployment/index.ts";
import type { LoadedGraph } from "../deployment/graphs.ts";
import { log } from "../observability/log.ts";
import { SqliteCheckpointSaver } from "./checkpointer.ts";
import { durableObjectSql, type SqlRow } from "../db/sql.ts";
import { StateCache } from "./state-cache.ts";
import { D1Store } from "../store/graph-store.ts";
import { toJsonObject } from "../db/serialize.ts";
import { RunManager, type RunHost, type TraceSink } from "./runs/run-manager.ts";
import { Ingestor } from "../tracing/ingest.ts";
import { tracedRunLimit } from "../tracing/run-size.ts";
import { waitingBody } from "./runs/waiting-body.ts";
import { jsonArrayStream, jsonStream } from "./runs/json-stream.ts";
import type { CancelAction, CreateRunInput, RunJson, RunStatus } from "./runs/types.ts";
import {
  bindGraph,
  checkpointConfig,
  checkpointRef,
  EMPTY_STATE,
  threadGraphConfig,
  pendingInterrupts,
  stateJson,
  unknownNode,
} from "./state.ts";
import { deleteThreadIndex, upsertThreadIndex } from "./thread-index.ts";
import { ThreadRecords, threadJson, ttlExpiry, type ThreadRecord } from "./thread-record.ts";
import {
  fail,
  ok,
  type CheckpointRef,
  type CheckpointSelector,
  type Outcome,
  type ThreadJson,
  type ThreadStateJson,
  type TtlSetting,
  type TtlStrategy,
} from "./types.ts";

export interface SuperstepUpdate {
  values?: unknown;
  command?: { update?: unknown; goto?: unknown; resume?: unknown };
  as_node: string;
}

export interface CreateThreadInput {
  threadId: string;
  workspaceId: string;
  metadata: Record<string, unknown>;
  ifExists: "raise" | "do_nothing";
  graphId?: string;
  supersteps?: { updates: SuperstepUpdate[] }[];
  ttl?: TtlSetting | null;
}

export interface UpdateStateInput {
  values: unknown;
  asNode?: string;
  checkpoint?: CheckpointSelector;
}

export interface HistoryInput {
  limit: number;
  before?: string;
  metadata?: Record<string, unknown>;
  checkpoint?: CheckpointSelector;
}

/** A page of another thread's storage, pushed by `copyTo`. */
export interface TablePage {
  table: string;
  /** CREATE TABLE / CREATE INDEX statements of the table, from the source's sqlite_master. */
  schema: string[];
  rows: SqlRow[];
}

/** Keeps a copy's RPC messages well under the 32 MiB limit. */
const COPY_PAGE_BYTES = 8 * 1024 * 1024;
const INDEX_RETRY_MS = 5_000;
/** How long run-driven index updates wait, so a quick run's start and end make one D1 write. */
const DEFERRED_INDEX_MS = 25;

const now = () => new Date().toISOString();

/** The DO cannot name a thread it does not hold; the Worker replaces this with the requested id. */
export const THREAD_NOT_FOUND = "Thread not found";

/**
 * One SQLite-backed Durable Object per thread: the thread record, its checkpoints and pending writes.
 * Named `<workspace id>:<thread id>`, so a thread is unreachable from any other workspace. The DO is
 * the source of truth and pushes every change to the D1 search index (retried by the alarm).
 */
export class ThreadDO extends DurableObject<Env> {
  readonly #sql = durableObjectSql(this.ctx.storage);
  readonly #records = new ThreadRecords(this.#sql);
  readonly #states = new StateCache();
  #saver = this.#newSaver();
  readonly #runs = new RunManager(this.#runHost(), this.#sql);

  // ---- thread resource ----

  create(input: CreateThreadInput): Promise<Outcome<ThreadJson>> {
    return this.#exclusive(async () => {
      const existing = this.#records.read();
      if (existing) {
        return input.ifExists === "do_nothing" ? ok(threadJson(existing)) : fail(409, `Thread ${input.threadId} already exists`);
      }
      const metadata = { ...input.metadata };
      if (input.graphId) metadata.graph_id = input.graphId;
      const at = now();
      const record: ThreadRecord = {
        threadId: input.threadId,
        workspaceId: input.workspaceId,
        createdAt: at,
        updatedAt: at,
        stateUpdatedAt: at,
        metadata,
        status: "idle",
        config: {},
        requestConfig: {},
        values: null,
        interrupts: {},
        error: null,
        ttl: input.ttl ?? null,
        indexDirty: false,
      };
      if (input.supersteps?.length) {
        const applied = await this.#applySupersteps(record, input.supersteps);
        if (!applied.ok) {
          await this.#wipe();
          return applied;
        }
      }
      this.#records.write(record);
      try {
        await upsertThreadIndex(database(this.env), record);
      } catch (error) {
        // Without its index row the thread would be invisible to search: undo rather than half-create.
        await this.#wipe();
        throw error;
      }
      await this.#scheduleAlarm(record);
      return ok(threadJson(record));
    });
  }

  /**
   * The thread for checks inside the Worker (metadata, status). Values above 1 MiB are read from the
   * checkpoint only with `oversizeValues` (they may outgrow one RPC result); without it they are `{}`.
   * A client gets the whole thread from `getBody`.
   */
  async get(options: { includeTtl?: boolean; oversizeValues?: boolean } = {}): Promise<Outcome<ThreadJson>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    if (record.valuesOversize && options.oversizeValues) await this.#loadOversizeValues(record);
    return ok(threadJson(record, options));
  }

  /** The whole thread as JSON bytes (see json-stream.ts): its values may be larger than one RPC result. */
  async getBody(options: { includeTtl?: boolean } = {}): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    return ok(await this.#threadBody(record, options));
  }

  async #threadBody(record: ThreadRecord, options: { includeTtl?: boolean } = {}): Promise<ReadableStream<Uint8Array>> {
    if (record.valuesOversize) await this.#loadOversizeValues(record);
    return jsonStream([JSON.stringify(threadJson(record, options))]);
  }

  /** Values too large for the thread row come from the latest checkpoint. */
  async #loadOversizeValues(record: ThreadRecord): Promise<void> {
    const graph = await this.#graph(record);
    if (graph) record.values = toJsonObject((await graph.getState(checkpointConfig(record.threadId))).values);
  }

  /** Patches the thread and answers with the whole patched thread as JSON bytes (see `getBody`). */
  patch(input: { metadata?: Record<string, unknown>; ttl?: TtlSetting | null }): Promise<Outcome<ReadableStream<Uint8Array>>> {
    return this.#exclusive(() => this.#patch(input));
  }

  delete(): Promise<Outcome<true>> {
    return this.#exclusive(() => this.#delete());
  }

  /** `delete` removes the thread; `keep_latest` keeps only the newest checkpoint of each namespace. */
  prune(strategy: TtlStrategy): Promise<Outcome<true>> {
    return this.#exclusive(() => this.#prune(strategy));
  }

  async #patch(input: { metadata?: Record<string, unknown>; ttl?: TtlSetting | null }): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    if (input.metadata) record.metadata = { ...record.metadata, ...input.metadata };
    if (input.ttl !== undefined) record.ttl = input.ttl;
    record.updatedAt = now();
    await this.#save(record);
    return ok(await this.#threadBody(record));
  }

  async #delete(): Promise<Outcome<true>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    await this.#runs.shutdown();
    // No index write of this thread may land after the delete below.
    await this.#pendingSync;
    await this.#activeSync;
    // Index first: if D1 fails the thread stays whole and the caller can retry.
    if (!record.temporary) await deleteThreadIndex(database(this.env), record.workspaceId, record.threadId);
    await this.#wipe();
    return ok(true);
  }

  async #prune(strategy: TtlStrategy): Promise<Outcome<true>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    if (strategy === "delete") return this.#delete();
    this.#saver.deleteAllExceptLatest(record.threadId);
    this.#states.clear();
    return ok(true);
  }

  // ---- state ----

  /** The state as JSON bytes (see json-stream.ts): a state may be larger than one RPC result. */
  async getState(input: { checkpoint?: CheckpointSelector; subgraphs?: boolean }): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const outcome = await this.#stateText(input);
    return outcome.ok ? ok(jsonStream([outcome.value])) : outcome;
  }

  /** The state as JSON text (see StateCache). */
  async #stateText(input: { checkpoint?: CheckpointSelector; subgraphs?: boolean }): Promise<Outcome<string>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    const graph = await this.#graph(record);
    if (!graph) return ok(JSON.stringify(EMPTY_STATE));
    const config = checkpointConfig(record.threadId, input.checkpoint);
    const [checkpointId] = this.#saver.checkpointIds(config, { limit: 1 });
    if (!checkpointId) {
      return input.checkpoint?.checkpoint_id
        ? fail(404, `Checkpoint ${input.checkpoint.checkpoint_id} not found in thread ${record.threadId}`)
        : ok(JSON.stringify(EMPTY_STATE));
    }
    const cacheable = !input.subgraphs && !input.checkpoint?.checkpoint_ns;
    // The latest state applies the checkpoint's pending writes; a state read by id (and history)
    // does not. Both renderings are cached, apart.
    const key = input.checkpoint?.checkpoint_id ? checkpointId : `latest:${checkpointId}`;
    const cached = cacheable ? this.#states.get(key) : undefined;
    if (cached) return ok(cached);
    const json = JSON.stringify(stateJson(await graph.getState(config, { subgraphs: input.subgraphs ?? false }), graph.graphId));
    if (cacheable) this.#states.set(key, json);
    return ok(json);
  }

  updateState(input: UpdateStateInput): Promise<Outcome<{ checkpoint: CheckpointRef | null }>> {
    return this.#exclusive(async () => {
      const record = this.#records.read();
      if (!record) return this.#notFound();
      if (record.status === "busy") return fail(409, "Thread is busy");
      const graphId = record.metadata.graph_id;
      if (typeof graphId !== "string") return fail(422, this.#noGraph(record));
      const graph = await this.#graph(record);
      if (!graph) return fail(422, `Graph "${graphId}" of thread ${record.threadId} is not deployed`);
      if (input.asNode) {
        const problem = unknownNode(graph, graphId, input.asNode);
        if (problem) return fail(422, problem);
      }
      let next: Awaited<ReturnType<LoadedGraph["updateState"]>>;
      try {
        next = await graph.updateState(checkpointConfig(record.threadId, input.checkpoint), input.values, input.asNode);
      } catch (error) {
        return fail(422, `Cannot update the state of thread ${record.threadId}: ${(error as Error).message}`);
      }
      await this.#refreshValues(record, graph);
      record.updatedAt = record.stateUpdatedAt = now();
      await this.#save(record);
      return ok({ checkpoint: checkpointRef(next) });
    });
  }

  /** History as a JSON array, newest first, in bytes (see json-stream.ts and StateCache). */
  async history(input: HistoryInput): Promise<Outcome<ReadableStream<Uint8Array>>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    const graph = await this.#graph(record);
    if (!graph) return ok(jsonArrayStream([]));
    const config = checkpointConfig(record.threadId, input.checkpoint);
    const options = {
      limit: input.limit,
      before: input.before ? { configurable: { checkpoint_id: input.before } } : undefined,
      filter: input.metadata,
    };
    if (input.checkpoint?.checkpoint_ns) {
      const states: ThreadStateJson[] = [];
      for await (const snapshot of graph.getStateHistory(config, options)) states.push(stateJson(snapshot, graph.graphId));
      return ok(jsonArrayStream(states.map((state) => JSON.stringify(state))));
    }
    // Root history: reuse the states already built; rebuild only the checkpoints not seen before.
    let ids: string[];
    try {
      ids = this.#saver.checkpointIds(config, options);
    } catch (error) {
      if (error instanceof RangeError) return fail(422, `Invalid history filter: ${error.message}`);
      throw error;
    }
    const found = new Map<string, string>();
    for (const id of ids) {
      const cached = this.#states.get(id);
      if (cached) found.set(id, cached);
    }
    const missing = ids.filter((id) => !found.has(id));
    const remember = (state: ThreadStateJson) => {
      const json = JSON.stringify(state);
      found.set(state.checkpoint_id!, json);
      this.#states.set(state.checkpoint_id!, json);
    };
    if (missing.length > 3) {
      for await (const snapshot of graph.getStateHistory(config, options)) remember(stateJson(snapshot, graph.graphId));
    } else {
      for (const id of missing) remember(stateJson(await graph.getState(checkpointConfig(record.threadId, { checkpoint_id: id })), graph.graphId));
    }
    return ok(jsonArrayStream(ids.flatMap((id) => found.get(id) ?? [])));
  }

  // ---- runs ----

  createRun(input: CreateRunInput): Promise<Outcome<{ run: RunJson }>> {
    return this.#exclusive(() => this.#runs.create(input));
  }

  /** Creates the run with a reader attached before it starts; `cancelOnDisconnect` for on_disconnect=cancel. */
  async createRunStream(
    input: CreateRunInput,
    cancelOnDisconnect: boolean,
  ): Promise<Outcome<{ run: RunJson; stream?: ReadableStream<Uint8Array> }>> {
    const onDisconnect = cancelOnDisconnect
      ? () => void this.#runs.cancel({ runIds: [input.runId], action: "interrupt" })
      : undefined;
    return this.#exclusive(() => this.#runs.create(input, { onDisconnect }));
  }

  /**
   * Creates the run and returns its `/wait` body: keep-alive newlines, then the result. One call, so
   * the result survives a stateless run's thread being deleted as soon as the run ends.
   */
  async createRunWait(input: CreateRunInput): Promise<Outcome<{ run: RunJson; body: ReadableStream<Uint8Array> }>> {
    const created = await this.#exclusive(() => this.#runs.create(input));
    if (!created.ok) return created;
    return ok({ run: created.value.run, body: this.joinRunBody(input.runId) });
  }

  joinRun(runId: string): Promise<Outcome<string>> {
    return this.#runs.join(runId);
  }

  /** The `/join` body: keep-alive newlines, then the result (or the run's disappearance) as JSON. */
  joinRunBody(runId: string): ReadableStream<Uint8Array> {
    const result = this.#runs.join(runId).then((outcome) =>
      outcome.ok ? outcome.value : JSON.stringify({ __error__: { error: "RunNotFound", message: outcome.detail } }),
    );
    return waitingBody(result);
  }

  streamRun(runId: string, options: { lastEventId?: number; cancelOnDisconnect?: boolean }): Outcome<ReadableStream<Uint8Array>> {
    if (!this.#records.read()) return this.#notFound();
    return this.#runs.stream(runId, options);
  }

  /** Every event of every run of the thread, from now (or after `lastEventId`) until the client leaves. */
  streamThread(lastEventId?: number): Outcome<ReadableStream<Uint8Array>> {
    if (!this.#records.read()) return this.#notFound();
    return ok(this.#runs.streams.subscribeThread(lastEventId));
  }

  /** A page of runs as a JSON array in bytes: several multi-MB runs outgrow one RPC result. */
  listRuns(options: { limit: number; offset: number; status?: RunStatus }): Outcome<ReadableStream<Uint8Array>> {
    if (!this.#records.read()) return this.#notFound();
    return ok(jsonArrayStream(this.#runs.list(options).map((run) => JSON.stringify(run))));
  }

  getRun(runId: string): Outcome<RunJson> {
    if (!this.#records.read()) return this.#notFound();
    return this.#runs.get(runId);
  }

  deleteRun(runId: string): Promise<Outcome<true>> {
    return this.#exclusive(async () => (this.#records.read() ? this.#runs.delete(runId) : this.#notFound()));
  }

  /**
   * Cancels runs and answers the first of them as it now stands (what cancelling one run answers),
   * never the whole list: several multi-MB runs would outgrow one RPC result.
   */
  async cancelRuns(request: {
    runIds?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
    wait?: boolean;
  }): Promise<Outcome<RunJson | null>> {
    return this.#exclusive(async () => {
      if (!this.#records.read()) return this.#notFound();
      const cancelled = await this.#runs.cancel(request);
      return cancelled.ok ? ok(cancelled.value[0] ?? null) : cancelled;
    });
  }

  // ---- copy ----

  /** Copies this thread, every checkpoint included, to a new thread in the same workspace. */
  copyTo(newThreadId: string): Promise<Outcome<ThreadJson>> {
    // Exclusive: no prune, update or delete of this thread interleaves with the export.
    return this.#exclusive(async () => {
      const record = this.#records.read();
      if (!record) return this.#notFound();
      const target = this.env.THREAD.get(this.env.THREAD.idFromName(`${record.workspaceId}:${newThreadId}`));
      const at = now();
      const copy: ThreadRecord = { ...record, threadId: newThreadId, createdAt: at, updatedAt: at, status: "idle", config: {}, requestConfig: {}, error: null, indexDirty: false };
      const begun = await target.importBegin(copy);
      if (!begun.ok) return begun;
      try {
        for (const page of this.#exportPages(record.threadId, newThreadId)) await target.importPage(page);
        return (await target.importFinish()) as Outcome<ThreadJson>;
      } catch (error) {
        await target.importAbort();
        throw error;
      }
    });
  }

  /** Undoes a copy that failed half way: the target holds nothing afterwards. */
  async importAbort(): Promise<void> {
    await this.#wipe();
  }

  async importBegin(record: ThreadRecord): Promise<Outcome<true>> {
    if (this.#records.read()) return fail(409, `Thread ${record.threadId} already exists`);
    this.#records.write({ ...record, indexDirty: true });
    return ok(true);
  }

  importPage(page: TablePage): void {
    this.#sql.transaction(() => {
      for (const statement of page.schema) this.#sql.run(statement.replace(/^CREATE (TABLE|INDEX|UNIQUE INDEX) /i, "CREATE $1 IF NOT EXISTS "));
      for (const row of page.rows) {
        const columns = Object.keys(row);
        this.#sql.run(
          `INSERT OR REPLACE INTO "${page.table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
          ...columns.map((c) => row[c]),
        );
      }
    });
  }

  /** The copy's thread, values above 1 MiB left out as in `get` (the copy route answers with `getBody`). */
  async importFinish(): Promise<Outcome<ThreadJson>> {
    const record = this.#records.read();
    if (!record) return this.#notFound();
    await this.#save(record);
    return ok(threadJson(record));
  }

  /** Rows of every storage table but the thread record, rewritten to the new thread id, in pages. */
  *#exportPages(threadId: string, newThreadId: string): Generator<TablePage> {
    // Checkpoint storage only: runs and their events belong to the original thread.
    const tables = this.#sql.all<{ name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')",
    );
    for (const { name, sql } of tables) {
      const indexes = this.#sql
        .all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", name)
        .map((r) => r.sql);
      const schema = [sql, ...indexes];
      let lastRowId = 0;
      for (;;) {
        // Few rows per read: a blob row holds up to 1 MiB, and the isolate has 128 MB.
        const rows = this.#sql.all(`SELECT rowid AS __rowid, * FROM "${name}" WHERE rowid > ? ORDER BY rowid LIMIT 16`, lastRowId);
        if (rows.length === 0) break;
        let page: SqlRow[] = [];
        let bytes = 0;
        for (const { __rowid, ...row } of rows) {
          lastRowId = Number(__rowid);
          if (row.thread_id === threadId) row.thread_id = newThreadId;
          if (typeof row.metadata === "string") row.metadata = row.metadata.replaceAll(`"thread_id":"${threadId}"`, `"thread_id":"${newThreadId}"`);
          bytes += Object.values(row).reduce<number>((sum, v) => sum + (v instanceof ArrayBuffer ? v.byteLength : String(v ?? "").length), 0);
          page.push(row);
          if (bytes >= COPY_PAGE_BYTES) {
            yield { table: name, schema, rows: page };
            page = [];
            bytes = 0;
          }
        }
        if (page.length) yield { table: name, schema, rows: page };
      }
    }
  }

  // ---- alarm: TTL and index retries ----

  override alarm(): Promise<void> {
    return this.#exclusive(() => this.#onAlarm());
  }

  async #onAlarm(): Promise<void> {
    this.#alarmAt = null; // This alarm has fired.
    const record = this.#records.read();
    if (!record) return;
    this.#runs.onAlarm();
    const expiry = ttlExpiry(record);
    if (record.ttl && expiry !== null && expiry <= Date.now() && !this.#runs.store.hasActive()) {
      log.info("thread ttl expired", { thread_id: record.threadId, strategy: record.ttl.strategy });
      if (record.ttl.strategy === "delete") {
        try {
          await this.#delete();
        } catch (error) {
          log.warn("thread ttl delete failed; will retry", { thread_id: record.threadId, error: String(error) });
          await this.ctx.storage.setAlarm(Date.now() + INDEX_RETRY_MS);
        }
        return;
      }
      this.#saver.deleteAllExceptLatest(record.threadId);
      this.#states.clear();
    }
    if (record.indexDirty) await this.#save(record);
    else await this.#scheduleAlarm(record);
  }

  // ---- internals ----

  #lock: Promise<unknown> = Promise.resolve();

  /**
   * Runs thread mutations one at a time. Input gates do not serialize across awaits, and a mutation
   * awaits D1 and graph code; without this a delete could interleave with a patch and the patch would
   * write the deleted thread back.
   */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#lock.then(work, work);
    this.#lock = result.catch(() => undefined);
    return result;
  }

  async #applySupersteps(record: ThreadRecord, supersteps: { updates: SuperstepUpdate[] }[]): Promise<Outcome<true>> {
    const graphId = record.metadata.graph_id;
    if (typeof graphId !== "string") return fail(422, this.#noGraph(record));
    const graph = await this.#graph(record);
    if (!graph) {
      return fail(422, `Graph "${graphId}" is not deployed (graphs: ${deployment.graphs.map((g) => g.id).join(", ")})`);
    }
    const steps = [];
    for (const [s, superstep] of supersteps.entries()) {
      const updates = [];
      for (const [u, update] of superstep.updates.entries()) {
        const where = `supersteps[${s}].updates[${u}]`;
        const problem = unknownNode(graph, graphId, update.as_node);
        if (problem) return fail(422, `${where}: ${problem}`);
        if (update.command && (update.command.goto !== undefined || update.command.resume !== undefined)) {
          return fail(422, `${where}: only command.update can be applied when creating a thread`);
        }
        updates.push({ values: update.command?.update ?? update.values ?? null, asNode: update.as_node });
      }
      steps.push({ updates });
    }
    try {
      await graph.bulkUpdateState(checkpointConfig(record.threadId), steps);
    } catch (error) {
      return fail(422, `Cannot apply supersteps to thread ${record.threadId}: ${(error as Error).message}`);
    }
    await this.#refreshValues(record, graph);
    return ok(true);
  }

  /** The workspace's long-term memory store, for the graph's nodes. */
  #store(): D1Store | undefined {
    const record = this.#records.read();
    return record ? new D1Store(this.env, record.workspaceId) : undefined;
  }

  async #graph(record: ThreadRecord): Promise<(LoadedGraph & { graphId: string }) | undefined> {
    const graphId = record.metadata.graph_id;
    if (typeof graphId !== "string") return undefined;
    const graph = await bindGraph(graphId, this.#saver, threadGraphConfig(record), new D1Store(this.env, record.workspaceId));
    return graph && Object.assign(graph, { graphId });
  }

  /** Copies the latest root state's values and pending interrupts onto the record. */
  async #refreshValues(record: ThreadRecord, graph: LoadedGraph): Promise<void> {
    const state = stateJson(await graph.getState(checkpointConfig(record.threadId)));
    record.values = (state.values ?? {}) as Record<string, unknown>;
    record.interrupts = pendingInterrupts(state);
  }

  /**
   * Persists the record, then brings the D1 index up to date (the alarm retries when D1 fails). The
   * record write happens before the first await: a caller may answer its client as soon as this
   * returns its promise, and let the index catch up.
   */
  async #save(record: ThreadRecord, options: { deferIndex?: boolean } = {}): Promise<void> {
    if (record.temporary) {
      this.#records.write(record);
      return this.#scheduleAlarm(record);
    }
    record.indexDirty = true;
    this.#records.write(record);
    await this.#syncIndex(options.deferIndex ? DEFERRED_INDEX_MS : 0);
    const latest = this.#records.read();
    if (latest) await this.#scheduleAlarm(latest);
  }

  #pendingSync: Promise<void> | null = null;
  #activeSync: Promise<void> = Promise.resolve();

  /**
   * Brings the D1 index up to the current record. A sync that has not started yet is shared by later
   * saves, so a quick run's busy → idle reaches D1 as one write; syncs run one at a time, in order.
   */
  #syncIndex(delayMs: number): Promise<void> {
    if (this.#pendingSync) return this.#pendingSync;
    const pending = (async () => {
      if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
      await this.#activeSync;
      this.#pendingSync = null;
      const record = this.#records.read();
      if (!record || record.temporary || !record.indexDirty) return;
      const write = upsertThreadIndex(database(this.env), record).then(() => {
        // Only the flag, and only if no newer write (or a delete) happened meanwhile.
        this.#records.markIndexed(record.updatedAt);
      });
      this.#activeSync = write.catch(() => undefined);
      try {
        await write;
      } catch (error) {
        log.warn("thread index update failed; will retry", { thread_id: record.threadId, error: String(error) });
      }
    })();
    this.#pendingSync = pending;
    return pending;
  }

  /** The alarm time last set (null: none), so a run's many reschedules cost no storage writes. */
  #alarmAt: number | null | undefined;

  async #scheduleAlarm(record: ThreadRecord): Promise<void> {
    const times: number[] = [];
    const expiry = ttlExpiry(record);
    if (expiry !== null && (expiry > Date.now() || record.ttl?.strategy === "delete")) times.push(expiry);
    if (record.indexDirty) times.push(Date.now() + INDEX_RETRY_MS);
    const runs = this.#runs.nextWakeup();
    if (runs !== null) times.push(runs);
    const wanted = times.length ? Math.min(...times) : null;
    if (wanted === null) {
      if (this.#alarmAt !== null) await this.ctx.storage.deleteAlarm();
      this.#alarmAt = null;
      return;
    }
    // An earlier pending alarm already covers it: when it fires, the alarm handler schedules again.
    if (typeof this.#alarmAt === "number" && this.#alarmAt <= wanted && this.#alarmAt > Date.now()) return;
    this.#alarmAt = wanted;
    await this.ctx.storage.setAlarm(wanted);
  }

  async #wipe(): Promise<void> {
    this.#alarmAt = null;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#records.reset();
    this.#runs.store.reset();
    this.#states.clear();
    this.#saver = this.#newSaver();
  }

  #runHost(): RunHost {
    return {
      saver: () => this.#saver,
      readThread: () => this.#records.read(),
      writeThread: (record) => this.#records.write(record),
      saveThread: (record, options) => this.#save(record, options),
      deleteThread: async () => {
        const record = this.#records.read();
        if (record && !record.temporary) await deleteThreadIndex(database(this.env), record.workspaceId, record.threadId);
        await this.#wipe();
      },
      scheduleAlarm: async () => {
        const record = this.#records.read();
        if (record) await this.#scheduleAlarm(record);
      },
      bindGraph: (graphId, config) => bindGraph(graphId, this.#saver, config, this.#store()),
      traceSink: () => this.#traceSink(),
    };
  }

  /** Agent runs are traced straight into the workspace's trace shards (no HTTP round trip). */
  #traceSink(): TraceSink | null {
    const record = this.#records.read();
    // Vars are typed by their wrangler.toml values; a deployment may override them with any text.
    if (!record || (this.env.AGENT_TRACING as string) === "off") return null;
    return {
      project: this.env.AGENT_TRACING_PROJECT,
      record: async (runs) => {
        if (!runs.length) return;
        // A field over the trace limit is stored as a marker: the rest of the trace is kept.
        const ingestor = new Ingestor(database(this.env), this.env.TRACE_SHARD, record.workspaceId, { maxRunBytes: tracedRunLimit(this.env), truncateOversize: true });
        const { errors } = await ingestor.ingest(runs, []);
        if (errors.length) log.warn("agent run trace rejected runs", { thread_id: record.threadId, errors: errors.slice(0, 3) });
      },
    };
  }

  #newSaver(): SqliteCheckpointSaver {
    return new SqliteCheckpointSaver(this.#sql, undefined, (ns, checkpointId) => {
      if (ns !== "") return;
      this.#states.forget(checkpointId);
      this.#states.forget(`latest:${checkpointId}`);
    });
  }

  #notFound(): Outcome<never> {
    return fail(404, THREAD_NOT_FOUND);
  }

  #noGraph(record: ThreadRecord): string {
    return `Thread ${record.threadId} has no graph ID: create it with graph_id (or metadata.graph_id) to apply state updates`;
  }
}
