// A second Parquet reader besides DuckDB: a Hive-partitioned folder read the way pyarrow.dataset,
// polars.scan_parquet(hive_partitioning=True) and Spark discover one, with hyparquet decoding each file.

import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { zstdDecompressSync } from "node:zlib";
import { asyncBufferFromFile, type Compressors, type ParquetParsers, parquetReadObjects } from "hyparquet";

/** hyparquet decodes snappy itself; the export's default codec, zstd, comes from node:zlib. */
const compressors: Compressors = { ZSTD: (input) => new Uint8Array(zstdDecompressSync(input)) };

/**
 * pyarrow (`ignore_prefixes`) and Spark skip names that start with `_` or `.`; polars does not, and
 * refuses a folder holding any file that is not Parquet.
 */
const hidden = (name: string) => name.startsWith("_") || name.startsWith(".");

/** Every file a directory reader would open under `folder`, relative to it, in path order. */
export function datasetFiles(folder: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (hidden(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(folder, path));
    }
  };
  walk(folder);
  return files;
}

export type DatasetRow = Record<string, unknown> & { __file: string };

/**
 * The rows of a Hive-partitioned dataset: each file's columns plus its `key=value` folder segments as
 * partition columns. A file that is not Parquet fails the read, as it fails pyarrow's.
 */
export async function readHiveDataset(folder: string, parsers: Partial<ParquetParsers> = {}): Promise<DatasetRow[]> {
  const rows: DatasetRow[] = [];
  for (const file of datasetFiles(folder)) {
    const partitions = Object.fromEntries(
      file
        .split(sep)
        .slice(0, -1)
        .filter((segment) => segment.includes("="))
        .map((segment) => segment.split("=", 2) as [string, string]),
    );
    const records = await parquetReadObjects({
      file: await asyncBufferFromFile(join(folder, file)),
      compressors,
      parsers,
    });
    for (const record of records) rows.push({ ...record, ...partitions, __file: file });
  }
  return rows;
}
