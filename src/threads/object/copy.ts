// Inside the thread's Durable Object (threads/object/): copying the thread, every checkpoint included, into another thread's object.
import type { SqlRow, SqlStore, SqlValue } from "../../db/sql.ts";
import { placeholders } from "../../db/sql-batch.ts";
import type { ThreadClient } from "../client.ts";
import type { TablePage } from "../thread-rpc.ts";
import type { Outcome, ThreadJson } from "../types.ts";
import { CHECKPOINT_TABLE_KEYS } from "./checkpoint-tables.ts";
import type { ThreadRecord } from "./record.ts";

/** Keeps a copy's RPC messages well under the 32 MiB limit. */
const COPY_PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Copies the thread, every checkpoint included, into `target`: a new thread's Durable Object in the
 * same workspace. The source holds its lock meanwhile, so nothing interleaves with the export; a copy
 * that fails half way is undone, and the target holds nothing afterwards.
 */
export async function copyThread(
  sql: SqlStore,
  record: ThreadRecord,
  newThreadId: string,
  target: Pick<ThreadClient, "importBegin" | "importPage" | "importFinish" | "importAbort">,
): Promise<Outcome<ThreadJson>> {
  const at = new Date().toISOString();
  const copy: ThreadRecord = {
    ...record,
    threadId: newThreadId,
    createdAt: at,
    updatedAt: at,
    status: "idle",
    config: {},
    requestConfig: {},
    error: null,
    indexDirty: false,
  };
  const begun = await target.importBegin(copy);
  if (!begun.ok) return begun;
  try {
    for (const page of exportPages(sql, record.threadId, newThreadId)) await target.importPage(page);
    return await target.importFinish();
  } catch (error) {
    await target.importAbort();
    throw error;
  }
}

/** Writes one page of a copy into this thread's storage, creating its tables as the source had them. */
export function importPage(sql: SqlStore, page: TablePage): void {
  sql.transaction(() => {
    for (const statement of page.schema)
      sql.run(statement.replace(/^CREATE (TABLE|INDEX|UNIQUE INDEX) /i, "CREATE $1 IF NOT EXISTS "));
    for (const row of page.rows) {
      const columns = Object.keys(row);
      sql.run(
        `INSERT OR REPLACE INTO "${page.table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${placeholders(columns.length)})`,
        ...columns.map((c) => row[c]),
      );
    }
  });
}

/** Rows of every storage table but the thread record, rewritten to the new thread id, in pages. */
function* exportPages(sql: SqlStore, threadId: string, newThreadId: string): Generator<TablePage> {
  // Checkpoint storage only: runs and their events belong to the original thread.
  const tables = sql.all<{ name: string; sql: string }>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')",
  );
  for (const { name, sql: create } of tables) {
    const indexes = sql
      .all<{ sql: string }>(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
        name,
      )
      .map((r) => r.sql);
    const schema = [create, ...indexes];
    // Keyset pages by the primary key: tables made since WITHOUT ROWID have no rowid.
    const key: readonly string[] = CHECKPOINT_TABLE_KEYS[name as keyof typeof CHECKPOINT_TABLE_KEYS];
    const keyList = key.map((c) => `"${c}"`).join(", ");
    let after: SqlValue[] | null = null;
    for (;;) {
      // Few rows per read: a blob row holds up to 1 MiB, and the isolate has 128 MB.
      const rows: SqlRow[] = after
        ? sql.all(
            `SELECT * FROM "${name}" WHERE (${keyList}) > (${placeholders(key.length)}) ORDER BY ${keyList} LIMIT 16`,
            ...after,
          )
        : sql.all(`SELECT * FROM "${name}" ORDER BY ${keyList} LIMIT 16`);
      if (rows.length === 0) break;
      after = key.map((c) => rows[rows.length - 1][c]);
      let page: SqlRow[] = [];
      let bytes = 0;
      for (const row of rows) {
        if (row.thread_id === threadId) row.thread_id = newThreadId;
        if (typeof row.metadata === "string")
          row.metadata = row.metadata.replaceAll(`"thread_id":"${threadId}"`, `"thread_id":"${newThreadId}"`);
        bytes += Object.values(row).reduce<number>(
          (sum, v) => sum + (v instanceof ArrayBuffer ? v.byteLength : String(v ?? "").length),
          0,
        );
        page.push(row);
        if (bytes >= COPY_PAGE_BYTES) {
          yield { table: name, schema, rows: page };
          page = [];
          bytes = 0;
        }
      }
      if (page.length) yield { table: name, schema, rows: page };
    }
  }
}
