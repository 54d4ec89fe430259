// Parquet encoding inside workerd: Arrow batches without `new Function`, parquet-wasm's streaming writer, read back.
import { type Table as ArrowTable, TimeUnit, Type, tableFromIPC } from "apache-arrow";
import { Compression, ParquetFile, readParquet } from "parquet-wasm/esm";
import { describe, expect, it } from "vitest";
import {
  columnTypes,
  EXPORT_FIELDS,
  type ExportRow,
  epochNanos,
  type FormatVersion,
  storedTimeMillis,
  unknownExportFields,
} from "../../src/export/columns.ts";
import { encodeParquet, type ParquetCompression } from "../../src/export/parquet.ts";
import { CHILD, exportRow, pageOf, ROOT } from "../fixtures/export-rows.ts";

const ROWS: ExportRow[] = [
  exportRow({}),
  exportRow({
    id: CHILD,
    parent_run_id: ROOT,
    dotted_order: `20261120T100000123456Z${ROOT}.20261120T100000200000Z${CHILD}`,
    is_root: false,
    name: "naïve ☃ model 😀",
    run_type: "llm",
    status: "error",
    start_time: "2026-11-20T10:00:00.2Z",
    end_time: null,
    first_token_time: "2026-11-20T10:00:00.300Z",
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
    feedback_stats: '{"correct":{"n":1,"avg":1}}',
    trace_tier: null,
  }),
  exportRow({ id: "01936a3e-0000-7000-8000-000000000003", tags: '["x"]', total_tokens: 0, total_cost: 0 }),
];

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function magic(bytes: Uint8Array): [string, string] {
  const text = new TextDecoder();
  return [text.decode(bytes.subarray(0, 4)), text.decode(bytes.subarray(bytes.length - 4))];
}

function read(bytes: Uint8Array): ArrowTable {
  return tableFromIPC(readParquet(bytes).intoIPCStream());
}

/** Raw int64 values of a column, nulls as null (Vector.get rounds timestamps to milliseconds). */
function int64s(table: ArrowTable, name: string): (bigint | null)[] {
  const column = table.getChild(name)!;
  const out: (bigint | null)[] = [];
  for (const data of column.data) {
    for (let i = 0; i < data.length; i++)
      out.push(data.getValid(i) ? (data.values as BigInt64Array)[data.offset + i] : null);
  }
  return out;
}

/** Rows encoded as the writer does: one page per batch, lists as arrays for v2_beta. */
async function encode(
  version: FormatVersion,
  compression: ParquetCompression = "zstandard",
  batches: ExportRow[][] = [ROWS],
  fields = EXPORT_FIELDS,
) {
  return bytesOf(
    encodeParquet(
      batches.map((rows) => pageOf(rows, version !== "v1")),
      { fields, version, compression },
    ),
  );
}

describe("export columns", () => {
  it("has the 29 documented default fields and rejects others", () => {
    expect(EXPORT_FIELDS).toHaveLength(29);
    expect(EXPORT_FIELDS.slice(0, 3)).toEqual(["id", "tenant_id", "session_id"]);
    expect(EXPORT_FIELDS.at(-1)).toBe("trace_tier");
    expect(unknownExportFields(["id", "serialized", "child_run_ids"])).toEqual(["serialized", "child_run_ids"]);
  });

  it("parses ISO times to the nanosecond", () => {
    const base = BigInt(Date.UTC(2026, 10, 20, 10)) * 1_000_000n;
    expect(epochNanos("2026-11-20T10:00:00Z")).toBe(base);
    expect(epochNanos("2026-11-20T10:00:00.123456789Z")).toBe(base + 123_456_789n);
    expect(epochNanos("2026-11-20T11:00:00.5+01:00")).toBe(base + 500_000_000n);
    expect(epochNanos("2026-11-20 10:00:00.000001")).toBe(base + 1_000n);
    expect(epochNanos("2026-11-20")).toBeUndefined();
    expect(epochNanos("2026-02-30T10:00:00Z")).toBeUndefined();
  });

  it("describes column types per format version", () => {
    const fields = ["id", "is_root", "start_time", "tags", "total_tokens", "total_cost"];
    expect(columnTypes(fields, "v1").map((c) => c.type)).toEqual([
      "string",
      "bool",
      "timestamp[ns]",
      "string",
      "int64",
      "double",
    ]);
    expect(columnTypes(fields, "v2_beta").map((c) => c.type)).toEqual([
      "string",
      "bool",
      "timestamp[us, UTC]",
      "list<string>",
      "int64",
      "double",
    ]);
    expect(() => columnTypes(["nope"], "v1")).toThrow("Unknown export fields: nope");
  });
});

describe("encodeParquet in workerd", () => {
  it("writes v1: naive nanosecond timestamps, JSON text tags, real nulls", async () => {
    const bytes = await encode("v1");
    expect(magic(bytes)).toEqual(["PAR1", "PAR1"]);
    const table = read(bytes);
    expect(table.numRows).toBe(3);
    expect(table.schema.fields.map((f) => f.name)).toEqual(EXPORT_FIELDS);

    const start = table.schema.fields.find((f) => f.name === "start_time")!.type;
    expect(start.typeId).toBe(Type.Timestamp);
    expect(start.unit).toBe(TimeUnit.NANOSECOND);
    expect(start.timezone ?? null).toBeNull();
    expect(table.getChild("tags")!.type.typeId).toBe(Type.Utf8);
    expect(table.getChild("total_tokens")!.type.typeId).toBe(Type.Int);
    expect(table.getChild("total_tokens")!.type.bitWidth).toBe(64);
    expect(table.getChild("total_cost")!.type.typeId).toBe(Type.Float);
    expect(table.getChild("is_root")!.type.typeId).toBe(Type.Bool);

    expect(int64s(table, "start_time")).toEqual([
      BigInt(Date.UTC(2026, 10, 20, 10, 0, 0)) * 1_000_000n + 123_456_000n,
      BigInt(Date.UTC(2026, 10, 20, 10, 0, 0)) * 1_000_000n + 200_000_000n,
      BigInt(Date.UTC(2026, 10, 20, 10, 0, 0)) * 1_000_000n + 123_456_000n,
    ]);
    expect(int64s(table, "end_time")[1]).toBeNull();
    expect(int64s(table, "total_tokens")).toEqual([30n, null, 0n]);
    const rows = table.toArray().map((r) => r.toJSON());
    expect(rows[0]).toMatchObject({
      id: ROOT,
      is_root: true,
      tags: '["a","b"]',
      total_cost: 0.003,
      inputs: '{"question":"hi"}',
      error: null,
    });
    expect(rows[1]).toMatchObject({
      is_root: false,
      name: "naïve ☃ model 😀",
      inputs: null,
      outputs: null,
      error: "boom",
      total_cost: null,
      trace_tier: null,
      parent_run_ids: `["${ROOT}"]`,
      tags: "[]",
    });
    expect(table.getChild("inputs")!.nullCount).toBe(1);
    expect(rows[2]).toMatchObject({ total_cost: 0 });
  });

  it("writes v2_beta: UTC microsecond timestamps and string lists", async () => {
    const table = read(await encode("v2_beta"));
    expect(table.numRows).toBe(3);
    const start = table.getChild("start_time")!.type;
    expect(start.typeId).toBe(Type.Timestamp);
    expect(start.unit).toBe(TimeUnit.MICROSECOND);
    expect(start.timezone).toBe("UTC");
    expect(table.getChild("tags")!.type.typeId).toBe(Type.List);
    expect(table.getChild("parent_run_ids")!.type.typeId).toBe(Type.List);

    expect(int64s(table, "start_time")[0]).toBe(BigInt(Date.UTC(2026, 10, 20, 10, 0, 0)) * 1000n + 123_456n);
    expect(int64s(table, "first_token_time")).toEqual([
      null,
      BigInt(Date.UTC(2026, 10, 20, 10, 0, 0, 300)) * 1000n,
      null,
    ]);
    const tags = table.getChild("tags")!;
    expect([...tags.get(0)!]).toEqual(["a", "b"]);
    expect([...tags.get(1)!]).toEqual([]);
    expect([...table.getChild("parent_run_ids")!.get(1)!]).toEqual([ROOT]);
    expect(table.getChild("id")!.type.typeId).toBe(Type.Utf8);
    expect(table.getChild("extra")!.get(0)).toBe('{"metadata":{"thread_id":"t1"}}');
  });

  const compressions: [ParquetCompression, Compression][] = [
    ["none", Compression.UNCOMPRESSED],
    ["gzip", Compression.GZIP],
    ["snappy", Compression.SNAPPY],
    ["zstandard", Compression.ZSTD],
  ];
  for (const version of ["v1", "v2_beta"] as const) {
    for (const [compression, codec] of compressions) {
      it(`round-trips ${version} with ${compression}`, async () => {
        const bytes = await encode(version, compression);
        expect(magic(bytes)).toEqual(["PAR1", "PAR1"]);
        const table = read(bytes);
        expect(table.numRows).toBe(3);
        expect(table.getChild("name")!.get(1)).toBe("naïve ☃ model 😀");

        const file = await ParquetFile.fromFile(new Blob([bytes]));
        const metadata = file.metadata();
        expect(metadata.fileMetadata().createdBy()).toBe("agent-platform");
        expect(metadata.fileMetadata().keyValueMetadata().get("agent_platform.format_version")).toBe(version);
        expect(metadata.rowGroup(0).column(0).compression()).toBe(codec);
        file.free();
      });
    }
  }

  it("writes a projection in the given order", async () => {
    const fields = ["trace_id", "start_time", "tags", "total_tokens"];
    const table = read(await encode("v2_beta", "snappy", [ROWS], fields));
    expect(table.schema.fields.map((f) => f.name)).toEqual(fields);
    expect(table.getChild("trace_id")!.get(2)).toBe(ROOT);
    expect([...table.getChild("tags")!.get(2)!]).toEqual(["x"]);
  });

  it("keeps each string whole in ASCII and non-ASCII columns, nulls and empty strings included", async () => {
    const names = ["plain", "", "naïve ☃", "😀x", "ascii again"];
    const page = pageOf(names.map((name, i) => exportRow({ id: `run-${i}`, name, error: i % 2 ? null : `e${i}` })));
    const table = read(
      await bytesOf(encodeParquet([page], { fields: ["id", "name", "error"], version: "v1", compression: "none" })),
    );
    expect(table.getChild("name")!.toArray()).toEqual(names);
    expect(table.getChild("error")!.toArray()).toEqual(["e0", null, "e2", null, "e4"]);
    expect(table.getChild("id")!.toArray()).toEqual(names.map((_, i) => `run-${i}`));
  });

  it("reads stored toISOString() times on a fast path and any other ISO time exactly; constant columns for the tenant and untracked fields", async () => {
    const ms = Date.UTC(2026, 10, 20, 10, 0, 0, 123);
    const pageFor = (version: FormatVersion) => {
      const page = pageOf(ROWS.slice(0, 2), version !== "v1");
      page.columns.start_time = {
        strings: JSON.stringify([new Date(ms).toISOString(), "2026-11-20T11:00:00.000001+01:00"]),
      };
      page.columns.end_time = {
        strings: JSON.stringify([null, new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)).toISOString()]),
      };
      page.columns.tenant_id = { constant: "tenant-é" };
      page.columns.trace_tier = { constant: null };
      return page;
    };
    for (const [version, unit] of [
      ["v1", 1_000_000n],
      ["v2_beta", 1_000n],
    ] as const) {
      const table = read(
        await bytesOf(encodeParquet([pageFor(version)], { fields: EXPORT_FIELDS, version, compression: "snappy" })),
      );
      expect(int64s(table, "start_time")).toEqual([
        BigInt(ms) * unit,
        (BigInt(Date.UTC(2026, 10, 20, 10)) * 1_000_000n + 1_000n) / (1_000_000n / unit),
      ]);
      expect(int64s(table, "end_time")).toEqual([null, BigInt(Date.UTC(2024, 1, 29, 23, 59, 59, 999)) * unit]);
      expect(table.getChild("tenant_id")!.toArray()).toEqual(["tenant-é", "tenant-é"]);
      expect(table.getChild("trace_tier")!.toArray()).toEqual([null, null]);
    }
    expect(storedTimeMillis("2026-11-20T10:00:00.123Z")).toBe(ms);
    for (const other of [
      "2026-02-30T10:00:00.000Z",
      "2026-13-01T10:00:00.000Z",
      "2026-11-20T10:00:00.12Z",
      "2026-11-20T10:00:00.123+",
      "2026-11-2OT10:00:00.123Z",
    ]) {
      expect(storedTimeMillis(other)).toBeUndefined();
    }
    const page = pageFor("v1");
    page.columns.start_time = { strings: '["2026-02-30T10:00:00.000Z", null]' };
    await expect(
      bytesOf(encodeParquet([page], { fields: EXPORT_FIELDS, version: "v1", compression: "none" })),
    ).rejects.toThrow(/start_time of row 0 is not an ISO-8601 time: 2026-02-30/);
  });

  it("writes a valid file with the schema for zero rows", async () => {
    for (const batches of [[], [[], []]]) {
      for (const version of ["v1", "v2_beta"] as const) {
        const bytes = await encode(version, "zstandard", batches);
        expect(magic(bytes)).toEqual(["PAR1", "PAR1"]);
        const table = read(bytes);
        expect(table.numRows).toBe(0);
        expect(table.schema.fields.map((f) => f.name)).toEqual(EXPORT_FIELDS);
      }
    }
  });

  it("keeps row order across many batches, record batches and row groups", async () => {
    const many = Array.from({ length: 250 }, (_, i) => exportRow({ id: `run-${i}`, total_tokens: i }));
    async function* pages() {
      for (let i = 0; i < many.length; i += 40) yield pageOf(many.slice(i, i + 40));
    }
    const stream = encodeParquet(pages(), {
      fields: ["id", "total_tokens"],
      version: "v1",
      compression: "zstandard",
      rowGroupRows: 100,
    });
    const bytes = await bytesOf(stream);
    const table = read(bytes);
    expect(table.numRows).toBe(250);
    expect(int64s(table, "total_tokens")).toEqual(many.map((_, i) => BigInt(i)));
    const file = await ParquetFile.fromFile(new Blob([bytes]));
    expect(file.metadata().numRowGroups()).toBe(3);
    file.free();
  });

  it("streams bytes as row groups complete", async () => {
    const many = Array.from({ length: 3000 }, (_, i) =>
      exportRow({ id: `run-${i}`, inputs: JSON.stringify({ i, text: "x".repeat(200) }) }),
    );
    const pages = Array.from({ length: 6 }, (_, i) => pageOf(many.slice(i * 500, (i + 1) * 500)));
    const reader = encodeParquet(pages, {
      fields: EXPORT_FIELDS,
      version: "v1",
      compression: "none",
      rowGroupRows: 500,
    }).getReader();
    let chunks = 0;
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks++;
    expect(chunks).toBeGreaterThan(3);
  });

  it("errors the stream on a bad row instead of writing a file without it", async () => {
    const bad = [ROWS, [exportRow({ id: "bad-run", start_time: "yesterday" })]];
    await expect(encode("v1", "zstandard", bad)).rejects.toThrow(
      /Export page from run bad-run: start_time of row 0 is not an ISO-8601 time: yesterday/,
    );
    const badTags = pageOf([exportRow(), exportRow({ id: "bad-tags" })], true);
    badTags.columns.tags = { values: '[["a"], "a,b"]' };
    await expect(
      bytesOf(encodeParquet([badTags], { fields: EXPORT_FIELDS, version: "v2_beta", compression: "none" })),
    ).rejects.toThrow(/tags of row 1 is not a list/);
    // A text column holding something else is refused, not written as text.
    const odd = pageOf([exportRow()]);
    odd.columns.name = { strings: "[42]" };
    await expect(
      bytesOf(encodeParquet([odd], { fields: EXPORT_FIELDS, version: "v1", compression: "none" })),
    ).rejects.toThrow(/name holds a number where text belongs/);
  });

  it("errors the stream when the row source fails, before or after the first batch", async () => {
    async function* failing(after: number) {
      for (let i = 0; i < after; i++) yield pageOf(ROWS);
      throw new Error("shard went away");
    }
    for (const after of [0, 2]) {
      await expect(
        bytesOf(encodeParquet(failing(after), { fields: EXPORT_FIELDS, version: "v1", compression: "snappy" })),
      ).rejects.toThrow("Parquet encoding failed: shard went away");
    }
    // The writer is still usable afterwards.
    expect(read(await encode("v1")).numRows).toBe(3);
  });

  it("stops reading rows when the consumer cancels", async () => {
    let pulled = 0;
    function* endless() {
      for (;;) {
        pulled++;
        yield pageOf(ROWS);
      }
    }
    const reader = encodeParquet(endless(), {
      fields: EXPORT_FIELDS,
      version: "v1",
      compression: "none",
      rowGroupRows: 3,
    }).getReader();
    await reader.read();
    await reader.cancel("enough");
    const after = pulled;
    // Time itself is under test: nothing pulls another page in the 20 ms after the cancel.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pulled).toBe(after);
    expect(read(await encode("v2_beta")).numRows).toBe(3);
  });
});
