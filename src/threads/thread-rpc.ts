import type { AuthFilter } from "../core/auth-filter.ts";
import type { SqlRow } from "../db/sql.ts";
import type { ThreadRecord } from "./object/record.ts";
import type { AgentTreeNode } from "./protocol/hub.ts";
import type { EventFilter, ResponseMeta } from "./protocol/schemas.ts";
import type { ProtocolErrorCode } from "./protocol/types.ts";
import type { JsonBody } from "./runs/json-stream.ts";
import type { CancelAction, CreateRunInput, RunJson, RunStatus } from "./runs/types.ts";
import type {
  CheckpointRef,
  CheckpointSelector,
  Outcome,
  Result,
  ThreadJson,
  TtlSetting,
  TtlStrategy,
} from "./types.ts";

/**
 * A thread's RPC contract, declared once: every method the Worker (or another thread, for a copy)
 * calls on a thread's Durable Object. `ThreadDO` implements it; `ThreadClient` (client.ts) is what a
 * caller sees of it through the stub. Results above 1 MiB travel as JSON bytes (`JsonBody`, see
 * runs/json-stream.ts), and failures as values (`Outcome`, see types.ts): RPC drops error classes.
 */
export interface ThreadRpc {
  // ---- thread resource ----
  create(input: CreateThreadInput): Promise<Outcome<ThreadJson>>;
  /**
   * The thread for checks inside the Worker (metadata, status). Values above 1 MiB are read from the
   * checkpoint only with `oversizeValues` (they may outgrow one RPC result); without it they are `{}`.
   * A client gets the whole thread from `getBody`.
   */
  get(options?: { includeTtl?: boolean; oversizeValues?: boolean }): Promise<Outcome<ThreadJson>>;
  /** The whole thread as JSON bytes: its values may be larger than one RPC result. */
  getBody(options?: { includeTtl?: boolean }): Promise<Outcome<JsonBody>>;
  /** Patches the thread and answers with the whole patched thread as JSON bytes (see `getBody`). */
  patch(input: ThreadPatch): Promise<Outcome<JsonBody>>;
  delete(): Promise<Outcome<true>>;
  /** `delete` removes the thread; `keep_latest` keeps only the newest checkpoint of each namespace. */
  prune(strategy: TtlStrategy): Promise<Outcome<true>>;

  // ---- state ----
  /** The state as JSON bytes: a state may be larger than one RPC result. */
  getState(input: { checkpoint?: CheckpointSelector; subgraphs?: boolean }): Promise<Outcome<JsonBody>>;
  updateState(input: UpdateStateInput): Promise<Outcome<{ checkpoint: CheckpointRef | null }>>;
  /** History as a JSON array, newest first, in bytes. */
  history(input: HistoryInput): Promise<Outcome<JsonBody>>;

  // ---- runs ----
  createRun(input: CreateRunInput): Promise<Result<{ run: RunJson }>>;
  /** Creates the run with a reader attached before it starts; `cancelOnDisconnect` for on_disconnect=cancel. */
  createRunStream(
    input: CreateRunInput,
    cancelOnDisconnect: boolean,
  ): Promise<Result<{ run: RunJson; stream?: ReadableStream<Uint8Array> }>>;
  /** Creates the run and returns its `/wait` body: keep-alive newlines, then the result. */
  createRunWait(input: CreateRunInput): Promise<Result<{ run: RunJson; body: ReadableStream<Uint8Array> }>>;
  joinRun(runId: string): Promise<Result<string>>;
  /** The `/join` body: keep-alive newlines, then the result (or the run's disappearance) as JSON. */
  joinRunBody(runId: string): ReadableStream<Uint8Array>;
  streamRun(
    runId: string,
    options: { lastEventId?: number; cancelOnDisconnect?: boolean },
  ): Outcome<ReadableStream<Uint8Array>>;
  /** Every event of every run of the thread, from now (or after `lastEventId`) until the client leaves. */
  streamThread(lastEventId?: number): Outcome<ReadableStream<Uint8Array>>;
  /** A page of runs as a JSON array in bytes: several multi-MB runs outgrow one RPC result. */
  listRuns(options: { limit: number; offset: number; status?: RunStatus }): Outcome<JsonBody>;
  getRun(runId: string): Outcome<RunJson>;
  deleteRun(runId: string): Promise<Outcome<true>>;
  /** Cancels runs and answers the first of them as it now stands (never the whole list). */
  cancelRuns(request: {
    runIds?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
    wait?: boolean;
  }): Promise<Outcome<RunJson | null>>;

  // ---- protocol v2 (see protocol/) ----
  /** What protocol commands need to know of the thread. */
  protocolView(threadId: string): Promise<ProtocolView>;
  /** Creates a protocol run (binding the thread to its assistant, answering pending interrupts). */
  protocolRun(input: CreateRunInput, respondTo: string[] | null): Promise<ProtocolRunOutcome>;
  protocolTree(threadId: string): Promise<ProtocolTree>;
  /** The thread's protocol events through `filter`, stored then live; the thread need not exist yet. */
  protocolEvents(filter: EventFilter, readFilter?: AuthFilter): ReadableStream<Uint8Array>;

  // ---- copy: the source calls copyTo, which drives the target's import* methods ----
  /** Copies this thread, every checkpoint included, to a new thread in the same workspace. */
  copyTo(newThreadId: string): Promise<Outcome<ThreadJson>>;
  /** Undoes a copy that failed half way: the target holds nothing afterwards. */
  importAbort(): Promise<void>;
  importBegin(record: ThreadRecord): Promise<Outcome<true>>;
  importPage(page: TablePage): void;
  /** The copy's thread, values above 1 MiB left out as in `get`. */
  importFinish(): Promise<Outcome<ThreadJson>>;

  /** Drops what the object holds in memory of its storage, so the next call reads storage again. */
  reloadFromStorage(): void;
}

export interface CreateThreadInput {
  threadId: string;
  workspaceId: string;
  metadata: Record<string, unknown>;
  ifExists: "raise" | "do_nothing";
  graphId?: string;
  supersteps?: { updates: SuperstepUpdate[] }[];
  /** Absent: the deployment's default TTL (see `newThreadRecord`). */
  ttl?: TtlSetting;
}

/** One update of a superstep a thread is created with. */
export interface SuperstepUpdate {
  values?: unknown;
  command?: { update?: unknown; goto?: unknown; resume?: unknown };
  as_node: string;
}

export interface ThreadPatch {
  metadata?: Record<string, unknown>;
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

/** A page of another thread's storage, pushed by a copy. */
export interface TablePage {
  table: string;
  /** CREATE TABLE / CREATE INDEX statements of the table, from the source's sqlite_master. */
  schema: string[];
  rows: SqlRow[];
}

/** What protocol commands need to know of the thread, in one call. */
export interface ProtocolView {
  /** The thread's metadata; null while the thread does not exist. */
  metadata: Record<string, unknown> | null;
  boundAssistant: string | null;
  /** Ids of the interrupts waiting for an answer. */
  pendingInterrupts: string[];
  meta: ResponseMeta;
}

export type ProtocolRunOutcome =
  | { ok: true; runId: string; meta: ResponseMeta }
  | { ok: false; code: ProtocolErrorCode; message: string };

/** `agent.getTree`'s answer from the thread. */
export interface ProtocolTree {
  tree: AgentTreeNode;
  meta: ResponseMeta;
}
