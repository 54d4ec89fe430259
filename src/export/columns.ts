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
import { parseIsoTime, utcMillis } from "../core/iso-time.ts";
import type { ColumnShape, ExportColumn } from "../tracing/export-page.ts";
import { toStoredTime } from "../tracing/times.ts";

/**
 * The bulk-export column set (LangSmith's 29 documented default fields) and its Arrow schema per
 * format version (`v1` or `v2_beta`). Record batches are assembled from raw buffers with `makeData`: arrow's
 * builders compile their null check with `new Function`, which workerd forbids.
 */

export type FormatVersion = "v1" | "v2_beta";

/** The values of one exported run, as a row (the shard hands them over column by column: see ColumnPage). */
export type ExportRow = {
  id: string;
  tenant_id: string;
  session_id: string;
  trace_id: string;
  parent_run_id: string | null;
  dotted_order: string | null;
  is_root: boolean;
  name: string;
  run_type: string;
  status: string;
  start_time: string;
  end_time: string | null;
  first_token_time: string | null; // ISO-8601 UTC text, e.g. 2026-11-20T10:00:00.123456Z
  inputs: string | null;
  outputs: string | null;
  error: string | null;
  extra: string | null;
  events: string | null; // JSON text (error is plain text)
  tags: string;
  parent_run_ids: string; // JSON array text, e.g. ["a","b"]
  reference_example_id: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  feedback_stats: string | null; // JSON text
  trace_tier: string | null;
};

type Kind = "string" | "bool" | "int64" | "double" | "timestamp" | "string_list";

/** Every export column with its kind, in the default export order. */
const KINDS = {
  id: "string",
  tenant_id: "string",
  session_id: "string",
  trace_id: "string",
  parent_run_id: "string",
  dotted_order: "string",
  is_root: "bool",
  name: "string",
  run_type: "string",
  status: "string",
  start_time: "timestamp",
  end_time: "timestamp",
  first_token_time: "timestamp",
  inputs: "string",
  outputs: "string",
  error: "string",
  extra: "string",
  events: "string",
  tags: "string_list",
  parent_run_ids: "string_list",
  reference_example_id: "string",
  prompt_tokens: "int64",
  completion_tokens: "int64",
  total_tokens: "int64",
  prompt_cost: "double",
  completion_cost: "double",
  total_cost: "double",
  feedback_stats: "string",
  trace_tier: "string",
} as const satisfies Record<keyof ExportRow, Kind>;

type ExportField = keyof ExportRow;

export const EXPORT_FIELDS: readonly string[] = Object.keys(KINDS);

/**
 * Columns the shard does not hand over: the writer fills the tenant in (session_id comes from the
 * shard, though the writer also knows it); tiers are not tracked yet, so they are null.
 */
const NOT_FROM_SHARD: Partial<Record<ExportField, "writer" | "untracked">> = {
  tenant_id: "writer",
  trace_tier: "untracked",
};

/** The shape a shard hands a column of each kind over in (see ColumnShape). */
const SHARD_SHAPES: Record<Kind, ColumnShape> = {
  string: "text",
  timestamp: "text",
  bool: "integer",
  int64: "integer",
  double: "real",
  string_list: "list",
};

/** The columns of `fields` a shard's export page holds, each with its shape, in order; unknown names are left out. */
export function shardColumns(fields: readonly string[]): Record<string, ColumnShape> {
  const columns: Record<string, ColumnShape> = {};
  for (const field of fields) {
    if (!isExportField(field) || NOT_FROM_SHARD[field] === "writer") continue;
    columns[field] = NOT_FROM_SHARD[field] === "untracked" ? "null" : SHARD_SHAPES[KINDS[field]];
  }
  return columns;
}

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
    case "string":
      return new Utf8();
    case "bool":
      return new Bool();
    case "int64":
      return new Int64();
    case "double":
      return new Float64();
    // v1 is LangSmith's observed naive-nanosecond layout; v2_beta is UTC-aware micros, which Spark, Glue and BigQuery read.
    case "timestamp":
      return version === "v1" ? new TimestampNanosecond() : new TimestampMicrosecond("UTC");
    case "string_list":
      return version === "v1" ? new Utf8() : new List(new Field("item", new Utf8(), true));
  }
}

const TYPE_NAMES: Record<FormatVersion, Record<Kind, string>> = {
  v1: {
    string: "string",
    bool: "bool",
    int64: "int64",
    double: "double",
    timestamp: "timestamp[ns]",
    string_list: "string",
  },
  v2_beta: {
    string: "string",
    bool: "bool",
    int64: "int64",
    double: "double",
    timestamp: "timestamp[us, UTC]",
    string_list: "list<string>",
  },
};

/** The column types of a projection, in words, for the export manifest and docs/bulk-export.md#columns. */
export function columnTypes(fields: readonly string[], version: FormatVersion): { name: string; type: string }[] {
  return kindsOf(fields).map(([name, kind]) => ({ name, type: TYPE_NAMES[version][kind] }));
}

/** The Arrow schema of a projection. Every column is nullable, as in LangSmith's files. */
export function exportSchema(fields: readonly string[], version: FormatVersion): Schema {
  return new Schema(kindsOf(fields).map(([name, kind]) => new Field(name, arrowType(kind, version), true)));
}

/** The rows of one record batch, column by column: as the shard hands them over, plus the constant columns the writer fills in (tenant, project). */
export type ColumnPage = { rows: number; columns: Record<string, ExportColumn> };

/** Validity bitmap (LSB first); only materialised once a null turns up. */
class Validity {
  private bits: Uint8Array | undefined;
  nulls = 0;
  private readonly length: number;
  constructor(length: number) {
    this.length = length;
  }
  setNull(index: number): void {
    this.bits ??= new Uint8Array((this.length + 7) >> 3).fill(0xff);
    this.bits[index >> 3] &= ~(1 << (index & 7));
    this.nulls++;
  }
  get bitmap(): Uint8Array | undefined {
    return this.bits;
  }
}

/** A growable UTF-8 buffer with Arrow's int32 offsets, for values that arrive one string at a time. */
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
    if (this.size > 0x7fffffff)
      throw new Error("A string column of one record batch exceeds 2 GiB; use smaller batches");
    this.offsets[++this.count] = this.size;
  }

  get data(): Uint8Array {
    return this.bytes.subarray(0, this.size);
  }
}

class ColumnError extends Error {}

/** `values` of a column as an array of one entry per row. */
function valuesOf(column: ExportColumn, field: string, rows: number): unknown[] {
  if ("constant" in column && column.constant === null) return new Array<null>(rows).fill(null);
  if (!("values" in column)) throw new ColumnError(`${field} came without values`);
  const values: unknown = JSON.parse(column.values);
  if (!Array.isArray(values) || values.length !== rows)
    throw new ColumnError(`${field} has ${Array.isArray(values) ? values.length : "no"} values for ${rows} rows`);
  return values;
}

/** A text column's strings (null for null), one per row. */
function stringsOf(column: ExportColumn, field: string, rows: number): (string | null)[] {
  if ("constant" in column) return new Array<string | null>(rows).fill(column.constant);
  if (!("strings" in column)) throw new ColumnError(`${field} came without text`);
  const strings: unknown = JSON.parse(column.strings);
  if (!Array.isArray(strings) || strings.length !== rows)
    throw new ColumnError(`${field} has ${Array.isArray(strings) ? strings.length : "no"} strings for ${rows} rows`);
  for (const text of strings)
    if (text !== null && typeof text !== "string")
      throw new ColumnError(`${field} holds a ${typeof text} where text belongs`);
  return strings as (string | null)[];
}

const encoder = new TextEncoder();

/**
 * Arrow UTF-8 buffers of strings (null for null). The strings are joined and encoded in one call;
 * when that takes one byte per UTF-16 unit, every string is ASCII and its length is its byte length.
 * Otherwise each string is encoded on its own to learn its length.
 */
function utf8Buffers(strings: readonly (string | null)[]): {
  data: Uint8Array;
  valueOffsets: Int32Array;
  validity: Validity;
} {
  const validity = new Validity(strings.length);
  const present: string[] = [];
  strings.forEach((text, i) => (text === null ? validity.setNull(i) : present.push(text)));
  const joined = present.join("");
  const data = encoder.encode(joined);
  if (data.byteLength !== joined.length) {
    const column = new Utf8Column(strings.length, data.byteLength);
    for (const text of strings) column.push(text ?? "");
    return { data: column.data, valueOffsets: column.offsets, validity };
  }
  const valueOffsets = new Int32Array(strings.length + 1);
  let offset = 0;
  strings.forEach((text, i) => (valueOffsets[i + 1] = offset += text?.length ?? 0));
  return { data, valueOffsets, validity };
}

function stringColumn(column: ExportColumn, field: string, rows: number): Data<Utf8> {
  const { data, valueOffsets, validity } = utf8Buffers(stringsOf(column, field, rows));
  return makeData({
    type: new Utf8(),
    length: rows,
    nullCount: validity.nulls,
    nullBitmap: validity.bitmap,
    valueOffsets,
    data,
  });
}

/** A `v2_beta` list column: the shard hands lists over as arrays. */
function stringListColumn(column: ExportColumn, field: string, rows: number, type: List<Utf8>): Data<List<Utf8>> {
  const validity = new Validity(rows);
  const offsets = new Int32Array(rows + 1);
  const items: string[] = [];
  valuesOf(column, field, rows).forEach((list, i) => {
    if (list === null) validity.setNull(i);
    else if (!Array.isArray(list)) throw new ColumnError(`${field} of row ${i} is not a list`);
    else for (const item of list) items.push(typeof item === "string" ? item : JSON.stringify(item));
    offsets[i + 1] = items.length;
  });
  const values = utf8Buffers(items);
  const child = makeData({
    type: new Utf8(),
    length: items.length,
    nullCount: 0,
    valueOffsets: values.valueOffsets,
    data: values.data,
  });
  return makeData({
    type,
    length: rows,
    nullCount: validity.nulls,
    nullBitmap: validity.bitmap,
    valueOffsets: offsets,
    child,
  });
}

function boolColumn(column: ExportColumn, field: string, rows: number): Data<Bool> {
  const validity = new Validity(rows);
  const bits = new Uint8Array((rows + 7) >> 3);
  valuesOf(column, field, rows).forEach((value, i) => {
    if (value === null) validity.setNull(i);
    else if (value) bits[i >> 3] |= 1 << (i & 7); // SQLite hands booleans over as 0/1
  });
  return makeData({
    type: new Bool(),
    length: rows,
    nullCount: validity.nulls,
    nullBitmap: validity.bitmap,
    data: bits,
  });
}

function int64Column(column: ExportColumn, field: string, rows: number): Data<Int64> {
  const validity = new Validity(rows);
  const values = new BigInt64Array(rows);
  valuesOf(column, field, rows).forEach((value, i) => {
    if (value === null) validity.setNull(i);
    else if (typeof value !== "number" || !Number.isFinite(value))
      throw new ColumnError(`${field} of row ${i} is not a number: ${String(value)}`);
    else values[i] = BigInt(Math.trunc(value));
  });
  return makeData({
    type: new Int64(),
    length: rows,
    nullCount: validity.nulls,
    nullBitmap: validity.bitmap,
    data: values,
  });
}

function doubleColumn(column: ExportColumn, field: string, rows: number): Data<Float64> {
  const validity = new Validity(rows);
  const values = new Float64Array(rows);
  valuesOf(column, field, rows).forEach((value, i) => {
    if (value === null) validity.setNull(i);
    else values[i] = Number(value);
  });
  return makeData({
    type: new Float64(),
    length: rows,
    nullCount: validity.nulls,
    nullBitmap: validity.bitmap,
    data: values,
  });
}

/** Nanoseconds since the epoch of an ISO-8601 time (see core/iso-time.ts), or undefined if it is not one. */
export function epochNanos(text: string): bigint | undefined {
  const instant = parseIsoTime(text);
  return instant && BigInt(instant.millis) * 1_000_000n + BigInt(instant.nanos);
}

/** The digits of `text` from `from` to `to` as a number, or NaN. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Milliseconds since the epoch of a time in `toISOString()` form (2026-11-20T10:00:00.123Z), the form
 * the shards store, or undefined for any other text. Cheaper than the general parser on every row.
 */
export function storedTimeMillis(text: string): number | undefined {
  if (
    text.length !== 24 ||
    text[4] !== "-" ||
    text[7] !== "-" ||
    text[10] !== "T" ||
    text[13] !== ":" ||
    text[16] !== ":" ||
    text[19] !== "." ||
    text[23] !== "Z"
  )
    return undefined;
  const [year, month, day, hour, minute, second, milli] = [
    digits(text, 0, 4),
    digits(text, 5, 7),
    digits(text, 8, 10),
    digits(text, 11, 13),
    digits(text, 14, 16),
    digits(text, 17, 19),
    digits(text, 20, 23),
  ];
  if (!(month >= 1 && month <= 12 && day >= 1 && hour <= 23 && minute <= 59 && second <= 59 && year >= 0 && milli >= 0))
    return undefined;
  const millis = utcMillis(year, month, day, hour, minute, second, milli);
  // 2026-02-30 rolls over to March: refuse what does not come back unchanged.
  if (day > 28 && new Date(millis).getUTCDate() !== day) return undefined;
  return millis;
}

/**
 * Microseconds since the epoch of a time in the shards' stored form (2026-11-20T10:00:00.123456Z, see
 * tracing/times.ts), or undefined for any other text. A bigint: past 2255 a double loses microseconds.
 */
export function storedTimeMicros(text: string): bigint | undefined {
  if (text.length !== 27 || text[26] !== "Z") return undefined;
  const extra = digits(text, 23, 26);
  if (!(extra >= 0)) return undefined;
  const millis = storedTimeMillis(`${text.slice(0, 23)}Z`);
  return millis === undefined ? undefined : BigInt(millis) * 1000n + BigInt(extra);
}

/** What a v1 file's TIMESTAMP(NANOS) holds: a signed 64-bit count of nanoseconds since 1970. */
const MIN_NANOS = -(2n ** 63n);
const MAX_NANOS = 2n ** 63n - 1n;

/** Nanoseconds since the epoch of any time the platform reads: its stored form, `toISOString()` or client ISO text. */
function anyTimeNanos(text: string): bigint | undefined {
  const micros = storedTimeMicros(text);
  if (micros !== undefined) return micros * 1000n;
  const millis = storedTimeMillis(text);
  if (millis !== undefined) return BigInt(millis) * 1_000_000n;
  const nanos = epochNanos(text);
  if (nanos !== undefined) return nanos;
  // Other text `Date` reads, which ingestion takes at millisecond precision.
  const stored = toStoredTime(text);
  return stored === undefined ? undefined : (storedTimeMicros(stored) as bigint) * 1000n;
}

/**
 * Times come as ISO text: the shard's stored microsecond times, `toISOString()` times of rows stored
 * before microseconds were kept, or clients' event times in any ISO form.
 */
function timestampColumn(
  column: ExportColumn,
  field: string,
  rows: number,
  type: TimestampNanosecond | TimestampMicrosecond,
): Data {
  const validity = new Validity(rows);
  const values = new BigInt64Array(rows);
  const nanosecond = type instanceof TimestampNanosecond;
  stringsOf(column, field, rows).forEach((text, i) => {
    if (text === null) return validity.setNull(i);
    const nanos = anyTimeNanos(text);
    if (nanos === undefined) throw new ColumnError(`${field} of row ${i} is not an ISO-8601 time: ${text}`);
    // A time the format cannot hold is refused, never written as another (a 64-bit overflow wraps).
    if (nanosecond && (nanos < MIN_NANOS || nanos > MAX_NANOS))
      throw new ColumnError(
        `${field} of row ${i}, ${text}, is outside what format_version v1 holds (Parquet nanoseconds, 1677-09-21 to 2262-04-11); export it as v2_beta`,
      );
    // Microseconds, rounded down as the stored form's are.
    values[i] = nanosecond ? nanos : nanos >= 0n || nanos % 1000n === 0n ? nanos / 1000n : nanos / 1000n - 1n;
  });
  return makeData({ type, length: rows, nullCount: validity.nulls, nullBitmap: validity.bitmap, data: values });
}

function columnData(column: ExportColumn, field: string, rows: number, kind: Kind, type: DataType): Data {
  switch (kind) {
    case "bool":
      return boolColumn(column, field, rows);
    case "int64":
      return int64Column(column, field, rows);
    case "double":
      return doubleColumn(column, field, rows);
    case "timestamp":
      return timestampColumn(column, field, rows, type as TimestampNanosecond | TimestampMicrosecond);
    case "string_list":
      return type instanceof List
        ? stringListColumn(column, field, rows, type as List<Utf8>)
        : stringColumn(column, field, rows);
    case "string":
      return stringColumn(column, field, rows);
  }
}

/** A page of no rows. */
export function emptyPage(fields: readonly string[]): ColumnPage {
  return { rows: 0, columns: Object.fromEntries(fields.map((field) => [field, { constant: null }])) };
}

/** The first id of a page, to name it in an error. */
function firstId(page: ColumnPage): string | null {
  const column = page.columns.id;
  if (!column || !("strings" in column) || page.rows === 0) return null;
  const [id] = JSON.parse(column.strings) as (string | null)[];
  return id;
}

/**
 * One Arrow record batch of a page, with the columns of `fields` in that order. Each text column is
 * encoded to UTF-8 in one call.
 */
export function exportRecordBatch(page: ColumnPage, fields: readonly string[], version: FormatVersion): RecordBatch {
  const schema = exportSchema(fields, version);
  const children = kindsOf(fields).map(([name, kind], i) => {
    try {
      const column = page.columns[name];
      if (!column) throw new ColumnError(`${name} is missing`);
      return columnData(column, name, page.rows, kind, schema.fields[i].type);
    } catch (error) {
      if (!(error instanceof ColumnError)) throw error;
      const id = firstId(page);
      throw new Error(`Export page${id ? ` from run ${id}` : ""}: ${error.message}`);
    }
  });
  const data = makeData({ type: new Struct(schema.fields), length: page.rows, nullCount: 0, children });
  return new RecordBatch(schema, data);
}
