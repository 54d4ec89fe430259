import type { LoadedGraph } from "../../deployment/graphs.ts";
import type { TracedRun } from "../../tracing/agent-tracer.ts";
import type { SqliteCheckpointSaver } from "../object/checkpointer.ts";
import type { ThreadRecord } from "../object/record.ts";
import type { GraphProtocolEvent } from "../protocol/normalize.ts";
import type { TtlSetting } from "../types.ts";

/**
 * The ports of RunManager: what it needs of the thread's Durable Object that hosts it (`RunHost`),
 * and where it reports protocol v2 runs (`ProtocolRunSink`, the protocol hub) and traces (`TraceSink`).
 */

/** What runs need from the thread that hosts them (the ThreadDO). */
export interface RunHost {
  saver(): SqliteCheckpointSaver;
  readThread(): ThreadRecord | null;
  /** Synchronous write of the record only. */
  writeThread(record: ThreadRecord): void;
  /**
   * Record, search index and alarm. The record is written before the returned promise first waits,
   * so callers may let the index update finish after answering.
   */
  saveThread(record: ThreadRecord, options?: { deferIndex?: boolean; afterRunSetups?: boolean }): Promise<void>;
  /** Removes the whole thread (temporary threads of stateless runs). */
  deleteThread(): Promise<void>;
  scheduleAlarm(): Promise<void>;
  bindGraph(graphId: string, config: Record<string, unknown>): Promise<LoadedGraph | undefined>;
  /** Where executed runs are traced; null when agent tracing is off. */
  traceSink(): TraceSink | null;
  /** Where protocol v2 runs (`kwargs.protocol_stream`) report their start, events and end. */
  protocolSink?: ProtocolRunSink;
  /** The deployment's run wall-clock limit, ms: for runs stored before each run kept its own. */
  runTimeoutMs(): number;
  /** The byte bound of the thread's merged request config (default MAX_JSON_FIELD_BYTES; the deployment's var may lower it). */
  requestConfigLimit?: number;
  /** The TTL of a thread a run creates (langgraph.json `checkpointer.ttl`; none when absent). */
  defaultTtl?: TtlSetting | null;
}

/** How a protocol v2 run ended, for its terminal lifecycle event. */
export interface ProtocolRunEnd {
  status: "success" | "error" | "interrupted";
  error?: string;
  /** The run left interrupts waiting for an answer. */
  pendingInterrupts: boolean;
}

export interface ProtocolRunSink {
  runStarted(run: { run_id: string; graphId: string }): void;
  event(runId: string, event: GraphProtocolEvent): void;
  runEnded(run: { run_id: string; graphId: string }, end: ProtocolRunEnd): void;
}

export interface TraceSink {
  /** The deployment's tracing project for agent runs (a run may name its own). */
  project: string | undefined;
  /** Stores a trace given as consecutive batches of runs (each one RPC at most, see `takeRunBatches`). */
  record(batches: Iterable<TracedRun[]>): Promise<void>;
}
