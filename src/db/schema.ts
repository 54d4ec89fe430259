import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * D1 schema. Timestamps are ISO-8601 UTC strings (they sort lexically and go on the wire unchanged).
 * Migrations in migrations/ are generated from this file by `npm run db:generate` (drizzle-kit).
 */

/**
 * The run payload a cron row keeps (JSON). crons/schemas.ts fills this interface in with its
 * `CronPayload` (declaration merging), so the table is typed without db/ importing a domain.
 */
// biome-ignore lint/suspicious/noEmptyInterface: crons/schemas.ts declares its members.
export interface CronPayloadColumn {}

const createdAt = () => text("created_at").notNull().default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`);

/** `plan` null: the deployment's `DEFAULT_PLAN` applies (see tenancy/plans.ts). */
export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  displayName: text("display_name").notNull(),
  createdAt: createdAt(),
  plan: text("plan", { enum: ["developer", "plus", "enterprise"] }),
});

/** A workspace is a tenant: every later resource (threads, projects, exports) belongs to one. */
export const workspaces = sqliteTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    displayName: text("display_name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("workspaces_organization_idx").on(t.organizationId)],
);

/**
 * API keys are stored as SHA-256 hashes of the full key; the key itself is shown once, at creation.
 * `workspaceId` null means the key is scoped to its whole organization.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    workspaceId: text("workspace_id").references(() => workspaces.id),
    role: text("role", { enum: ["admin", "member"] }).notNull(),
    description: text("description").notNull().default(""),
    keyHash: text("key_hash").notNull(),
    shortKey: text("short_key").notNull(),
    createdAt: createdAt(),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [uniqueIndex("api_keys_key_hash_idx").on(t.keyHash), index("api_keys_organization_idx").on(t.organizationId)],
);

export type OrganizationRow = typeof organizations.$inferSelect;
export type WorkspaceRow = typeof workspaces.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * The former search index of threads (D1), no longer read or written: the index lives in the
 * workspace's `threads` partitions (src/threads/search-index.ts). Kept for the data migration.
 * Was: the thread's Durable Object is the source of truth and writes this row after
 * every change, so search and count are answered by D1 alone. `values` is null when the state is too
 * large to index (`valuesIndexed` = 0); search then reads those values from the thread's DO.
 */
export const threadIndex = sqliteTable(
  "threads",
  {
    workspaceId: text("workspace_id").notNull(),
    threadId: text("thread_id").notNull(),
    status: text("status", { enum: ["idle", "busy", "interrupted", "error"] }).notNull(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    values: text("values", { mode: "json" }).$type<unknown>(),
    valuesIndexed: integer("values_indexed", { mode: "boolean" }).notNull().default(true),
    config: text("config", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    interrupts: text("interrupts", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    error: text("error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    stateUpdatedAt: text("state_updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.threadId] }),
    index("threads_workspace_created_idx").on(t.workspaceId, t.createdAt),
    index("threads_workspace_updated_idx").on(t.workspaceId, t.updatedAt),
    index("threads_workspace_status_idx").on(t.workspaceId, t.status),
  ],
);

export type ThreadIndexRow = typeof threadIndex.$inferSelect;

/**
 * Assistants: configured instances of the deployed graphs, per workspace. Every workspace has its
 * own copy of each graph's system assistant (same id everywhere), so a patch stays in its workspace.
 */
export const assistants = sqliteTable(
  "assistants",
  {
    workspaceId: text("workspace_id").notNull(),
    assistantId: text("assistant_id").notNull(),
    graphId: text("graph_id").notNull(),
    config: text("config", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    context: text("context", { mode: "json" }).notNull().$type<unknown>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    version: integer("version").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.assistantId] }),
    index("assistants_workspace_created_idx").on(t.workspaceId, t.createdAt),
    index("assistants_workspace_graph_idx").on(t.workspaceId, t.graphId),
  ],
);

/** Every version an assistant has had; the assistant row mirrors its current one. */
export const assistantVersions = sqliteTable(
  "assistant_versions",
  {
    workspaceId: text("workspace_id").notNull(),
    assistantId: text("assistant_id").notNull(),
    version: integer("version").notNull(),
    graphId: text("graph_id").notNull(),
    config: text("config", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    context: text("context", { mode: "json" }).notNull().$type<unknown>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.assistantId, t.version] })],
);

export type AssistantRow = typeof assistants.$inferSelect;
export type AssistantVersionRow = typeof assistantVersions.$inferSelect;

/**
 * The long-term memory store. `namespace` is the labels joined with "." (labels may not contain a
 * period, so the join is unambiguous). Items with a TTL expire at `expires_at`; reads ignore expired
 * items and the minute tick deletes them.
 */
export const storeItems = sqliteTable(
  "store_items",
  {
    workspaceId: text("workspace_id").notNull(),
    namespace: text("namespace").notNull(),
    key: text("key").notNull(),
    value: text("value", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    ttlMinutes: integer("ttl_minutes"),
    expiresAt: text("expires_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.namespace, t.key] }),
    index("store_items_expires_idx").on(t.expiresAt),
  ],
);

export type StoreItemRow = typeof storeItems.$inferSelect;

/**
 * Periodic runs. `next_run_date` is both the schedule and the claim: the tick fires a cron by moving
 * it forward with a compare-and-set, so overlapping or retried ticks start each run exactly once.
 */
export const crons = sqliteTable(
  "crons",
  {
    workspaceId: text("workspace_id").notNull(),
    cronId: text("cron_id").primaryKey(),
    assistantId: text("assistant_id").notNull(),
    threadId: text("thread_id"),
    schedule: text("schedule").notNull(),
    timezone: text("timezone").notNull(),
    payload: text("payload", { mode: "json" }).notNull().$type<CronPayloadColumn>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    onRunCompleted: text("on_run_completed", { enum: ["delete", "keep"] }),
    endTime: text("end_time"),
    userId: text("user_id"),
    nextRunDate: text("next_run_date"),
    disabledReason: text("disabled_reason"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("crons_due_idx").on(t.enabled, t.nextRunDate),
    index("crons_workspace_created_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type CronRow = typeof crons.$inferSelect;

/** A2A tasks are runs; this maps a task to the thread (A2A context) its run lives in. */
export const a2aTasks = sqliteTable("a2a_tasks", {
  taskId: text("task_id").primaryKey(),
  workspaceId: text("workspace_id").notNull(),
  threadId: text("thread_id").notNull(),
  assistantId: text("assistant_id").notNull(),
  createdAt: text("created_at").notNull(),
});

/** Tracing projects (LangSmith "sessions"): the runs themselves live in TraceShardDOs. */
export const tracingProjects = sqliteTable(
  "tracing_projects",
  {
    id: text("id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    extra: text("extra", { mode: "json" }).$type<Record<string, unknown>>(),
    referenceDatasetId: text("reference_dataset_id"),
    defaultDatasetId: text("default_dataset_id"),
    traceTier: text("trace_tier"),
    startTime: text("start_time").notNull(),
    endTime: text("end_time"),
    createdAt: text("created_at").notNull(),
  },
  // Ids are unique per workspace (migration 0009): one workspace cannot learn another's ids.
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex("tracing_projects_name_idx").on(t.workspaceId, t.name),
  ],
);

export type TracingProjectRow = typeof tracingProjects.$inferSelect;

/** Where each traced run lives, so a patch or read that names only the run id finds its shard. */
export const traceRunLocations = sqliteTable(
  "trace_run_locations",
  {
    workspaceId: text("workspace_id").notNull(),
    runId: text("run_id").notNull(),
    projectId: text("project_id").notNull(),
    day: text("day").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.runId] })],
);

/** The shards (project × UTC day) that hold runs: run queries fan out over these. */
export const traceShards = sqliteTable(
  "trace_shards",
  {
    workspaceId: text("workspace_id").notNull(),
    projectId: text("project_id").notNull(),
    day: text("day").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.projectId, t.day] })],
);

/**
 * Feedback on traced runs (`/api/v1/feedback`), the record the API reads, lists and pages. Its run's
 * shard holds a copy of (id, run_id, key, score, value) for filters and `feedback_stats`; `project_id`
 * and `day` name that shard, null while the run is not located.
 */
export const traceFeedback = sqliteTable(
  "trace_feedback",
  {
    id: text("id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    runId: text("run_id"),
    traceId: text("trace_id"),
    projectId: text("project_id"),
    day: text("day"),
    key: text("key").notNull(),
    score: real("score"),
    value: text("value", { mode: "json" }).$type<unknown>(),
    comment: text("comment"),
    correction: text("correction", { mode: "json" }).$type<unknown>(),
    feedbackSource: text("feedback_source", { mode: "json" }).$type<Record<string, unknown> | null>(),
    feedbackGroupId: text("feedback_group_id"),
    comparativeExperimentId: text("comparative_experiment_id"),
    createdAt: text("created_at").notNull(),
    modifiedAt: text("modified_at").notNull(),
  },
  (t) => [
    // Ids are chosen by clients: one workspace's id never collides with, or reveals, another's.
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index("trace_feedback_run_idx").on(t.workspaceId, t.runId),
    index("trace_feedback_created_idx").on(t.workspaceId, t.createdAt),
    // Feedback waiting for its run (no shard yet): what ingestion and the minute sweep look for.
    index("trace_feedback_waiting_idx")
      .on(t.workspaceId, t.createdAt)
      .where(sql`${t.day} IS NULL AND ${t.runId} IS NOT NULL`),
  ],
);

export type TraceFeedbackRow = typeof traceFeedback.$inferSelect;

/** Bulk-export destinations (S3-compatible buckets); credentials only as AES-GCM ciphertext. */
export const exportDestinations = sqliteTable(
  "export_destinations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    destinationType: text("destination_type").notNull(),
    displayName: text("display_name").notNull(),
    config: text("config", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** `iv.ciphertext` (base64) of the credentials JSON, or null to use the deployment's default credentials. */
    credentials: text("credentials"),
    credentialsKeys: text("credentials_keys", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("export_destinations_workspace_idx").on(t.workspaceId, t.createdAt)],
);

export type ExportDestinationRow = typeof exportDestinations.$inferSelect;

/** Bulk exports: one-off windows, scheduled parents, and the exports a schedule spawns. */
export const bulkExports = sqliteTable(
  "bulk_exports",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    destinationId: text("destination_id").notNull(),
    sessionId: text("session_id").notNull(),
    startTime: text("start_time").notNull(),
    endTime: text("end_time"),
    filter: text("filter"),
    exportFields: text("export_fields", { mode: "json" }).$type<string[]>(),
    formatVersion: text("format_version").notNull(),
    compression: text("compression").notNull(),
    intervalHours: integer("interval_hours"),
    status: text("status").notNull(),
    sourceBulkExportId: text("source_bulk_export_id"),
    /** Scheduled parents: where the next spawned window starts. */
    nextWindowStart: text("next_window_start"),
    /** When it became Running (the 24 h timeout counts from here). */
    startedAt: text("started_at"),
    /** Why it failed or timed out. */
    error: text("error"),
    /** Failed attempts at writing the manifest: past `EXPORT_MAX_RETRIES` retries the export fails. */
    manifestAttempts: integer("manifest_attempts").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    finishedAt: text("finished_at"),
  },
  (t) => [
    index("bulk_exports_workspace_idx").on(t.workspaceId, t.createdAt),
    index("bulk_exports_status_idx").on(t.status),
    index("bulk_exports_source_idx").on(t.sourceBulkExportId),
  ],
);

export type BulkExportRow = typeof bulkExports.$inferSelect;

/** One export run: one (project, UTC day) partition of an export, written file by file. */
export const bulkExportRuns = sqliteTable(
  "bulk_export_runs",
  {
    id: text("id").primaryKey(),
    exportId: text("export_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    /** The partition's UTC day, YYYY-MM-DD. */
    day: text("day").notNull(),
    startTime: text("start_time").notNull(),
    endTime: text("end_time").notNull(),
    status: text("status").notNull(),
    retryNumber: integer("retry_number").notNull().default(0),
    errors: text("errors", { mode: "json" }).$type<Record<string, string>>().notNull(),
    rowsWritten: integer("rows_written").notNull().default(0),
    bytesWritten: integer("bytes_written").notNull().default(0),
    files: text("files", { mode: "json" }).$type<{ key: string; rows: number; bytes: number }[]>().notNull(),
    /**
     * The (start_time, id) of the last row written, in the day's split number `split` (0 when
     * absent, see tracing/splits.ts); the next file starts after it. An empty start_time marks the
     * start of that split.
     */
    cursor: text("cursor", { mode: "json" }).$type<{ start_time: string; id: string; split?: number }>(),
    prefix: text("prefix").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    finishedAt: text("finished_at"),
  },
  (t) => [index("bulk_export_runs_export_idx").on(t.exportId, t.day)],
);

export type BulkExportRunRow = typeof bulkExportRuns.$inferSelect;

/**
 * The move of a table's rows from D1 into workspace partitions (src/workspace/migration.ts): one row
 * per legacy table; `done_at` once the table is empty in D1. `leased_until` keeps one chain of queue
 * messages per table at a time.
 */
export const partitionMigrations = sqliteTable("partition_migrations", {
  tableName: text("table_name").primaryKey(),
  moved: integer("moved").notNull().default(0),
  leasedUntil: integer("leased_until").notNull().default(0),
  doneAt: text("done_at"),
});
