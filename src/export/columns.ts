import {
  Bool,
  type Data,
  type DataType,
  Field,
  Float64,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampNanosecond,
  Utf8,
} from "apache-arrow";

/**
 * The bulk-export column set (reference §1.1: the 29 documented defaults) and its Arrow schema per
 * format version (§4.7). Record batches are assembled from raw buffers with `makeData`: arrow's
 * builders compile their null check with `new Function`, which workerd forbids.
 */

export type FormatVersion = "v1" | "v2_beta";

/** One run as the shard hands it to the exporter. */
export type ExportRow = {
  id: string; tenant_id: string; session_id: string; trace_id: string; parent_run_id: string | null; dotted_order: string | null;
  is_root: boolean; name: string; run_type: string; status: string;
  start_time: string; end_time: string | null; first_token_time: string | null;   // ISO-8601 UTC text, e.g. 2026-11-20T10:00:00.123Z
  inputs: string | null; outputs: string | null; error: string | null; extra: string | null; events: string | null; // JSON text (error is plain text)
  tags: string; parent_run_ids: string;            // JSON array text, e.g. ["a","b"]
  reference_example_id: string | null;
  prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null;
  prompt_cost: number | null; completion_cost: number | null; total_cost: number | null;
  feedback_stats: string | null;                    // JSON text
  trace_tier: string | null;
};

type Kind = "string" | "bool" | "int64" | "double" | "timestamp" | "string_list";

/** Every export column with its kind, in the default export order. */
const KINDS = {
  id: "string", tenant_id: "string", session_id: "string", trace_id: "string", parent_run_id: "string",
  dotted_order: "string", is_root: "bool", name: "string", run_type: "string", status: "string",
  start_time: "timestamp", end_time: "timestamp", first_token_time: "timestamp",
  inputs: "string", outputs: "string", error: "string", extra: "string", events: "string",
  tags: "string_list", parent_run_ids: "string_list", reference_example_id: "string",
  prompt_tokens: "int64", completion_tokens: "int64", total_tokens: "int64",
  prompt_cost: "double", completion_cost: "double", total_cost: "double",
  feedback_stats: "string", trace_tier: "string",
} as const satisfies Record<keyof ExportRow, Kind>;

type ExportField = keyof ExportRow;

export const EXPORT_FIELDS: readonly string[] = Object.keys(KINDS);

function isExportField(name: string): name is ExportField {
  return Object.hasOwn(KINDS, name);
}

/** Names in `fields` that are not export columns. */
export function unknownExportFields(fields: readonly string[]): string[] {
  return fields.filter((name) => !isExportField(name));
}

function kindsOf(fields: readonly string[]): [ExportField, Kind][] {
  const unknown = unknownExportFields(fields);
  if (unknown.length > 0) throw new Error(`Unknown export fields: ${unknown.join(", ")}`);
  return fields.map((name) => [name as ExportField, KINDS[name as ExportField]]);
}

function arrowType(kind: Kind, version: FormatVersion): DataType {
  switch (kind) {
    case "string": return new Utf8();
    case "bool": return new Bool();
    case "int64": return new Int64();
    case "double": return new Float64();
    // v1 is LangSmith's observed naive-nanosecond layout; v2_beta is UTC-aware micros, which Spark, Glue and BigQuery read.
    case "timestamp": return version === "v1" ? new TimestampNanosecond() : new TimestampMicrosecond("UTC");
    case "string_list": return version === "v1" ? new Utf8() : new List(new Field("item", new Utf8(), true));
  }
}

const TYPE_NAMES: Record<FormatVersion, Record<Kind, string>> = {
  v1: { string: "string", bool: "bool", int64: "int64", double: "double", timestamp: "timestamp[ns]", string_list: "string" },
  v2_beta: { string: "string", bool: "bool", int64: "int64", double: "double", timestamp: "timestamp[us, UTC]", string_list: "list<string>" },
};

/** The column types of a projection, in words, for the export manifest and the README. */
export function columnTypes(fields: readonly string[], version: FormatVersion): { name: string; type: string }[] {
  return kindsOf(fields).map(([name, kind]) => ({ name, type: TYPE_NAMES[version][kind] }));
}

/** The Arrow schema of a projection. Every column is nullable, as in LangSmith's files. */
export function exportSchema(fields: readonly string[], version: FormatVersion): Schema {
  return new Schema(kindsOf(fields).map(([name, kind]) => new Field(name, arrowType(kind, version), true)));
}

/** Validity bitmap (LSB first); only materialised once a null turns up. */
class Validity {
  private bits: Uint8Array | undefined;
  nulls = 0;
  constructor(private readonly length: number) {}
  setNull(index: number): void {
    this.bits ??= new Uint8Array((this.length + 7) >> 3).fill(0xff);
    this.bits[index >> 3] &= ~(1 << (index & 7));
    this.nulls++;
  }
  get bitmap(): Uint8Array | undefined {
    return this.bits;
  }
}

/** A growable UTF-8 buffer with Arrow's int32 offsets. */
class Utf8Column {
  private bytes: Uint8Array;
  private size = 0;
  readonly offsets: Int32Array;
  private count = 0;
  private static readonly encoder = new TextEncoder();

  constructor(items: number, expectedBytes: number) {
    this.offsets = new Int32Array(items + 1);
    this.bytes = new Uint8Array(Math.max(64, expectedBytes));
  }

  push(text: string): void {
    // encodeInto needs room for the worst case of 3 bytes per UTF-16 unit.
    const needed = this.size + text.length * 3;
    if (needed > this.bytes.length) {
      const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.size));
      this.bytes = grown;
    }
    this.size += Utf8Column.encoder.encodeInto(text, this.bytes.subarray(this.size)).written;
    if (this.size > 0x7fffffff) throw new Error("A string column of one record batch exceeds 2 GiB; use smaller batches");
    this.offsets[++this.count] = this.size;
  }

  /** An empty slot (a null, or an empty list). */
  skip(): void {
    this.offsets[++this.count] = this.size;
  }

  get data(): Uint8Array {
    return this.bytes.subarray(0, this.size);
  }
}

function fail(row: ExportRow, field: string, message: string): never {
  throw new Error(`Run ${row.id}: ${field} ${message}`);
}

function stringColumn(rows: readonly ExportRow[], field: ExportField): Data<Utf8> {
  const validity = new Validity(rows.length);
  const column = new Utf8Column(rows.length, rows.length * 16);
  rows.forEach((row, i) => {
    const value = row[field];
    if (value === null || value === undefined) {
      validity.setNull(i);
      column.skip();
    } else {
      column.push(typeof value === "string" ? value : String(value));
    }
  });
  return makeData({ type: new Utf8(), length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, valueOffsets: column.offsets, data: column.data });
}

function stringListColumn(rows: readonly ExportRow[], field: ExportField, type: List<Utf8>): Data<List<Utf8>> {
  const validity = new Validity(rows.length);
  const offsets = new Int32Array(rows.length + 1);
  const items: string[] = [];
  rows.forEach((row, i) => {
    const text = row[field];
    if (text === null || text === undefined) {
      validity.setNull(i);
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(text));
      } catch {
        fail(row, field, `is not JSON: ${String(text).slice(0, 80)}`);
      }
      if (!Array.isArray(parsed)) fail(row, field, "is not a JSON array");
      for (const item of parsed) items.push(typeof item === "string" ? item : JSON.stringify(item));
    }
    offsets[i + 1] = items.length;
  });
  const values = new Utf8Column(items.length, items.length * 16);
  for (const item of items) values.push(item);
  const child = makeData({ type: new Utf8(), length: items.length, nullCount: 0, valueOffsets: values.offsets, data: values.data });
  return makeData({ type, length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, valueOffsets: offsets, child });
}

function boolColumn(rows: readonly ExportRow[], field: ExportField): Data<Bool> {
  const validity = new Validity(rows.length);
  const bits = new Uint8Array((rows.length + 7) >> 3);
  rows.forEach((row, i) => {
    const value = row[field];
    if (value === null || value === undefined) validity.setNull(i);
    else if (value) bits[i >> 3] |= 1 << (i & 7); // SQLite hands booleans over as 0/1
  });
  return makeData({ type: new Bool(), length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, data: bits });
}

function int64Column(rows: readonly ExportRow[], field: ExportField): Data<Int64> {
  const validity = new Validity(rows.length);
  const values = new BigInt64Array(rows.length);
  rows.forEach((row, i) => {
    const value = row[field];
    if (value === null || value === undefined) validity.setNull(i);
    else if (typeof value !== "number" || !Number.isFinite(value)) fail(row, field, `is not a number: ${String(value)}`);
    else values[i] = BigInt(Math.trunc(value));
  });
  return makeData({ type: new Int64(), length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, data: values });
}

function doubleColumn(rows: readonly ExportRow[], field: ExportField): Data<Float64> {
  const validity = new Validity(rows.length);
  const values = new Float64Array(rows.length);
  rows.forEach((row, i) => {
    const value = row[field];
    if (value === null || value === undefined) validity.setNull(i);
    else values[i] = Number(value);
  });
  return makeData({ type: new Float64(), length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, data: values });
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):?(\d{2}))?$/;

/**
 * Nanoseconds since the epoch of an ISO-8601 time, or undefined if it is not one. Date.parse stops at
 * milliseconds and the JS SDK sends microseconds, so the fraction is kept apart. No zone means UTC.
 */
export function epochNanos(text: string): bigint | undefined {
  const match = ISO.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const millis = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 2026-02-30 over to March: refuse what does not come back unchanged.
  const check = new Date(millis);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetMinutes = match[8] === undefined ? 0 : (match[8] === "-" ? -1 : 1) * (Number(match[9]) * 60 + Number(match[10]));
  return BigInt(millis - offsetMinutes * 60_000) * 1_000_000n + BigInt((match[7] ?? "").padEnd(9, "0"));
}

function timestampColumn(rows: readonly ExportRow[], field: ExportField, type: TimestampNanosecond | TimestampMicrosecond): Data {
  const validity = new Validity(rows.length);
  const values = new BigInt64Array(rows.length);
  const divisor = type instanceof TimestampNanosecond ? 1n : 1000n;
  rows.forEach((row, i) => {
    const value = row[field];
    if (value === null || value === undefined) {
      validity.setNull(i);
      return;
    }
    const nanos = epochNanos(String(value));
    if (nanos === undefined) fail(row, field, `is not an ISO-8601 time: ${String(value)}`);
    values[i] = divisor === 1n ? nanos : nanos / divisor;
  });
  return makeData({ type, length: rows.length, nullCount: validity.nulls, nullBitmap: validity.bitmap, data: values });
}

function columnData(rows: readonly ExportRow[], field: ExportField, kind: Kind, type: DataType): Data {
  switch (kind) {
    case "bool": return boolColumn(rows, field);
    case "int64": return int64Column(rows, field);
    case "double": return doubleColumn(rows, field);
    case "timestamp": return timestampColumn(rows, field, type as TimestampNanosecond | TimestampMicrosecond);
    case "string_list": return type instanceof List ? stringListColumn(rows, field, type as List<Utf8>) : stringColumn(rows, field);
    case "string": return stringColumn(rows, field);
  }
}

/** One Arrow record batch of `rows`, with the columns of `fields` in that order. */
export function exportRecordBatch(rows: readonly ExportRow[], fields: readonly string[], version: FormatVersion): RecordBatch {
  const schema = exportSchema(fields, version);
  const kinds = kindsOf(fields);
  const children = kinds.map(([name, kind], i) => columnData(rows, name, kind, schema.fields[i].type));
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(schema, data);
}
