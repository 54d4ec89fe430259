import { eq, sql } from "drizzle-orm";
import { bySize } from "../core/batches.ts";
import { database } from "../db/client.ts";
import { partitionMigrations } from "../db/schema.ts";
import { log } from "../observability/log.ts";
import { armPartition, type WorkspaceBindings } from "./database.ts";
import { hashBucket, type Partition, partitionName, RUN_LOCATOR_SHARDS, THREAD_INDEX_SHARDS } from "./partition.ts";

/**
 * Moves a deployment's per-workspace rows out of the global D1 (the layout before workspace
 * partitions) into the partitions, by itself: the minute tick starts one chain of queue messages per
 * table that still has rows, each message moves one page and sends the next. A page is copied into
 * its partitions (a row the partition already has is newer, written there since the upgrade, and
 * wins) and then deleted from D1, so every row is in D1 or in its partition at any moment, a page
 * moved twice changes nothing, and an interrupted chain resumes where the rows left off.
 */

export const PARTITION_MIGRATION_MESSAGE = "workspace.partition-migration";

export interface PartitionMigrationMessage {
  kind: typeof PARTITION_MIGRATION_MESSAGE;
  table: string;
}

type Row = Record<string, string | number | null>;

/** A D1 table of the old layout: its columns (frozen: the layout no longer changes) and where each row goes. */
interface LegacyTable {
  columns: readonly string[];
  partition(row: Row): Partition;
  /** A column's value as it moves, when the partition keeps less than D1 did (SQL over the D1 row). */
  select?: Record<string, string>;
}

const ws = (row: Row) => String(row.workspace_id);

export const LEGACY_TABLES: Record<string, LegacyTable> = {
  threads: {
    columns: [
      "workspace_id",
      "thread_id",
      "status",
      "metadata",
      "values",
      "values_indexed",
      "config",
      "interrupts",
      "error",
      "created_at",
      "updated_at",
      "state_updated_at",
    ],
    partition: (row) => ({
      workspaceId: ws(row),
      kind: "threads",
      shard: hashBucket(String(row.thread_id), THREAD_INDEX_SHARDS),
    }),
  },
  store_items: {
    columns: ["workspace_id", "namespace", "key", "value", "created_at", "updated_at", "ttl_minutes", "expires_at"],
    partition: (row) => ({ workspaceId: ws(row), kind: "store" }),
  },
  crons: {
    columns: [
      "workspace_id",
      "cron_id",
      "assistant_id",
      "thread_id",
      "schedule",
      "timezone",
      "payload",
      "metadata",
      "enabled",
      "on_run_completed",
      "end_time",
      "user_id",
      "next_run_date",
      "disabled_reason",
      "created_at",
      "updated_at",
    ],
    partition: (row) => ({ workspaceId: ws(row), kind: "crons" }),
  },
  a2a_tasks: {
    columns: ["task_id", "workspace_id", "thread_id", "assistant_id", "created_at"],
    partition: (row) => ({ workspaceId: ws(row), kind: "a2a" }),
  },
  tracing_projects: {
    columns: [
      "id",
      "workspace_id",
      "name",
      "description",
      "extra",
      "reference_dataset_id",
      "default_dataset_id",
      "trace_tier",
      "start_time",
      "end_time",
      "created_at",
    ],
    partition: (row) => ({ workspaceId: ws(row), kind: "traces" }),
  },
  trace_shards: {
    columns: ["workspace_id", "project_id", "day"],
    partition: (row) => ({ workspaceId: ws(row), kind: "traces" }),
  },
  trace_feedback: {
    columns: [
      "id",
      "workspace_id",
      "run_id",
      "trace_id",
      "project_id",
      "day",
      "key",
      "score",
      "value",
      "comment",
      "correction",
      "feedback_source",
      "feedback_group_id",
      "comparative_experiment_id",
      "created_at",
      "modified_at",
    ],
    partition: (row) => ({ workspaceId: ws(row), kind: "traces" }),
  },
  trace_run_locations: {
    columns: ["workspace_id", "run_id", "project_id", "day"],
    partition: (row) => ({
      workspaceId: ws(row),
      kind: "runs",
      shard: hashBucket(String(row.run_id), RUN_LOCATOR_SHARDS),
    }),
  },
};

/** Rows read from D1 per page, and the bytes of row data one page moves (far below 128 MB of memory and 32 MiB per RPC). */
const PAGE_ROWS = 200;
const PAGE_BYTES = 8 * 1024 * 1024;
/** How long a chain may go without a step before the tick starts another. */
const LEASE_MS = 5 * 60_000;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The rowids and sizes of the next page's rows, then the rows that fit in PAGE_BYTES (at least one). */
async function readPage(env: Env, table: string, spec: LegacyTable): Promise<{ rowids: number[]; rows: Row[] }> {
  const d1 = database(env).$client;
  const size = spec.columns.map((c) => `coalesce(length(CAST(${quote(c)} AS BLOB)), 0)`).join(" + ");
  const sizes = await d1
    .prepare(`SELECT rowid AS id, ${size} AS bytes FROM ${quote(table)} ORDER BY rowid LIMIT ?`)
    .bind(PAGE_ROWS)
    .all<{ id: number; bytes: number }>();
  const [first] = bySize(sizes.results, (r) => r.bytes, PAGE_BYTES);
  if (!first) return { rowids: [], rows: [] };
  const rowids = first.map((r) => r.id);
  const columns = spec.columns.map((c) => `${spec.select?.[c] ?? quote(c)} AS ${quote(c)}`).join(", ");
  const rows = await d1
    .prepare(`SELECT ${columns} FROM ${quote(table)} WHERE rowid IN (SELECT value FROM json_each(?))`)
    .bind(JSON.stringify(rowids))
    .all<Row>();
  return { rowids, rows: rows.results };
}

/** Copies rows into one partition: as many rows per statement as 100 bound parameters allow, one atomic RPC. */
async function copyInto(env: WorkspaceBindings, table: string, spec: LegacyTable, partition: Partition, rows: Row[]) {
  const perStatement = Math.max(1, Math.floor(100 / spec.columns.length));
  const statements = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const group = rows.slice(i, i + perStatement);
    const tuple = `(${spec.columns.map(() => "?").join(", ")})`;
    statements.push({
      sql: `INSERT INTO ${quote(table)} (${spec.columns.map(quote).join(", ")}) VALUES ${group.map(() => tuple).join(", ")} ON CONFLICT DO NOTHING`,
      params: group.flatMap((row) => spec.columns.map((c) => row[c] ?? null)),
      method: "run" as const,
    });
  }
  await env.WORKSPACE.getByName(partitionName(partition)).exec(partition, statements);
  // The partition's scheduled work (crons due, expiries, feedback waiting) looks at what it now holds.
  await armPartition(env, partition, Date.now());
}

/**
 * Moves one page of a table; answers whether rows remain. Rows of one partition go in one RPC, the
 * partitions of a page in parallel, and the page leaves D1 only once every partition has it.
 */
export async function movePage(env: Env, table: string): Promise<boolean> {
  const spec = LEGACY_TABLES[table];
  const { rowids, rows } = await readPage(env, table, spec);
  if (!rowids.length) return false;
  const byPartition = new Map<string, { partition: Partition; rows: Row[] }>();
  for (const row of rows) {
    const partition = spec.partition(row);
    const name = partitionName(partition);
    const group = byPartition.get(name) ?? { partition, rows: [] };
    group.rows.push(row);
    byPartition.set(name, group);
  }
  await Promise.all([...byPartition.values()].map((g) => copyInto(env, table, spec, g.partition, g.rows)));
  const d1 = database(env).$client;
  await d1.batch([
    d1
      .prepare(`DELETE FROM ${quote(table)} WHERE rowid IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify(rowids)),
    d1
      .prepare("UPDATE partition_migrations SET moved = moved + ?, leased_until = ? WHERE table_name = ?")
      .bind(rowids.length, Date.now() + LEASE_MS, table),
  ]);
  return true;
}

/** A queue step: one page, then the next message, or the table marked done. */
export async function handlePartitionMigration(message: PartitionMigrationMessage, env: Env): Promise<void> {
  if (!LEGACY_TABLES[message.table]) return;
  if (await movePage(env, message.table)) {
    await env.QUEUE.send({
      kind: PARTITION_MIGRATION_MESSAGE,
      table: message.table,
    } satisfies PartitionMigrationMessage);
    return;
  }
  await database(env)
    .update(partitionMigrations)
    .set({ doneAt: new Date().toISOString(), leasedUntil: 0 })
    .where(eq(partitionMigrations.tableName, message.table))
    .run();
  log.info("partition migration done", { table: message.table });
}

/** Tables known done in this isolate: once all are, the tick costs nothing. */
const done = new Set<string>();

/**
 * The tick's part: for each legacy table not yet moved and with no live chain, takes the lease and
 * starts a chain. One D1 batch per tick until every table is done, then none.
 */
export async function startPartitionMigrations(env: Env, now = Date.now()): Promise<string[]> {
  const tables = Object.keys(LEGACY_TABLES).filter((t) => !done.has(t));
  if (!tables.length) return [];
  const db = database(env);
  await db
    .insert(partitionMigrations)
    .values(tables.map((tableName) => ({ tableName })))
    .onConflictDoNothing()
    .run();
  const rows = await db.select().from(partitionMigrations).all();
  const started: string[] = [];
  for (const row of rows) {
    if (row.doneAt) {
      done.add(row.tableName);
      continue;
    }
    if (!LEGACY_TABLES[row.tableName] || row.leasedUntil > now) continue;
    // Compare-and-set: of two ticks that saw the same expired lease, one starts the chain.
    const [taken] = await db
      .update(partitionMigrations)
      .set({ leasedUntil: now + LEASE_MS })
      .where(
        sql`${partitionMigrations.tableName} = ${row.tableName} AND ${partitionMigrations.leasedUntil} = ${row.leasedUntil}`,
      )
      .returning({ tableName: partitionMigrations.tableName });
    if (!taken) continue;
    await env.QUEUE.send({
      kind: PARTITION_MIGRATION_MESSAGE,
      table: row.tableName,
    } satisfies PartitionMigrationMessage);
    started.push(row.tableName);
  }
  return started;
}

/** Whether a legacy table may still hold rows (reads fall back to D1 until it is done). */
export async function legacyRowsRemain(env: Env, table: keyof typeof LEGACY_TABLES): Promise<boolean> {
  if (done.has(table)) return false;
  const row = await database(env)
    .select({ doneAt: partitionMigrations.doneAt })
    .from(partitionMigrations)
    .where(eq(partitionMigrations.tableName, table))
    .get();
  if (row?.doneAt) done.add(table);
  return !row?.doneAt;
}
