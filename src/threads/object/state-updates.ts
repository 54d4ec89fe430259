// Inside the thread's Durable Object (threads/object/): state updates and supersteps, written through the thread's graph.
import type { LoadedGraph } from "../../deployment/graphs.ts";
import { deployment } from "../../deployment/index.ts";
import type { SuperstepUpdate, UpdateStateInput } from "../thread-rpc.ts";
import { type CheckpointRef, fail, ok, type Result } from "../types.ts";
import type { ThreadCheckpoints } from "./checkpoints.ts";
import { checkpointConfig, checkpointRef, pendingInterrupts, stateJson, unknownNode } from "./graph-state.ts";
import type { ThreadRecord } from "./record.ts";

/**
 * Writes a state update through the thread's graph, as `asNode`, and copies the new state onto the
 * record (which the caller then saves).
 */
export async function updateState(
  checkpoints: ThreadCheckpoints,
  record: ThreadRecord,
  input: UpdateStateInput,
): Promise<Result<{ checkpoint: CheckpointRef | null }>> {
  if (record.status === "busy") return fail("conflict", "Thread is busy");
  const graphId = record.metadata.graph_id;
  if (typeof graphId !== "string") return fail("invalid", noGraph(record));
  const graph = await checkpoints.graph(record);
  if (!graph) return fail("invalid", `Graph "${graphId}" of thread ${record.threadId} is not deployed`);
  if (input.asNode) {
    const problem = unknownNode(graph, graphId, input.asNode);
    if (problem) return fail("invalid", problem);
  }
  let next: Awaited<ReturnType<LoadedGraph["updateState"]>>;
  try {
    next = await graph.updateState(checkpointConfig(record.threadId, input.checkpoint), input.values, input.asNode);
  } catch (error) {
    return fail("invalid", `Cannot update the state of thread ${record.threadId}: ${(error as Error).message}`);
  }
  await refreshValues(record, graph);
  record.updatedAt = record.stateUpdatedAt = new Date().toISOString();
  return ok({ checkpoint: checkpointRef(next) });
}

/** Applies a new thread's `supersteps` (state updates only) and copies the resulting state onto the record. */
export async function applySupersteps(
  checkpoints: ThreadCheckpoints,
  record: ThreadRecord,
  supersteps: { updates: SuperstepUpdate[] }[],
): Promise<Result<true>> {
  const graphId = record.metadata.graph_id;
  if (typeof graphId !== "string") return fail("invalid", noGraph(record));
  const graph = await checkpoints.graph(record);
  if (!graph) {
    return fail(
      "invalid",
      `Graph "${graphId}" is not deployed (graphs: ${deployment.graphs.map((g) => g.id).join(", ")})`,
    );
  }
  const steps = [];
  for (const [s, superstep] of supersteps.entries()) {
    const updates = [];
    for (const [u, update] of superstep.updates.entries()) {
      const where = `supersteps[${s}].updates[${u}]`;
      const problem = unknownNode(graph, graphId, update.as_node);
      if (problem) return fail("invalid", `${where}: ${problem}`);
      if (update.command && (update.command.goto !== undefined || update.command.resume !== undefined)) {
        return fail("invalid", `${where}: only command.update can be applied when creating a thread`);
      }
      updates.push({ values: update.command?.update ?? update.values ?? null, asNode: update.as_node });
    }
    steps.push({ updates });
  }
  try {
    await graph.bulkUpdateState(checkpointConfig(record.threadId), steps);
  } catch (error) {
    return fail("invalid", `Cannot apply supersteps to thread ${record.threadId}: ${(error as Error).message}`);
  }
  await refreshValues(record, graph);
  return ok(true);
}

/** Copies the latest root state's values and pending interrupts onto the record. */
async function refreshValues(record: ThreadRecord, graph: LoadedGraph): Promise<void> {
  const state = stateJson(await graph.getState(checkpointConfig(record.threadId)));
  record.values = (state.values ?? {}) as Record<string, unknown>;
  record.interrupts = pendingInterrupts(state);
}

function noGraph(record: ThreadRecord): string {
  return `Thread ${record.threadId} has no graph ID: create it with graph_id (or metadata.graph_id) to apply state updates`;
}
