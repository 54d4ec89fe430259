// The thread's Durable Object. It wires the modules of threads/object/, which run only inside it, and
// serves the RPC contract of ../thread-rpc.ts; the Worker reaches it only through ../client.ts.
import { DurableObject } from "cloudflare:workers";
import type { AuthFilter } from "../../core/auth-filter.ts";
import { rowBound } from "../../core/json-size.ts";
import { MAX_JSON_FIELD_BYTES, runTimeoutMs } from "../../core/limits.ts";
import { durableObjectSql } from "../../db/sql.ts";
import { checkpointerSettings } from "../../deployment/index.ts";
import { WorkspaceStore } from "../../store/graph-store.ts";
import { threadStub } from "../client.ts";
import { ProtocolHub } from "../protocol/hub.ts";
import type { EventFilter } from "../protocol/schemas.ts";
import { pendingInterruptIds, type SocketUpgrade, socketCommand, upgradeSocket } from "../protocol/socket.ts";
import { type JsonBody, jsonArrayBody } from "../runs/json-stream.ts";
import type { RunHost } from "../runs/ports.ts";
import { RunManager } from "../runs/run-manager.ts";
import { agentTraceSink } from "../runs/trace-sink.ts";
import type { CancelAction, CreateRunInput, RunJson, RunStatus } from "../runs/types.ts";
import { waitingBody } from "../runs/waiting-body.ts";
import type {
  CreateThreadInput,
  HistoryInput,
  ProtocolRunOutcome,
  ProtocolTree,
  ProtocolView,
  TablePage,
  ThreadPatch,
  ThreadRpc,
  UpdateStateInput,
} from "../thread-rpc.ts";
import {
  type CheckpointRef,
  type CheckpointSelector,
  type Outcome,
  ok,
  type Result,
  THREAD_MISSING,
  type ThreadJson,
  type TtlStrategy,
} from "../types.ts";
import { AlarmPlanner } from "./alarm-planner.ts";
import { ThreadCheckpoints } from "./checkpoints.ts";
import { copyThread, importPage } from "./copy.ts";
import { ThreadLifecycle } from "./lifecycle.ts";
import { defaultThreadTtl, type ThreadRecord, ThreadRecords, threadJson } from "./record.ts";
import { IndexSync } from "./search-index-sync.ts";
import { StateReader } from "./state-reader.ts";

/** The TTL of threads created without one, from this deployment's langgraph.json `checkpointer.ttl`. */
const DEFAULT_TTL = defaultThreadTtl(checkpointerSettings);

/**
 * One SQLite-backed Durable Object per thread: the thread record, its checkpoints, its runs. Named
 * `<workspace id>:<thread id>` (see client.ts), so a thread is unreachable from any other workspace.
 * The object is the source of truth and pushes every change to the D1 search index (retried by the
 * alarm). This class only wires the modules that do the work and exposes them over RPC (the contract
 * is thread-rpc.ts), one thread mutation at a time.
 */
export class ThreadDO extends DurableObject<Env> implements ThreadRpc {
  readonly #sql = durableObjectSql(this.ctx.storage);
  readonly #records = new ThreadRecords(this.#sql);
  readonly #checkpoints = new ThreadCheckpoints(
    this.#sql,
    (ns, checkpointId) => this.#states.onCheckpointChange(ns, checkpointId),
    (workspaceId) => new WorkspaceStore(this.env, workspaceId),
  );
  readonly #states = new StateReader(this.#checkpoints);
  readonly #protocol = new ProtocolHub(this.#sql, this.ctx, () => this.#records.read()?.metadata ?? null);
  readonly #runs = new RunManager(this.#runHost(), this.#sql);
  readonly #index = new IndexSync(this.#records, this.env);
  readonly #thread = new ThreadLifecycle({
    records: this.#records,
    checkpoints: this.#checkpoints,
    states: this.#states,
    index: this.#index,
    alarm: new AlarmPlanner(
      this.ctx.storage,
      () => this.#runs.nextWakeup(),
      () => this.#index.retryDelay(),
    ),
    runs: this.#runs,
    deleteAll: async () => {
      await this.ctx.storage.deleteAll();
      this.#protocol.closeAll();
    },
    metadataLimit: rowBound(this.env, MAX_JSON_FIELD_BYTES),
    defaultTtl: DEFAULT_TTL,
  });

  // ---- thread resource ----

  create(input: CreateThreadInput): Promise<Outcome<ThreadJson>> {
    return this.#exclusive(() => this.#thread.create(input));
  }

  /**
   * The thread for checks inside the Worker (metadata, status). Values above 1 MiB are read from the
   * checkpoint only with `oversizeValues` (they may outgrow one RPC result); without it they are `{}`.
   * A client gets the whole thread from `getBody`.
   */
  async get(options: { includeTtl?: boolean; oversizeValues?: boolean } = {}): Promise<Outcome<ThreadJson>> {
    const record = this.#records.read();
    if (!record) return THREAD_MISSING;
    if (record.valuesOversize && options.oversizeValues) await this.#states.loadOversizeValues(record);
    return ok(threadJson(record, options));
  }

  /** The whole thread as JSON bytes (see json-stream.ts): its values may be larger than one RPC result. */
  async getBody(options: { includeTtl?: boolean } = {}): Promise<Outcome<JsonBody>> {
    const record = this.#records.read();
    return record ? ok(await this.#states.threadBody(record, options)) : THREAD_MISSING;
  }

  /** Patches the thread and answers with the whole patched thread as JSON bytes (see `getBody`). */
  patch(input: ThreadPatch): Promise<Outcome<JsonBody>> {
    return this.#exclusive(() => this.#thread.patch(input));
  }

  delete(): Promise<Outcome<true>> {
    return this.#exclusive(() => this.#thread.delete());
  }

  /** `delete` removes the thread; `keep_latest` keeps only the newest checkpoint of each namespace. */
  prune(strategy: TtlStrategy): Promise<Outcome<true>> {
    return this.#exclusive(() => this.#thread.prune(strategy));
  }

  // ---- state ----

  /** The state as JSON bytes (see json-stream.ts): a state may be larger than one RPC result. */
  async getState(input: { checkpoint?: CheckpointSelector; subgraphs?: boolean }): Promise<Outcome<JsonBody>> {
    const record = this.#records.read();
    return record ? this.#states.state(record, input) : THREAD_MISSING;
  }

  updateState(input: UpdateStateInput): Promise<Outcome<{ checkpoint: CheckpointRef | null }>> {
    return this.#exclusive(() => this.#thread.updateState(input));
  }

  /** History as a JSON array, newest first, in bytes (see json-stream.ts and StateCache). */
  async history(input: HistoryInput): Promise<Outcome<JsonBody>> {
    const record = this.#records.read();
    return record ? this.#states.history(record, input) : THREAD_MISSING;
  }

  // ---- runs ----

  createRun(input: CreateRunInput): Promise<Result<{ run: RunJson }>> {
    return this.#exclusive(() => this.#runs.create(input));
  }

  /** Creates the run with a reader attached before it starts; `cancelOnDisconnect` for on_disconnect=cancel. */
  async createRunStream(
    input: CreateRunInput,
    cancelOnDisconnect: boolean,
  ): Promise<Result<{ run: RunJson; stream?: ReadableStream<Uint8Array> }>> {
    const onDisconnect = cancelOnDisconnect
      ? () => void this.#runs.cancel({ runIds: [input.runId], action: "interrupt" })
      : undefined;
    return this.#exclusive(() => this.#runs.create(input, { onDisconnect }));
  }

  /**
   * Creates the run and returns its `/wait` body: keep-alive newlines, then the result. One call, so
   * the result survives a stateless run's thread being deleted as soon as the run ends.
   */
  async createRunWait(input: CreateRunInput): Promise<Result<{ run: RunJson; body: ReadableStream<Uint8Array> }>> {
    const created = await this.#exclusive(() => this.#runs.create(input));
    if (!created.ok) return created;
    return ok({ run: created.value.run, body: this.joinRunBody(input.runId) });
  }

  joinRun(runId: string): Promise<Result<string>> {
    return this.#runs.join(runId);
  }

  /** The `/join` body: keep-alive newlines, then the result (or the run's disappearance) as JSON. */
  joinRunBody(runId: string): ReadableStream<Uint8Array> {
    const result = this.#runs
      .join(runId)
      .then((outcome) =>
        outcome.ok ? outcome.value : JSON.stringify({ __error__: { error: "RunNotFound", message: outcome.detail } }),
      );
    return waitingBody(result);
  }

  streamRun(
    runId: string,
    options: { lastEventId?: number; cancelOnDisconnect?: boolean },
  ): Outcome<ReadableStream<Uint8Array>> {
    if (!this.#records.read()) return THREAD_MISSING;
    return this.#runs.stream(runId, options);
  }

  /** Every event of every run of the thread, from now (or after `lastEventId`) until the client leaves. */
  streamThread(lastEventId?: number): Outcome<ReadableStream<Uint8Array>> {
    if (!this.#records.read()) return THREAD_MISSING;
    return ok(this.#runs.streams.subscribeThread(lastEventId));
  }

  /** A page of runs as a JSON array in bytes: several multi-MB runs outgrow one RPC result. */
  listRuns(options: { limit: number; offset: number; status?: RunStatus }): Outcome<JsonBody> {
    if (!this.#records.read()) return THREAD_MISSING;
    return ok(jsonArrayBody(this.#runs.list(options).map((run) => JSON.stringify(run))));
  }

  getRun(runId: string): Outcome<RunJson> {
    if (!this.#records.read()) return THREAD_MISSING;
    return this.#runs.get(runId);
  }

  deleteRun(runId: string): Promise<Outcome<true>> {
    return this.#exclusive(async () => (this.#records.read() ? this.#runs.delete(runId) : THREAD_MISSING));
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
      if (!this.#records.read()) return THREAD_MISSING;
      const cancelled = await this.#runs.cancel(request);
      return cancelled.ok ? ok(cancelled.value[0] ?? null) : cancelled;
    });
  }

  // ---- protocol v2 (see protocol/) ----

  /** What protocol commands need to know of the thread. */
  async protocolView(threadId: string): Promise<ProtocolView> {
    const record = this.#records.read();
    return {
      metadata: record?.metadata ?? null,
      boundAssistant: record ? this.#protocol.boundAssistant() : null,
      pendingInterrupts: pendingInterruptIds(record),
      meta: this.#protocol.meta(threadId),
    };
  }

  /**
   * Creates a protocol run: the thread is bound to the first assistant a protocol run used, and a
   * run answering interrupts needs them still pending. A run.start with input while interrupts
   * are pending resumes them with that input, as the official servers do.
   */
  protocolRun(input: CreateRunInput, respondTo: string[] | null): Promise<ProtocolRunOutcome> {
    return this.#exclusive(async () => {
      const bound = this.#records.read() ? this.#protocol.boundAssistant() : null;
      if (bound !== null && bound !== input.assistantId)
        return {
          ok: false,
          code: "invalid_argument",
          message: `Thread ${input.threadId} is bound to assistant ${bound}; cannot run ${input.assistantId}.`,
        };
      const pending = pendingInterruptIds(this.#records.read());
      const missing = respondTo?.find((id) => !pending.includes(id));
      if (missing !== undefined)
        return { ok: false, code: "no_such_interrupt", message: `Interrupt ${missing} is not pending on this thread.` };
      let run = input;
      if (!respondTo && pending.length && input.kwargs.input != null && !input.kwargs.command)
        run = { ...input, kwargs: { ...input.kwargs, input: null, command: { resume: input.kwargs.input } } };
      const created = await this.#runs.create(run);
      if (!created.ok) return { ok: false, code: "invalid_argument", message: created.detail };
      if (bound === null) this.#protocol.bindAssistant(input.assistantId);
      return { ok: true, runId: created.value.run.run_id, meta: this.#protocol.meta(input.threadId) };
    });
  }

  async protocolTree(threadId: string): Promise<ProtocolTree> {
    const graphId = this.#records.read()?.metadata.graph_id;
    return {
      tree: this.#protocol.tree(typeof graphId === "string" ? graphId : null),
      meta: this.#protocol.meta(threadId),
    };
  }

  /** The thread's protocol events through `filter`, stored then live; the thread need not exist yet. */
  protocolEvents(filter: EventFilter, readFilter?: AuthFilter): ReadableStream<Uint8Array> {
    return this.#protocol.openStream(filter, readFilter);
  }

  /** Only the protocol WebSocket upgrade arrives over fetch (see protocol/socket.ts). */
  override async fetch(request: Request): Promise<Response> {
    return upgradeSocket(request, this.#protocol);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await socketCommand(ws, message, this.#protocol, (upgrade: SocketUpgrade) => ({
      env: this.env,
      threadId: upgrade.threadId,
      caller: { workspaceId: upgrade.workspaceId, callerId: upgrade.callerId, user: upgrade.user },
      headers: upgrade.headers,
      thread: this,
    }));
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.#protocol.forget(ws);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "Closed");
    } catch {
      // Already closed.
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#protocol.forget(ws);
  }

  // ---- copy (see copy.ts) ----

  /** Copies this thread, every checkpoint included, to a new thread in the same workspace. */
  copyTo(newThreadId: string): Promise<Outcome<ThreadJson>> {
    // Exclusive: no prune, update or delete of this thread interleaves with the export.
    return this.#exclusive(async () => {
      const record = this.#records.read();
      if (!record) return THREAD_MISSING;
      return copyThread(this.#sql, record, newThreadId, threadStub(this.env, record.workspaceId, newThreadId));
    });
  }

  /** Undoes a copy that failed half way: the target holds nothing afterwards. */
  async importAbort(): Promise<void> {
    await this.#thread.wipe();
  }

  async importBegin(record: ThreadRecord): Promise<Outcome<true>> {
    return this.#thread.beginImport(record);
  }

  importPage(page: TablePage): void {
    importPage(this.#sql, page);
    // The import made checkpoint tables behind the saver's back: a new saver checks again.
    this.#checkpoints.reset();
  }

  /** The copy's thread, values above 1 MiB left out as in `get` (the copy route answers with `getBody`). */
  importFinish(): Promise<Outcome<ThreadJson>> {
    return this.#thread.finishImport();
  }

  /**
   * Drops what this object holds in memory of its storage (the thread record, schema checks, decoded
   * states), so the next call reads storage again: for storage edited outside this class (tests, repair).
   */
  reloadFromStorage(): void {
    this.#records.reset();
    this.#runs.table.reset();
    this.#states.clear();
    this.#checkpoints.reset();
  }

  // ---- alarm: TTL, index retries, runs ----

  override alarm(): Promise<void> {
    return this.#exclusive(() => this.#thread.alarm());
  }

  // ---- wiring ----

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

  #runHost(): RunHost {
    return {
      saver: () => this.#checkpoints.saver,
      requestConfigLimit: rowBound(this.env, MAX_JSON_FIELD_BYTES),
      defaultTtl: DEFAULT_TTL,
      readThread: () => this.#records.read(),
      writeThread: (record) => this.#records.write(record),
      saveThread: (record, options) => this.#thread.save(record, options),
      deleteThread: () => this.#thread.discard(),
      scheduleAlarm: () => this.#thread.planAlarm(),
      bindGraph: (graphId, config) => this.#checkpoints.bind(graphId, config, this.#records.read()?.workspaceId),
      protocolSink: this.#protocol,
      runTimeoutMs: () => runTimeoutMs(this.env),
      traceSink: () => {
        const record = this.#records.read();
        return record ? agentTraceSink(this.env, record) : null;
      },
    };
  }
}
