// The export's Parquet files as a real reader sees them: DuckDB on files written by src/export/parquet.ts in Node.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EXPORT_FIELDS, type ExportRow, type FormatVersion } from "../../src/export/columns.ts";
import { encodeParquet, type ParquetCompression } from "../../src/export/parquet.ts";
import { CHILD, exportRow, pageOf, ROOT } from "../fixtures/export-rows.ts";

// Node cannot import a .wasm module the way wrangler bundles it (Node instantiates .wasm imports itself),
// so hand parquet.ts the bytes of the same file instead; its lazy initSync compiles them on first use.
vi.mock("parquet-wasm/esm/parquet_wasm_bg.wasm", async () => {
  const { readFileSync } = await import("node:fs");
  const { createRequire } = await import("node:module");
  return { default: readFileSync(createRequire(import.meta.url).resolve("parquet-wasm/esm/parquet_wasm_bg.wasm")) };
});

const START_MS = Date.UTC(2026, 10, 20, 10, 0, 0);

const ROWS: ExportRow[] = [
  exportRow({}),
  exportRow({
    id: CHILD,
    parent_run_id: ROOT,
    is_root: false,
    name: "model",
    run_type: "llm",
    status: "error",
    start_time: "2026-11-20T10:00:00.2Z",
    end_time: null,
    first_token_time: "2026-11-20T10:00:00.3Z",
    inputs: null,
    outputs: null,
    error: "boom",
    extra: null,
    events: null,
    tags: "[]",
    parent_run_ids: `["${ROOT}"]`,
    prompt_tokens: null,
    completion_tokens: null,
    total_tokens: null,
    prompt_cost: null,
    completion_cost: null,
    total_cost: null,
    trace_tier: null,
  }),
  exportRow({ id: "01936a3e-0000-7000-8000-000000000003", tags: '["x"]', total_tokens: 0 }),
];

let dir: string;
let instance: DuckDBInstance;
let db: DuckDBConnection;

async function file(version: FormatVersion, compression: ParquetCompression): Promise<string> {
  const path = join(dir, `${version}-${compression}.parquet`);
  const pages = [ROWS.slice(0, 2), ROWS.slice(2)].map((rows) => pageOf(rows, version !== "v1"));
  const stream = encodeParquet(pages, { fields: EXPORT_FIELDS, version, compression });
  await writeFile(path, new Uint8Array(await new Response(stream).arrayBuffer()));
  return path;
}

async function rows(sql: string) {
  return (await db.runAndReadAll(sql)).getRowObjectsJson();
}

async function types(path: string): Promise<Record<string, string>> {
  const described = await rows(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  return Object.fromEntries(described.map((r) => [String(r.column_name), String(r.column_type)]));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "export-parquet-"));
  instance = await DuckDBInstance.create();
  db = await instance.connect();
});

afterAll(async () => {
  db?.closeSync();
  instance?.closeSync();
  await rm(dir, { recursive: true, force: true });
});

describe("export Parquet read by DuckDB", () => {
  it("v1: TIMESTAMP_NS (isAdjustedToUTC=false), JSON text tags, int64 tokens, real nulls", async () => {
    const path = await file("v1", "zstandard");
    const t = await types(path);
    expect(Object.keys(t)).toEqual(EXPORT_FIELDS);
    expect(t).toMatchObject({
      id: "VARCHAR",
      is_root: "BOOLEAN",
      start_time: "TIMESTAMP_NS",
      end_time: "TIMESTAMP_NS",
      first_token_time: "TIMESTAMP_NS",
      tags: "VARCHAR",
      parent_run_ids: "VARCHAR",
      total_tokens: "BIGINT",
      total_cost: "DOUBLE",
      inputs: "VARCHAR",
    });
    const [schema] = await rows(`SELECT logical_type FROM parquet_schema('${path}') WHERE name = 'start_time'`);
    expect(String(schema.logical_type)).toMatch(/isAdjustedToUTC=0.*NANOS/);

    const values = await rows(`
      SELECT id, epoch_ns(start_time)::VARCHAR AS start_ns, end_time IS NULL AS open, total_tokens, total_cost, is_root,
             json_extract_string(tags, '$[1]') AS second_tag, inputs, error
      FROM read_parquet('${path}') ORDER BY id`);
    expect(values).toEqual([
      {
        id: ROOT,
        start_ns: (BigInt(START_MS) * 1_000_000n + 123_456_000n).toString(),
        open: false,
        total_tokens: "30",
        total_cost: 0.003,
        is_root: true,
        second_tag: "b",
        inputs: '{"question":"hi"}',
        error: null,
      },
      {
        id: CHILD,
        start_ns: (BigInt(START_MS) * 1_000_000n + 200_000_000n).toString(),
        open: true,
        total_tokens: null,
        total_cost: null,
        is_root: false,
        second_tag: null,
        inputs: null,
        error: "boom",
      },
      {
        id: "01936a3e-0000-7000-8000-000000000003",
        start_ns: (BigInt(START_MS) * 1_000_000n + 123_456_000n).toString(),
        open: false,
        total_tokens: "0",
        total_cost: 0.003,
        is_root: true,
        second_tag: null,
        inputs: '{"question":"hi"}',
        error: null,
      },
    ]);
    const [counts] = await rows(
      `SELECT count(*) AS n, count(end_time) AS ended, count(trace_tier) AS tiered FROM read_parquet('${path}')`,
    );
    expect(counts).toEqual({ n: "3", ended: "2", tiered: "2" });
  });

  it("v2_beta: TIMESTAMP WITH TIME ZONE (isAdjustedToUTC=true, micros) and VARCHAR[] tags", async () => {
    const path = await file("v2_beta", "zstandard");
    const t = await types(path);
    expect(t).toMatchObject({
      start_time: "TIMESTAMP WITH TIME ZONE",
      end_time: "TIMESTAMP WITH TIME ZONE",
      tags: "VARCHAR[]",
      parent_run_ids: "VARCHAR[]",
      total_tokens: "BIGINT",
      completion_cost: "DOUBLE",
      is_root: "BOOLEAN",
      extra: "VARCHAR",
    });
    const [schema] = await rows(`SELECT logical_type FROM parquet_schema('${path}') WHERE name = 'start_time'`);
    expect(String(schema.logical_type)).toMatch(/isAdjustedToUTC=1.*MICROS/);

    const values = await rows(`
      SELECT id, epoch_us(start_time)::VARCHAR AS start_us, len(tags) AS n_tags, tags[1] AS first_tag, parent_run_ids,
             extra->>'$.metadata.thread_id' AS thread
      FROM read_parquet('${path}') ORDER BY id`);
    expect(values).toEqual([
      {
        id: ROOT,
        start_us: (BigInt(START_MS) * 1000n + 123_456n).toString(),
        n_tags: "2",
        first_tag: "a",
        parent_run_ids: [],
        thread: "t1",
      },
      {
        id: CHILD,
        start_us: (BigInt(START_MS) * 1000n + 200_000n).toString(),
        n_tags: "0",
        first_tag: null,
        parent_run_ids: [ROOT],
        thread: null,
      },
      {
        id: "01936a3e-0000-7000-8000-000000000003",
        start_us: (BigInt(START_MS) * 1000n + 123_456n).toString(),
        n_tags: "1",
        first_tag: "x",
        parent_run_ids: [],
        thread: "t1",
      },
    ]);
  });

  const codecs: [ParquetCompression, string][] = [
    ["none", "UNCOMPRESSED"],
    ["gzip", "GZIP"],
    ["snappy", "SNAPPY"],
    ["zstandard", "ZSTD"],
  ];
  for (const version of ["v1", "v2_beta"] as const) {
    it(`${version}: parquet_metadata shows each chosen codec`, async () => {
      for (const [compression, codec] of codecs) {
        const path = await file(version, compression);
        const used = await rows(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`);
        expect(used.map((r) => r.compression)).toEqual([codec]);
        const [meta] = await rows(`SELECT created_by, num_rows FROM parquet_file_metadata('${path}')`);
        expect(meta).toEqual({ created_by: "agent-platform", num_rows: "3" });
        const [n] = await rows(`SELECT count(*) AS n FROM read_parquet('${path}')`);
        expect(n.n).toBe("3");
      }
    });
  }

  it("delta-encodes times, keeps dictionaries for repeated values only, and skips statistics on JSON", async () => {
    const path = await file("v1", "zstandard");
    const columns = await rows(
      `SELECT path_in_schema AS name, encodings, stats_min_value IS NULL AND stats_max_value IS NULL AS no_stats FROM parquet_metadata('${path}')`,
    );
    const of = (name: string) => columns.find((c) => c.name === name)!;
    expect(String(of("start_time").encodings)).toContain("DELTA_BINARY_PACKED");
    expect(String(of("id").encodings)).not.toContain("DICTIONARY");
    expect(String(of("run_type").encodings)).toContain("DICTIONARY");
    expect(of("extra").no_stats).toBe(true);
    expect(of("name").no_stats).toBe(false);
  });

  it("reads a zero-row file with its schema", async () => {
    const path = join(dir, "empty.parquet");
    await writeFile(
      path,
      new Uint8Array(
        await new Response(
          encodeParquet([], { fields: ["id", "start_time", "tags"], version: "v2_beta", compression: "snappy" }),
        ).arrayBuffer(),
      ),
    );
    expect(await types(path)).toEqual({ id: "VARCHAR", start_time: "TIMESTAMP WITH TIME ZONE", tags: "VARCHAR[]" });
    const [n] = await rows(`SELECT count(*) AS n FROM read_parquet('${path}')`);
    expect(n.n).toBe("0");
  });
});
