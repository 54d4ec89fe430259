// Inside the thread's Durable Object (threads/object/): reading the thread's state, history and whole thread as JSON.
import { toJsonObject } from "../../db/serialize.ts";
import { type JsonBody, jsonArrayBody, jsonBody } from "../runs/json-stream.ts";
import type { HistoryInput } from "../thread-rpc.ts";
import { type CheckpointSelector, fail, ok, type Result, type ThreadStateJson } from "../types.ts";
import type { ThreadCheckpoints } from "./checkpoints.ts";
import { checkpointConfig, EMPTY_STATE, pendingInterrupts, stateJson } from "./graph-state.ts";
import { type ThreadRecord, threadJson } from "./record.ts";
import { StateCache } from "./state-cache.ts";

/**
 * Reads the thread's state, history and whole thread as JSON, keeping the root states it built in a
 * StateCache that the checkpoint saver keeps honest (see `onCheckpointChange`). Answers are JSON bytes
 * (see runs/json-stream.ts): a state may be larger than one RPC result.
 */
export class StateReader {
  readonly #cache = new StateCache();

  constructor(private readonly checkpoints: ThreadCheckpoints) {}

  /** The saver's change listener: a changed root checkpoint drops both of its renderings. */
  onCheckpointChange(checkpointNs: string, checkpointId: string): void {
    if (checkpointNs !== "") return;
    this.#cache.forget(checkpointId);
    this.#cache.forget(`latest:${checkpointId}`);
  }

  clear(): void {
    this.#cache.clear();
  }

  /** The whole thread as JSON bytes, values above 1 MiB read back from the latest checkpoint. */
  async threadBody(record: ThreadRecord, options: { includeTtl?: boolean } = {}): Promise<JsonBody> {
    if (record.valuesOversize) await this.loadOversizeValues(record);
    return jsonBody([JSON.stringify(threadJson(record, options))]);
  }

  /** Values and interrupts too large for the thread row come from the latest checkpoint. */
  async loadOversizeValues(record: ThreadRecord): Promise<void> {
    const graph = await this.checkpoints.graph(record);
    if (!graph) return;
    const snapshot = await graph.getState(checkpointConfig(record.threadId));
    record.values = toJsonObject(snapshot.values);
    record.interrupts = pendingInterrupts(stateJson(snapshot, graph.graphId));
  }

  async state(
    record: ThreadRecord,
    input: { checkpoint?: CheckpointSelector; subgraphs?: boolean },
  ): Promise<Result<JsonBody>> {
    const outcome = await this.#stateText(record, input);
    return outcome.ok ? ok(jsonBody([outcome.value])) : outcome;
  }

  /** The state as JSON text (see StateCache). */
  async #stateText(
    record: ThreadRecord,
    input: { checkpoint?: CheckpointSelector; subgraphs?: boolean },
  ): Promise<Result<string>> {
    const graph = await this.checkpoints.graph(record);
    if (!graph) return ok(JSON.stringify(EMPTY_STATE));
    const config = checkpointConfig(record.threadId, input.checkpoint);
    const [checkpointId] = this.checkpoints.saver.checkpointIds(config, { limit: 1 });
    if (!checkpointId) {
      return input.checkpoint?.checkpoint_id
        ? fail("not_found", `Checkpoint ${input.checkpoint.checkpoint_id} not found in thread ${record.threadId}`)
        : ok(JSON.stringify(EMPTY_STATE));
    }
    const cacheable = !input.subgraphs && !input.checkpoint?.checkpoint_ns;
    // The latest state applies the checkpoint's pending writes; a state read by id (and history)
    // does not. Both renderings are cached, apart.
    const key = input.checkpoint?.checkpoint_id ? checkpointId : `latest:${checkpointId}`;
    const cached = cacheable ? this.#cache.get(key) : undefined;
    if (cached) return ok(cached);
    const json = JSON.stringify(
      stateJson(await graph.getState(config, { subgraphs: input.subgraphs ?? false }), graph.graphId),
    );
    if (cacheable) this.#cache.set(key, json);
    return ok(json);
  }

  /** History as a JSON array, newest first (see StateCache). */
  async history(record: ThreadRecord, input: HistoryInput): Promise<Result<JsonBody>> {
    const graph = await this.checkpoints.graph(record);
    if (!graph) return ok(jsonArrayBody([]));
    const config = checkpointConfig(record.threadId, input.checkpoint);
    const options = {
      limit: input.limit,
      before: input.before ? { configurable: { checkpoint_id: input.before } } : undefined,
      filter: input.metadata,
    };
    if (input.checkpoint?.checkpoint_ns) {
      const states: ThreadStateJson[] = [];
      for await (const snapshot of graph.getStateHistory(config, options))
        states.push(stateJson(snapshot, graph.graphId));
      return ok(jsonArrayBody(states.map((state) => JSON.stringify(state))));
    }
    // Root history: reuse the states already built; rebuild only the checkpoints not seen before.
    let ids: string[];
    try {
      ids = this.checkpoints.saver.checkpointIds(config, options);
    } catch (error) {
      if (error instanceof RangeError) return fail("invalid", `Invalid history filter: ${error.message}`);
      throw error;
    }
    const found = new Map<string, string>();
    for (const id of ids) {
      const cached = this.#cache.get(id);
      if (cached) found.set(id, cached);
    }
    const missing = ids.filter((id) => !found.has(id));
    const remember = (state: ThreadStateJson) => {
      const json = JSON.stringify(state);
      found.set(state.checkpoint_id!, json);
      this.#cache.set(state.checkpoint_id!, json);
    };
    if (missing.length > 3) {
      for await (const snapshot of graph.getStateHistory(config, options)) remember(stateJson(snapshot, graph.graphId));
    } else {
      for (const id of missing)
        remember(
          stateJson(await graph.getState(checkpointConfig(record.threadId, { checkpoint_id: id })), graph.graphId),
        );
    }
    return ok(jsonArrayBody(ids.flatMap((id) => found.get(id) ?? [])));
  }
}
