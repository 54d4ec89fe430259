import { AsyncLocalStorage } from "node:async_hooks";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { createApp } from "./app.ts";
import { runTick, type TickJob } from "./background/cron.ts";
import { dispatchQueueBatch, type WorkHandler } from "./background/queue.ts";
import { cronAlarm } from "./crons/service.ts";
import { applyDeploymentEnv } from "./deployment/index.ts";
import { parquetMemoryBytes } from "./export/parquet.ts";
import { EXPORT_RUN_MESSAGE, type ExportRunMessage, handleExportRun } from "./export/partition-writer.ts";
import {
  EXPORT_PLAN_MESSAGE,
  EXPORT_PLAN_PAGE_MESSAGE,
  type ExportPlanMessage,
  type ExportPlanPageMessage,
  enqueueExportPlans,
  exportTick,
  planWorkspaceExports,
} from "./export/planner.ts";
import { guardDurableObject, guardWorker, registerMemoryProbe } from "./limits-guard/index.ts";
import { MetricsDO as MetricsObject } from "./observability/metrics-do.ts";
import { storeAlarm } from "./store/store.ts";
import { handleThreadFanOut, THREAD_FAN_OUT_MESSAGE, type ThreadFanOutMessage } from "./threads/fan-out.ts";
import { ThreadDO as ThreadObject } from "./threads/object/thread-do.ts";
import { expireLocations } from "./tracing/directory.ts";
import { placeWaitingFeedback } from "./tracing/feedback/service.ts";
import { handleProjectPurge, PROJECT_PURGE_MESSAGE, type ProjectPurgeMessage } from "./tracing/projects/purge.ts";
import { TraceShardDO as TraceShardObject } from "./tracing/trace-shard-do.ts";
import {
  handlePartitionMigration,
  PARTITION_MIGRATION_MESSAGE,
  type PartitionMigrationMessage,
  startPartitionMigrations,
} from "./workspace/migration.ts";
import { workspaceObject } from "./workspace/workspace-do.ts";

// Wrangler bundles LangGraph's web build, which never registers AsyncLocalStorage; without this,
// interrupt(), getStore() and getWriter() fail with "Called interrupt() outside the context of a graph".
AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());
applyDeploymentEnv();

// The Parquet encoder's WebAssembly memory is the part of the isolate's memory the guard can measure.
registerMemoryProbe("parquet-wasm", parquetMemoryBytes);
// Each Durable Object class and the Worker's handlers go through the limits guard, which is the class
// or handler itself unless the LIMITS_GUARD var turns it on (the local runtime and the tests do).
export const MetricsDO = guardDurableObject(MetricsObject);
export const ThreadDO = guardDurableObject(ThreadObject);
export const TraceShardDO = guardDurableObject(TraceShardObject);
/** Each kind of workspace partition's scheduled work, run on its object's alarm. */
export const WorkspaceDO = guardDurableObject(
  workspaceObject({ crons: cronAlarm, store: storeAlarm, traces: placeWaitingFeedback, runs: expireLocations }),
);

const app = createApp();

/** Work done on every minute tick. Crons and the store's TTL sweep run on each workspace's own alarm instead. */
export const tickJobs: Record<string, TickJob> = {
  "bulk-export": (env, at) => exportTick(env, at),
  "partition-migration": async (env) => void (await startPartitionMigrations(env)),
};
/** Handlers of the work queue, by message kind. */
export const queueHandlers: Record<string, WorkHandler> = {
  [EXPORT_RUN_MESSAGE]: (body, env) => handleExportRun(body as ExportRunMessage, env),
  [EXPORT_PLAN_MESSAGE]: (body, env) => {
    const { workspaceId, at } = body as unknown as ExportPlanMessage;
    return planWorkspaceExports(env, workspaceId, new Date(at));
  },
  [EXPORT_PLAN_PAGE_MESSAGE]: async (body, env) => {
    const { after, at } = body as unknown as ExportPlanPageMessage;
    await enqueueExportPlans(env, new Date(at), after);
  },
  [THREAD_FAN_OUT_MESSAGE]: (body, env) => handleThreadFanOut(body as unknown as ThreadFanOutMessage, env),
  [PROJECT_PURGE_MESSAGE]: (body, env) => handleProjectPurge(body as unknown as ProjectPurgeMessage, env),
  [PARTITION_MIGRATION_MESSAGE]: (body, env) =>
    handlePartitionMigration(body as unknown as PartitionMigrationMessage, env),
};

export default guardWorker({
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runTick(env, new Date(controller.scheduledTime), tickJobs));
  },
  async queue(batch, env, _ctx) {
    await dispatchQueueBatch(batch, env, queueHandlers);
  },
} satisfies ExportedHandler<Env>);
