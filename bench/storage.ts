/**
 * Bytes stored, read from the local server's SQLite files (its persist directory, Miniflare's layout:
 * `v3/do/<worker>-<Class>/<id>.sqlite`, `v3/d1/miniflare-D1DatabaseObject/<id>.sqlite`). A file's
 * stored size is its live pages (page count less free pages, times the page size), read through
 * SQLite so that pages still in the write-ahead log count and the log's own size does not.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { D1, placementOf } from "./ceilings.ts";

/** Live bytes of one SQLite database, or undefined when it cannot be read (being created, removed). */
function storedBytes(path: string): number | undefined {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const pragma = (name: string) => Number((db!.prepare(`PRAGMA ${name}`).get() as Record<string, unknown>)[name]);
    return (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

/** The database files of each part (a Durable Object class, or D1), by path. */
function databaseFiles(persistDir: string): Map<string, string[]> {
  const parts = new Map<string, string[]>();
  const list = (dir: string) => {
    try {
      return readdirSync(dir).filter((file) => file.endsWith(".sqlite") && file !== "metadata.sqlite");
    } catch {
      return [];
    }
  };
  const objects = join(persistDir, "v3", "do");
  let classes: string[] = [];
  try {
    classes = readdirSync(objects);
  } catch {
    // no object stored yet
  }
  for (const dir of classes) {
    // `<worker name>-<Class>`: the class is the part after the last dash.
    const part = dir.slice(dir.lastIndexOf("-") + 1);
    parts.set(
      part,
      list(join(objects, dir)).map((file) => join(objects, dir, file)),
    );
  }
  const d1 = join(persistDir, "v3", "d1", "miniflare-D1DatabaseObject");
  parts.set(
    D1,
    list(d1).map((file) => join(d1, file)),
  );
  return parts;
}

export interface PartStorage {
  /** Bytes the part's objects gained over the window (new objects count whole). */
  grownBytes: number;
  /** The most one object gained. */
  largestObjectGrownBytes: number;
  /** Objects created over the window. */
  newObjects: number;
}

/**
 * A reading of the stored bytes before a window; `after()` compares. Objects placed per entity (a
 * thread) are many: only the ones created in the window are read (whole), not the growth of earlier
 * ones. The others (per tenant, or one for the deployment) are read before and after.
 */
export interface StorageProbe {
  after(): Map<string, PartStorage>;
}

export function probeStorage(persistDir: string): StorageProbe {
  const entity = (part: string) => placementOf(part).scope === "entity";
  const before = new Map<string, number | undefined>();
  const known = new Set<string>();
  for (const [part, files] of databaseFiles(persistDir)) {
    for (const file of files) {
      known.add(file);
      if (!entity(part)) before.set(file, storedBytes(file));
    }
  }
  return {
    after() {
      const result = new Map<string, PartStorage>();
      for (const [part, files] of databaseFiles(persistDir)) {
        const storage: PartStorage = { grownBytes: 0, largestObjectGrownBytes: 0, newObjects: 0 };
        for (const file of files) {
          const isNew = !known.has(file);
          if (!isNew && entity(part)) continue;
          const now = storedBytes(file);
          if (now === undefined) continue;
          const grown = now - (isNew ? 0 : (before.get(file) ?? now));
          if (isNew) storage.newObjects++;
          storage.grownBytes += grown;
          storage.largestObjectGrownBytes = Math.max(storage.largestObjectGrownBytes, grown);
        }
        result.set(part, storage);
      }
      return result;
    },
  };
}
