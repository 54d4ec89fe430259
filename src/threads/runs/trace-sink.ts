import { log } from "../../observability/log.ts";
import { tracesDatabase } from "../../tracing/directory.ts";
import { Ingestor, type RunProblem } from "../../tracing/ingest.ts";
import { tracedRunLimit } from "../../tracing/run-size.ts";
import type { ThreadRecord } from "../object/record.ts";
import type { TraceSink } from "./ports.ts";

/**
 * Where a thread's agent runs are traced: straight into the workspace's trace shards (no HTTP round
 * trip). Null when agent tracing is off.
 */
export function agentTraceSink(env: Env, record: ThreadRecord): TraceSink | null {
  // Vars are typed by their wrangler.toml values; a deployment may override them with any text.
  if ((env.AGENT_TRACING as string) === "off") return null;
  return {
    project: env.AGENT_TRACING_PROJECT,
    record: async (batches) => {
      // A field over the trace limit is stored as a marker: the rest of the trace is kept.
      const ingestor = new Ingestor(tracesDatabase(env, record.workspaceId), env.TRACE_SHARD, record.workspaceId, {
        maxRunBytes: tracedRunLimit(env),
        truncateOversize: true,
        env,
      });
      // One batch at a time: the next is converted only once this one is stored.
      const errors: RunProblem[] = [];
      for (const runs of batches) if (runs.length) errors.push(...(await ingestor.ingest(runs, [])).errors);
      if (errors.length)
        log.warn("agent run trace rejected runs", { thread_id: record.threadId, errors: errors.slice(0, 3) });
    },
  };
}
