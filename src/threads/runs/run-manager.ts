import { runConfigProblem } from "../../assistants/schemas.ts";
import { oversize, storedErrorMessage } from "../../core/json-size.ts";
import { MAX_JSON_FIELD_BYTES } from "../../core/limits.ts";
import { yieldToUrgentWork } from "../../core/yield.ts";
import type { SqlStore } from "../../db/sql.ts";
import type { LoadedGraph } from "../../deployment/graphs.ts";
import { log } from "../../observability/log.ts";
import { AgentRunTracer, agentTraceProject } from "../../tracing/agent-tracer.ts";
import { checkpointConfig, stateJson } from "../object/graph-state.ts";
import { newThreadRecord, type ThreadRecord } from "../object/record.ts";
import { fail, ok, type Result, type ThreadStatus } from "../types.ts";
import { errorPayload, executeRun } from "./executor.ts";
import type { RunHost } from "./ports.ts";
import { graphConfig, mergeConfigs, runContext, storedRunConfig, threadConfig } from "./run-config.ts";
import { type AgentRun, isActive, RunTable, runJson } from "./run-table.ts";
import { RunStreams, singleEventStream } from "./streams.ts";
import {
  type CancelAction,
  type CreateRunInput,
  RUN_NOT_FOUND,
  type RunJson,
  type RunStatus,
  THREAD_BUSY,
  threadDeletedError,
} from "./types.ts";
import { deliverWebhook } from "./webhook.ts";

/** A run interrupted by restarts this many times fails instead of trying again. */
const MAX_ATTEMPTS = 3;
/** While work is in flight the alarm fires this often, keeping the DO alive and catching crashes. */
export const HEARTBEAT_MS = 30_000;
/** setTimeout fires at once past 2^31 - 1 ms: a later deadline is looked at again after this long. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Execution {
  runId: string;
  controller: AbortController;
  cancel?: CancelAction;
  done?: Promise<void>;
  /** When the run times out (ms since epoch), and the timer that stops it then. */
  deadline?: number;
  timer?: ReturnType<typeof setTimeout>;
  /** Set when the deadline aborted the run: how it ends. */
  timedOut?: { error: string; message: string };
}

type Settled = Result<string>;
/** How a run ended. */
type RunOutcome =
  | { kind: "success" }
  | { kind: "error"; error: { error: string; message: string } }
  | { kind: "timeout"; error: { error: string; message: string } }
  | { kind: "cancelled"; action: CancelAction };
const now = () => new Date().toISOString();

/**
 * A thread's runs: their queue, execution one at a time (the thread's state allows no other way),
 * multitask strategies, cancellation, joins, event streams, webhooks and recovery after a restart.
 * Lives inside the ThreadDO; all SQL is synchronous, so every decision below is made atomically.
 */
export class RunManager {
  readonly table: RunTable;
  readonly streams: RunStreams;
  #executing: Execution | null = null;
  readonly #waiters = new Map<string, ((result: Settled) => void)[]>();
  #pendingWebhooks = 0;
  /** While the thread is being deleted: the error new joins and streams get at once. */
  #deletion: { error: string; message: string } | null = null;

  constructor(
    private readonly host: RunHost,
    sql: SqlStore,
  ) {
    this.table = new RunTable(sql);
    this.streams = new RunStreams(this.table);
  }

  // ---- creation ----

  /**
   * Inserts the run (after the multitask strategy had its say) and starts it when the thread is
   * free. With `subscribe`, a reader is attached before anything runs, so it sees every event.
   */
  async create(
    input: CreateRunInput,
    subscribe?: { onDisconnect?: () => void },
  ): Promise<Result<{ run: RunJson; stream?: ReadableStream<Uint8Array> }>> {
    let thread = this.host.readThread();
    if (!thread) {
      if (input.ifNotExists === "reject" && !input.stateless)
        return fail("not_found", `Thread with ID ${input.threadId} not found`);
      thread = newThreadRecord(
        {
          threadId: input.threadId,
          workspaceId: input.workspaceId,
          // A thread a run creates takes the run's metadata (so an owner stamped on the run owns it).
          metadata: { graph_id: input.graphId, assistant_id: input.assistantId, ...input.metadata },
          temporary: input.stateless && input.kwargs.on_completion !== "keep",
        },
        now(),
        this.host.defaultTtl ?? null,
      );
      this.host.writeThread(thread);
    }
    this.recover();
    const active = this.table.active();
    if (active.length > 0 && input.multitaskStrategy === "reject") return fail("conflict", THREAD_BUSY);

    const at = now();
    const requestConfig = input.kwargs.config;
    // What requests set accumulates in the thread's row: bounded like any config (each request's is, too).
    const requestConfigs = thread.status === "busy" ? null : mergeConfigs(thread.requestConfig, requestConfig);
    const tooLarge =
      requestConfigs && oversize(["config"], requestConfigs, this.host.requestConfigLimit ?? MAX_JSON_FIELD_BYTES);
    if (tooLarge) return fail("invalid", `${tooLarge} (merged with the config of the thread's earlier runs)`);
    const config = mergeConfigs(
      input.assistant.config,
      thread.status === "busy" ? {} : thread.requestConfig,
      requestConfig,
    );
    const context = runContext(input.assistant.context, input.kwargs.context);
    const run: AgentRun = {
      run_id: input.runId,
      thread_id: input.threadId,
      assistant_id: input.assistantId,
      graphId: input.graphId,
      created_at: at,
      updated_at: at,
      status: "pending",
      metadata: { ...input.assistant.metadata, ...thread.metadata, ...input.metadata },
      kwargs: { ...input.kwargs, config, context: context as Record<string, unknown> },
      multitask_strategy: input.multitaskStrategy,
      attempt: 0,
      notBefore: Date.now() + input.afterSeconds * 1000,
      startedAt: null,
      endedAt: null,
      result: null,
      error: null,
      authUser: input.authUser,
      timeoutMs: input.timeoutMs,
      deadline: null,
    };
    run.kwargs.config = storedRunConfig(config, input.checkpoint, input.userId);
    this.table.insert(run);
    this.streams.open(run.run_id, run.kwargs.resumable);
    const stream = subscribe ? this.streams.subscribe(run.run_id, subscribe) : undefined;

    let metadataChanged = false;
    if (thread.status !== "busy") {
      metadataChanged =
        thread.metadata.graph_id !== input.graphId || thread.metadata.assistant_id !== input.assistantId;
      thread.metadata = { ...thread.metadata, graph_id: input.graphId, assistant_id: input.assistantId };
      // The thread shows (and builds its graph for state reads with) the config of this run. Its
      // layer in later runs is only what requests set: a patched assistant must win over what an
      // earlier run copied.
      thread.requestConfig = requestConfigs ?? thread.requestConfig;
      thread.config = threadConfig(config);
    }
    thread.status = "busy";
    thread.updatedAt = at;
    if (input.multitaskStrategy === "interrupt" || input.multitaskStrategy === "rollback") {
      this.#cancel(active, input.multitaskStrategy, thread);
    }
    // The record is written now; the search index catches up without holding the reply. A status
    // flip may wait to merge with the run's end; new metadata (searchable) goes at once.
    this.#background(
      this.host.saveThread(thread, { deferIndex: !metadataChanged, afterRunSetups: true }),
      "thread index after run create",
    );
    this.kick();
    return ok({ run: runJson(run), stream });
  }

  // ---- execution ----

  /** Starts the next due run unless one is executing. */
  kick(): void {
    if (this.#executing) return;
    const next = this.table.nextDue(Date.now());
    if (!next) {
      void this.host.scheduleAlarm();
      return;
    }
    const execution: Execution = { runId: next.run_id, controller: new AbortController() };
    this.#executing = execution;
    execution.done = this.#execute(next, execution)
      .catch((error) => this.#failAtOnce(next.run_id, error))
      .finally(() => {
        clearTimeout(execution.timer);
        this.#executing = null;
        this.kick();
      });
  }

  /** When the alarm must fire next for runs (heartbeat while busy, or a delayed run), or null. */
  nextWakeup(): number | null {
    const heartbeat = Date.now() + HEARTBEAT_MS;
    const execution = this.#executing;
    // The alarm also enforces the deadline, should the timer be lost.
    if (execution?.deadline !== undefined && !execution.controller.signal.aborted)
      return Math.min(heartbeat, execution.deadline);
    if (execution || this.#pendingWebhooks > 0) return heartbeat;
    const active = this.table.active();
    if (active.some((run) => run.status === "running")) return Date.now();
    return this.table.nextNotBefore();
  }

  /** Alarm: pick up runs a restart left behind, and start what is due. */
  onAlarm(): void {
    if (this.#executing) this.#enforceDeadline(this.#executing);
    this.recover();
    this.kick();
  }

  /** Stops the executing run once its deadline has passed; until then, looks again at the deadline. */
  #enforceDeadline(execution: Execution): void {
    clearTimeout(execution.timer);
    if (execution.deadline === undefined || execution.controller.signal.aborted) return;
    const remaining = execution.deadline - Date.now();
    if (remaining > 0) {
      execution.timer = setTimeout(() => this.#enforceDeadline(execution), Math.min(remaining, MAX_TIMER_MS));
      return;
    }
    const run = this.table.get(execution.runId);
    execution.timedOut = timeoutError(execution.runId, run?.timeoutMs ?? this.host.runTimeoutMs());
    execution.controller.abort(new Error(execution.timedOut.message));
  }

  /**
   * A run marked `running` that this instance is not executing was cut off by a restart or crash:
   * queue it again (it resumes from its last checkpoint) or, past the attempt limit, fail it.
   */
  recover(): void {
    for (const run of this.table.active()) {
      if (run.status !== "running" || this.#executing?.runId === run.run_id) continue;
      log.warn("resuming a run interrupted by a restart", { run_id: run.run_id, attempt: run.attempt });
      run.status = "pending";
      run.updated_at = now();
      this.table.update(run);
    }
  }

  async #execute(run: AgentRun, execution: Execution): Promise<void> {
    run.attempt += 1;
    run.status = "running";
    run.startedAt ??= now();
    // The wall-clock limit counts from the first start and is stored: a run resumed after a restart
    // keeps its deadline, and one resumed past it times out instead of running (or hanging) again.
    const limitMs = run.timeoutMs ?? this.host.runTimeoutMs();
    run.deadline ??= Date.now() + limitMs;
    const pastDeadline = Date.now() >= run.deadline;
    // Known before the heartbeat alarm is planned, which then fires by the deadline at the latest.
    if (!pastDeadline) execution.deadline = run.deadline;
    run.updated_at = now();
    this.table.update(run);
    this.streams.open(run.run_id, run.kwargs.resumable);
    this.#background(this.host.scheduleAlarm(), "heartbeat alarm");
    const publish = (event: string, data: unknown) => this.streams.publish(run.run_id, event, data);
    publish("metadata", { run_id: run.run_id, attempt: run.attempt });
    const protocol = run.kwargs.protocol_stream ? this.host.protocolSink : undefined;
    protocol?.runStarted(run);

    if (pastDeadline) {
      const error = timeoutError(run.run_id, limitMs);
      publish("error", error);
      return this.#settle(run, { kind: "timeout", error });
    }
    this.#enforceDeadline(execution);
    if (run.attempt > MAX_ATTEMPTS) {
      return this.#settle(run, {
        kind: "error",
        error: {
          error: "RunAttemptsExceeded",
          message: `Run ${run.run_id} exceeded max attempts (${MAX_ATTEMPTS}): it was cut off by a restart each time`,
        },
      });
    }
    // A config stored before it was checked on the way in (an assistant's, a cron's, the thread's)
    // may hold what LangGraph cannot run with (max_concurrency 0 never ends): the run fails instead.
    const problem = runConfigProblem(run.kwargs.config);
    if (problem) {
      const error = { error: "InvalidConfig", message: `Run ${run.run_id} cannot start: ${problem}` };
      publish("error", error);
      return this.#settle(run, { kind: "error", error });
    }
    // The metadata event is out; the rest waits for a turn of the event loop, so that other requests
    // (other runs' first events) are not queued behind this run's execution.
    await yieldToUrgentWork(execution.controller.signal);
    const config = graphConfig(run);
    /** How the run ends when it throws, or when its abort (cancel, deadline) stops it. */
    const failure = (error: unknown): RunOutcome => {
      if (execution.timedOut) {
        publish("error", execution.timedOut);
        return { kind: "timeout", error: execution.timedOut };
      }
      if (execution.controller.signal.aborted) return { kind: "cancelled", action: execution.cancel ?? "interrupt" };
      const payload = errorPayload(error);
      publish("error", payload);
      return { kind: "error", error: payload };
    };
    let graph: Awaited<ReturnType<RunHost["bindGraph"]>>;
    try {
      // A graph factory that never resolves is stopped by the deadline too.
      graph = await Promise.race([
        this.host.bindGraph(run.graphId, config),
        rejectOnAbort(execution.controller.signal),
      ]);
    } catch (error) {
      return this.#settle(run, failure(error));
    }
    if (!graph) {
      return this.#settle(run, {
        kind: "error",
        error: { error: "GraphNotFound", message: `Graph "${run.graphId}" is not deployed` },
      });
    }
    // A run cut off by a restart continues from its last checkpoint instead of starting over.
    const resumed = run.attempt > 1 && this.#hasCheckpointOf(run);
    const sink = this.host.traceSink();
    const tracer = sink
      ? new AgentRunTracer(
          { thread_id: run.thread_id, run_id: run.run_id, assistant_id: run.assistant_id, graph_id: run.graphId },
          agentTraceProject(sink.project, run.kwargs),
        )
      : null;
    let outcome: RunOutcome = { kind: "success" };
    try {
      const graphRun = executeRun({
        graph,
        input: resumed ? null : run.kwargs.input,
        command: resumed ? null : run.kwargs.command,
        config,
        runId: run.run_id,
        streamModes: run.kwargs.stream_mode,
        subgraphs: run.kwargs.subgraphs,
        interruptBefore: run.kwargs.interrupt_before,
        interruptAfter: run.kwargs.interrupt_after,
        durability: run.kwargs.durability,
        signal: execution.controller.signal,
        publish,
        callbacks: tracer ? [tracer] : undefined,
        protocol: protocol && ((event) => protocol.event(run.run_id, event)),
      });
      // LangGraph stops at the abort (cancel, deadline) and then waits for its checkpoint writes, so
      // the run settles on its final state. Only a graph that still has not ended ABORT_GRACE_MS
      // after the abort is given up on, so that it cannot keep the run (and those queued) open.
      await Promise.race([graphRun, rejectOnAbort(execution.controller.signal, ABORT_GRACE_MS)]);
    } catch (error) {
      outcome = failure(error);
    }
    try {
      await this.#settle(run, outcome, graph);
    } finally {
      // The trace is converted and written only once the run has ended and its readers and waiters
      // have their answer, so tracing never delays a run's result.
      if (sink && tracer) {
        const unfinished =
          outcome.kind === "cancelled"
            ? "Cancelled"
            : outcome.kind === "error" || outcome.kind === "timeout"
              ? outcome.error.message
              : "Run ended before this step finished";
        this.#background(sink.record(tracer.takeRunBatches(unfinished)), "agent run trace");
      }
    }
  }

  /**
   * A failure outside the graph (storing the run's outcome, serializing its state, building the
   * graph) happens again on every attempt: the run fails now instead of being retried as if a restart
   * had cut it off. Only when even that cannot be stored is the run left to recovery's attempt limit.
   */
  async #failAtOnce(runId: string, error: unknown): Promise<void> {
    log.error("run failed outside the graph", { run_id: runId, error: String(error) });
    const run = this.table.get(runId);
    if (!run || !isActive(run.status)) {
      // It failed after its end was stored: its readers and waiters still need the end.
      this.streams.finish(runId);
      this.#resolveWaiters(runId, run ? ok(run.result ?? "null") : fail("not_found", RUN_NOT_FOUND));
      return;
    }
    const cause = errorPayload(error);
    const failure = { error: cause.error, message: `Run ${runId} failed and was not retried: ${cause.message}` };
    try {
      this.streams.publish(runId, "error", failure);
      await this.#settle(run, { kind: "error", error: failure });
    } catch (again) {
      log.error("failed run could not be settled; recovery will retry it", { run_id: runId, error: String(again) });
    }
  }

  #hasCheckpointOf(run: AgentRun): boolean {
    return (
      this.host.saver().checkpointIds(checkpointConfig(run.thread_id), { limit: 1, filter: { run_id: run.run_id } })
        .length > 0
    );
  }

  /** Ends a run: its status, result, the thread's state and status, readers, waiters, webhook. */
  async #settle(run: AgentRun, outcome: RunOutcome, graph?: LoadedGraph): Promise<void> {
    if (!this.host.readThread()) return; // The thread was deleted while the run was finishing.
    let state: ReturnType<typeof stateJson> | undefined;
    if (outcome.kind === "cancelled" && outcome.action === "rollback") {
      this.host.saver().deleteRunCheckpoints(run.thread_id, run.run_id);
      this.table.delete(run.run_id);
    } else if (graph) {
      state = stateJson(await graph.getState({ configurable: { thread_id: run.thread_id, checkpoint_ns: "" } }));
    }
    // Read after the last await: the record may have changed meanwhile, and nothing else may slip
    // in between this read and saveThread's (synchronous) write.
    const thread = this.host.readThread();
    if (!thread) return;

    const at = now();
    if (outcome.kind !== "cancelled" || outcome.action !== "rollback") {
      run.status = outcome.kind === "cancelled" ? "interrupted" : outcome.kind;
      const failure = outcome.kind === "error" || outcome.kind === "timeout" ? outcome.error : null;
      run.error = failure ? storedErrorMessage(failure.message) : null;
      run.result = JSON.stringify(
        failure
          ? { __error__: failure }
          : state
            ? {
                ...(state.values as Record<string, unknown>),
                ...(state.interrupts.length ? { __interrupt__: state.interrupts } : {}),
              }
            : null,
      );
      run.endedAt = at;
      run.updated_at = at;
      this.table.update(run);
    }

    if (state) {
      thread.values = (state.values ?? {}) as Record<string, unknown>;
      thread.interrupts = Object.fromEntries(
        state.tasks.filter((t) => t.interrupts.length).map((t) => [t.id, t.interrupts]),
      );
      thread.stateUpdatedAt = at;
    }
    thread.status = this.#threadStatusAfter(outcome.kind, state?.next.length ?? 0);
    // A run stopped at its deadline leaves the thread in error, as a run that threw does.
    thread.error =
      outcome.kind === "error" || outcome.kind === "timeout" ? storedErrorMessage(outcome.error.message) : null;
    thread.updatedAt = at;
    // The record is written synchronously here; waiters and readers learn the end before the index.
    const saved = this.host.saveThread(thread, { deferIndex: true });
    if (run.kwargs.protocol_stream) {
      this.host.protocolSink?.runEnded(
        run,
        outcome.kind === "cancelled"
          ? { status: "interrupted", pendingInterrupts: false }
          : {
              status: outcome.kind === "timeout" ? "error" : outcome.kind,
              error: outcome.kind === "error" || outcome.kind === "timeout" ? outcome.error.message : undefined,
              pendingInterrupts: Boolean(state?.interrupts.length),
            },
      );
    }
    this.streams.finish(run.run_id);
    this.#resolveWaiters(
      run.run_id,
      outcome.kind === "cancelled" && outcome.action === "rollback"
        ? fail("not_found", RUN_NOT_FOUND)
        : ok(run.result ?? "null"),
    );
    await saved;
    if (run.kwargs.webhook) this.#sendWebhook(run, state?.values);
    if (thread.temporary && !this.table.hasActive()) await this.host.deleteThread();
  }

  #threadStatusAfter(kind: RunOutcome["kind"], pendingNodes: number): ThreadStatus {
    if (this.table.hasActive()) return "busy";
    if (kind === "error" || kind === "timeout") return "error";
    if (kind === "success" && pendingNodes > 0) return "interrupted";
    return "idle";
  }

  #sendWebhook(run: AgentRun, values: unknown): void {
    this.#pendingWebhooks += 1;
    const payload = {
      ...runJson(run),
      run_started_at: run.startedAt,
      run_ended_at: run.endedAt,
      ...(values !== undefined && run.status !== "interrupted" ? { values } : {}),
      ...(run.error ? { error: run.error } : {}),
    };
    void deliverWebhook(run.kwargs.webhook!, payload).finally(() => {
      this.#pendingWebhooks -= 1;
      void this.host.scheduleAlarm();
    });
  }

  /** Work whose failure is logged, not thrown (the alarm retries what matters). */
  #background(work: Promise<unknown>, what: string): void {
    work.catch((error) => log.warn(`${what} failed`, { error: String(error) }));
  }

  // ---- reads, joins, streams ----

  get(runId: string): Result<RunJson> {
    const run = this.table.get(runId);
    return run ? ok(runJson(run)) : fail("not_found", RUN_NOT_FOUND);
  }

  list(options: { limit: number; offset: number; status?: RunStatus }): RunJson[] {
    return this.table.list(options).map(runJson);
  }

  /** Waits for the run to end; its result as JSON text (final values, or `{__error__}`). */
  join(runId: string): Promise<Settled> {
    const run = this.table.get(runId);
    if (!run) return Promise.resolve(fail("not_found", RUN_NOT_FOUND));
    if (this.#deletion && isActive(run.status))
      return Promise.resolve(ok(JSON.stringify({ __error__: this.#deletion })));
    if (!isActive(run.status)) return Promise.resolve(ok(run.result ?? "null"));
    return new Promise((resolve) => {
      const waiting = this.#waiters.get(runId) ?? [];
      waiting.push(resolve);
      this.#waiters.set(runId, waiting);
    });
  }

  #resolveWaiters(runId: string, result: Settled): void {
    for (const resolve of this.#waiters.get(runId) ?? []) resolve(result);
    this.#waiters.delete(runId);
  }

  stream(
    runId: string,
    options: { lastEventId?: number; cancelOnDisconnect?: boolean },
  ): Result<ReadableStream<Uint8Array>> {
    const run = this.table.get(runId);
    if (!run) return fail("not_found", RUN_NOT_FOUND);
    if (this.#deletion && isActive(run.status)) return ok(singleEventStream("error", this.#deletion));
    if (isActive(run.status)) this.streams.open(runId, run.kwargs.resumable);
    const onDisconnect = options.cancelOnDisconnect
      ? () => void this.cancel({ runIds: [runId], action: "interrupt" })
      : undefined;
    return ok(this.streams.subscribe(runId, { lastEventId: options.lastEventId, onDisconnect }));
  }

  // ---- cancellation and deletion ----

  /**
   * Cancels runs: the given ones, or every active run with `status` (pending | running | all).
   * `interrupt` keeps what a started run did; `rollback` deletes the run and its checkpoints.
   */
  async cancel(request: {
    runIds?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
    wait?: boolean;
  }): Promise<Result<RunJson[]>> {
    const targets = request.runIds
      ? request.runIds.map((id) => this.table.get(id))
      : this.table
          .active()
          .filter((run) => request.status === "all" || !request.status || run.status === request.status);
    const runs = targets.filter((run): run is AgentRun => run !== undefined);
    if (runs.length < targets.length) return fail("not_found", RUN_NOT_FOUND);
    const thread = this.host.readThread();
    if (thread)
      this.#cancel(
        runs.filter((run) => isActive(run.status)),
        request.action,
        thread,
      );
    if (thread && !this.table.hasActive() && thread.status === "busy") {
      thread.status = "idle";
      thread.updatedAt = now();
      await this.host.saveThread(thread);
    }
    if (request.wait && this.#executing && runs.some((run) => run.run_id === this.#executing?.runId))
      await this.#executing.done;
    return ok(runs.map((run) => runJson(this.table.get(run.run_id) ?? run)));
  }

  /** Cancels active runs now: pending ones are settled here, a running one is told to stop. */
  #cancel(runs: AgentRun[], action: CancelAction, thread: ThreadRecord): void {
    for (const run of runs) {
      if (this.#executing?.runId === run.run_id) {
        this.#executing.cancel = action;
        this.#executing.controller.abort(new Error(`Run cancelled (${action})`));
        continue;
      }
      if (action === "rollback") {
        this.host.saver().deleteRunCheckpoints(thread.threadId, run.run_id);
        this.table.delete(run.run_id);
        this.#resolveWaiters(run.run_id, fail("not_found", RUN_NOT_FOUND));
      } else {
        run.status = "interrupted";
        run.updated_at = run.endedAt = now();
        run.result = JSON.stringify(thread.values ?? null);
        this.table.update(run);
        this.#resolveWaiters(run.run_id, ok(run.result));
      }
      this.streams.finish(run.run_id);
    }
  }

  async delete(runId: string): Promise<Result<true>> {
    const run = this.table.get(runId);
    if (!run) return fail("not_found", RUN_NOT_FOUND);
    if (isActive(run.status)) await this.cancel({ runIds: [runId], action: "interrupt", wait: true });
    this.table.delete(runId);
    return ok(true);
  }

  /**
   * Stops everything before the thread is deleted. Readers and waiters of its active runs are told
   * first, with an error naming the deletion, so none mistakes the cut-off for a finished run.
   */
  async shutdown(): Promise<void> {
    const active = this.table.active();
    const thread = this.host.readThread();
    const deleted = threadDeletedError(thread?.threadId ?? active[0]?.thread_id ?? "");
    this.#deletion = deleted;
    try {
      for (const run of active) {
        this.streams.fail(run.run_id, deleted);
        this.#resolveWaiters(run.run_id, ok(JSON.stringify({ __error__: deleted })));
      }
      if (thread && active.length) this.#cancel(active, "interrupt", thread);
      await this.#executing?.done;
      this.streams.closeAll(deleted);
      this.table.reset();
    } finally {
      this.#deletion = null;
    }
  }
}

/** How a run over its wall-clock limit ends (its `__error__`, its stream's `error` event). */
function timeoutError(runId: string, limitMs: number): { error: string; message: string } {
  return {
    error: "TimeoutError",
    message: `Run ${runId} exceeded the wall-clock limit of ${limitMs / 1000} s (BG_JOB_TIMEOUT_SECS) and was stopped`,
  };
}

/**
 * How long a run's graph has, after its abort, to end on its own (LangGraph finishes its pending
 * checkpoint writes first) before the run settles without it.
 */
const ABORT_GRACE_MS = 5_000;

/** Rejects `graceMs` after `signal` aborts (never before). */
function rejectOnAbort(signal: AbortSignal, graceMs = 0): Promise<never> {
  return new Promise((_resolve, reject) => {
    const later = () => (graceMs > 0 ? setTimeout(() => reject(signal.reason), graceMs) : reject(signal.reason));
    if (signal.aborted) later();
    else signal.addEventListener("abort", later, { once: true });
  });
}
