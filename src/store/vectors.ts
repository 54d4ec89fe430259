import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { customType, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { chunked } from "../core/batches.ts";
import { magnitude } from "../core/similarity.ts";
import { rowsPerStatement } from "../db/sql-batch.ts";
import type { WorkspaceDatabase } from "../workspace/database.ts";
import { packVector } from "./semantic/vectors.ts";

/**
 * The store's semantic index: each indexed item's vectors, one per field text, beside the items in the
 * workspace's store partition (the `store_vectors` step of workspace/tables.ts). Written in the
 * item's own transaction; a trigger deletes them with the item.
 */

const floats = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "blob" });

export const storeVectors = sqliteTable("store_vectors", {
  namespace: text("namespace").notNull(),
  key: text("key").notNull(),
  field: text("field").notNull(),
  vector: floats("vector").notNull(),
  magnitude: real("magnitude").notNull(),
  /** The vector's id in the Vectorize index (store/vectorize.ts), or null without one. */
  vectorizeId: text("vectorize_id"),
});

/** One vector of an item: the field it was read from (`path` or `path.i`) and its floats. */
export interface ItemVector {
  field: string;
  vector: Float32Array;
  /** Its id in the Vectorize index, when the Worker has one (see store/vectorize.ts `vectorId`). */
  vectorizeId?: string;
}

const VECTOR_COLUMNS = 6;

/**
 * The statements that make `vectors` the item's whole index: its old vectors go (a put replaces what
 * was indexed, an item put with `index: false` has none), answering their Vectorize ids (the first
 * statement's rows, so the put learns what to delete there without another read), then the new ones,
 * so many rows a statement as 100 bound parameters allow. Run in the item's batch.
 */
export function replaceItemVectors(
  db: WorkspaceDatabase,
  namespace: string,
  key: string,
  vectors: ItemVector[],
): BatchItem<"sqlite">[] {
  const statements: BatchItem<"sqlite">[] = [
    db
      .delete(storeVectors)
      .where(and(eq(storeVectors.namespace, namespace), eq(storeVectors.key, key)))
      .returning({ vectorizeId: storeVectors.vectorizeId }),
  ];
  for (const rows of chunked(vectors, rowsPerStatement(VECTOR_COLUMNS))) {
    statements.push(
      db
        .insert(storeVectors)
        .values(
          rows.map(({ field, vector, vectorizeId }) => ({
            namespace,
            key,
            field,
            vector: packVector(vector),
            magnitude: magnitude(vector),
            vectorizeId: vectorizeId ?? null,
          })),
        )
        // The ids written: the partition's object forgets what it kept of vectors that had them before
        // (SQLite gives a new row a deleted row's id), see workspace/vector-cache.ts.
        .returning({ id: sql`rowid` }),
    );
  }
  return statements;
}
