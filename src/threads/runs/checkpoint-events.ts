import { isObject } from "../../core/json.ts";
import { toJson } from "../../db/serialize.ts";
import { checkpointRef } from "../object/graph-state.ts";
import type { CheckpointRef } from "../types.ts";

/**
 * Stream payloads that describe a checkpoint (`checkpoints` events, `debug` records of type
 * `checkpoint`) and tasks (`tasks` events, `debug` task records), in the platform's shape.
 *
 * LangGraph hands these over with the run's whole live config, whose `configurable` holds what the
 * server put there for the nodes: copied request headers, the auth user, server ids. None of that
 * goes out. A checkpoint is named by `checkpoint` / `parent_checkpoint`
 * (`{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`), as the official servers add them.
 */

interface GraphCheckpointChunk {
  config?: unknown;
  parentConfig?: unknown;
  parent_config?: unknown;
  values?: unknown;
  metadata?: unknown;
  next?: unknown;
  tasks?: unknown;
}

const refOf = (config: unknown): CheckpointRef | null =>
  isObject(config) && isObject(config.configurable) ? checkpointRef({ configurable: config.configurable }) : null;

/**
 * A checkpoint payload. `withConfig` keeps `config` / `parent_config` for `checkpoints` events (the
 * SDK's type of them has `config`), reduced to the checkpoint's address; `debug` records drop them.
 */
export function checkpointPayload(chunk: unknown, options: { withConfig: boolean }): unknown {
  if (!isObject(chunk)) return toJson(chunk);
  const { config, parentConfig, parent_config, values, metadata, next, tasks } = chunk as GraphCheckpointChunk;
  const checkpoint = refOf(config);
  const parent = refOf(parentConfig ?? parent_config);
  return {
    values: toJson(values),
    metadata: toJson(metadata),
    next: toJson(next ?? []),
    tasks: Array.isArray(tasks) ? tasks.map(taskPayload) : [],
    checkpoint,
    parent_checkpoint: parent,
    ...(options.withConfig
      ? { config: checkpoint && { configurable: checkpoint }, parent_config: parent && { configurable: parent } }
      : {}),
  };
}

/**
 * A task as streams show it. A subgraph task's `state` is a config naming the subgraph's namespace:
 * it becomes `checkpoint` `{thread_id, checkpoint_ns, checkpoint_id, checkpoint_map}`.
 */
export function taskPayload(task: unknown): unknown {
  if (!isObject(task)) return toJson(task);
  const { state, ...rest } = task;
  const checkpoint = refOf(state);
  if (checkpoint) return { ...(toJson(rest) as Record<string, unknown>), checkpoint };
  return toJson(task);
}

/** A `debug` record: checkpoint and task payloads shaped as above. */
export function debugPayload(chunk: unknown): unknown {
  if (!isObject(chunk)) return toJson(chunk);
  const { payload, ...rest } = chunk;
  const shaped = rest.type === "checkpoint" ? checkpointPayload(payload, { withConfig: false }) : taskPayload(payload);
  return { ...(toJson(rest) as Record<string, unknown>), payload: shaped };
}
