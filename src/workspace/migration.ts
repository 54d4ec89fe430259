import { eq, sql } from "drizzle-orm";
import { bySize, chunked } from "../core/batches.ts";
import { unavailable } from "../core/errors.ts";
import { MAX_THREAD_INDEX_STATE_BYTES } from "../core/limits.ts";
import { database } from "../db/client.ts";
import { partitionMigrations } from "../db/schema.ts";
import { placeholders, rowsPerStatement } from "../db/sql-batch.ts";
import { log } from "../observability/log.ts";
import {
  hashBucket,
  type Partition,
  type PartitionKind,
  partitionName,
  RUN_LOCATOR_SHARDS,
  THREAD_INDEX_SHARDS,
} from "./partition.ts";
import type { WorkspaceDO } from "./workspace-do.ts";

/**
 * Moves a deployment's per-workspace rows out of the global D1 (the layout before workspace
 * partitions) into the partitions, by itself: the minute tick starts one chain of queue messages per
 * table that still has rows, each message moves one page and sends the next. A page is copied into
 * its partitions (a row the partition already has is newer, written there since the upgrade, and
 * wins) and then deleted from D1, so every row is in D1 or in its partition at any moment, a page
 * moved twice changes nothing, and an interrupted chain resumes where the rows left off.
 *
 * Until a table is done, the first use of a workspace's partition moves that workspace's rows of it
 * first (`moveWorkspaceRows`), so reads see every row, and an update or delete never meets a row
 * that the chain would bring back later.
 */

export const PARTITION_MIGRATION_MESSAGE = "workspace.partition-migration";

export interface PartitionMigrationMessage {
  kind: typeof PARTITION_MIGRATION_MESSAGE;
  table: string;
}

type Row = Record<string, string | number | null>;

/** What moving rows needs: D1 (with the limits guard's switch) and the partitions. */
export type MigrationEnv = Pick<Env, "DB" | "LIMITS_GUARD"> & { WORKSPACE: DurableObjectNamespace<WorkspaceDO> };

/** A D1 table of the old layout: its columns (frozen: the layout no longer changes) and where each row goes. */
interface LegacyTable {
  columns: readonly string[];
  partition(row: Row): Partition;
  /** A column's value as it moves, when the partition keeps less than D1 did (SQL over the D1 row). */
  select?: Record<string, string>;
  /** The columns the partition's table has, when fewer than D1's (default: all of `columns`). */
  into?: readonly string[];
}

const ws = (row: Row) => String(row.workspace_id);

/** The thread index's columns, as a shard keeps them (D1's table had `workspace_id` first). */
const THREAD_COLUMNS = [
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
] as const;

export const LEGACY_TABLES: Record<string, LegacyTable> = {
  threads: {
    columns: ["workspace_id", ...THREAD_COLUMNS],
    // A shard holds one workspace (no workspace column) and keeps values only up to the index's bound.
    into: THREAD_COLUMNS,
    select: {
      values: `CASE WHEN length(CAST("values" AS BLOB)) > ${MAX_THREAD_INDEX_STATE_BYTES} THEN NULL ELSE "values" END`,
      values_indexed: `CASE WHEN length(CAST("values" AS BLOB)) > ${MAX_THREAD_INDEX_STATE_BYTES} THEN 0 ELSE values_indexed END`,
    },
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
async function readPage(
  env: MigrationEnv,
  table: string,
  spec: LegacyTable,
  workspaceId?: string,
): Promise<{ rowids: number[]; rows: Row[] }> {
  const d1 = database(env).$client;
  const size = spec.columns.map((c) => `coalesce(length(CAST(${quote(c)} AS BLOB)), 0)`).join(" + ");
  const where = workspaceId === undefined ? "" : "WHERE workspace_id = ?";
  const sizes = await d1
    .prepare(`SELECT rowid AS id, ${size} AS bytes FROM ${quote(table)} ${where} ORDER BY rowid LIMIT ?`)
    .bind(...(workspaceId === undefined ? [] : [workspaceId]), PAGE_ROWS)
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

/** Copies rows into one partition: as many rows per statement as MAX_BOUND_PARAMS allows, one atomic RPC. */
async function copyInto(env: MigrationEnv, table: string, spec: LegacyTable, partition: Partition, rows: Row[]) {
  const columns = spec.into ?? spec.columns;
  const statements = [];
  for (const group of chunked(rows, rowsPerStatement(columns.length))) {
    const tuple = `(${placeholders(columns.length)})`;
    statements.push({
      sql: `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES ${group.map(() => tuple).join(", ")} ON CONFLICT DO NOTHING`,
      params: group.flatMap((row) => columns.map((c) => row[c] ?? null)),
      method: "run" as const,
    });
  }
  const stub = env.WORKSPACE.getByName(partitionName(partition));
  await stub.exec(partition, statements);
  // The partition's scheduled work (crons due, expiries, feedback waiting) looks at what it now holds.
  await stub.arm(partition, Date.now());
}

/**
 * Moves one page of a table; answers whether rows remain. Rows of one partition go in one RPC, the
 * partitions of a page in parallel, and the page leaves D1 only once every partition has it.
 */
export async function movePage(env: MigrationEnv, table: string, workspaceId?: string): Promise<boolean> {
  const spec = LEGACY_TABLES[table];
  const { rowids, rows } = await readPage(env, table, spec, workspaceId);
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

/** How long this isolate trusts its read of the migration state while a table is still moving. */
const STATE_TTL_MS = 10_000;
let stateRead: Promise<void> | undefined;
let stateReadAt = 0;

/**
 * Whether a legacy table may still hold rows (until its chain marked it done). One query reads every
 * table's state, at most every STATE_TTL_MS; a table once done is done for the isolate's life, so a
 * migrated (or new) deployment reads the state once per isolate.
 */
export async function legacyRowsRemain(env: MigrationEnv, table: string): Promise<boolean> {
  if (done.has(table)) return false;
  if (!stateRead || Date.now() - stateReadAt > STATE_TTL_MS) {
    stateReadAt = Date.now();
    stateRead = database(env)
      .select({ tableName: partitionMigrations.tableName, doneAt: partitionMigrations.doneAt })
      .from(partitionMigrations)
      .all()
      .then((rows) => {
        for (const row of rows) if (row.doneAt) done.add(row.tableName);
      })
      .catch((error: unknown) => {
        stateRead = undefined;
        throw error;
      });
  }
  await stateRead;
  return !done.has(table);
}

/** The legacy tables each kind of partition takes its rows from. */
const KIND_TABLES: Record<PartitionKind, readonly string[]> = {
  threads: ["threads"],
  store: ["store_items"],
  crons: ["crons"],
  a2a: ["a2a_tasks"],
  traces: ["tracing_projects", "trace_shards", "trace_feedback"],
  runs: ["trace_run_locations"],
};

/** Pages one request moves for its workspace before it answers 503 and leaves the rest to the chain. */
const INLINE_PAGES = 4;

/** `table\nworkspace` pairs this isolate has seen moved. */
const movedWorkspaces = new Set<string>();

/**
 * Moves a workspace's rows of a kind's legacy tables before the partition is first used (once per
 * isolate and workspace; nothing once the tables are done). A workspace with more rows than a
 * request may move is answered 503 until the chain has caught up.
 */
export async function moveWorkspaceRows(env: MigrationEnv, workspaceId: string, kind: PartitionKind): Promise<void> {
  for (const table of KIND_TABLES[kind]) {
    const key = `${table}\n${workspaceId}`;
    if (done.has(table) || movedWorkspaces.has(key)) continue;
    if (await legacyRowsRemain(env, table)) {
      for (let pages = 0; await movePage(env, table, workspaceId); pages++) {
        if (pages + 1 >= INLINE_PAGES)
          throw unavailable(
            `this workspace's ${table.replaceAll("_", " ")} are being moved out of the shared database; retry in a few seconds`,
          );
      }
    }
    movedWorkspaces.add(key);
  }
}
