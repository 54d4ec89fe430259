// Bulk export end to end: the platform on wrangler dev exports a project's runs over several days
// to a real S3 peer (wrangler's local R2 S3 endpoint, which verifies SigV4) through a fault proxy,
// and DuckDB reads the Hive-partitioned Parquet back.

import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "../../scripts/lib/s3-peer/fault-proxy.ts";
import { type S3Peer, startS3Peer } from "../../scripts/lib/s3-peer/index.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { until as poll } from "../fixtures/until.ts";
import { startTestServer } from "./helpers.ts";
import { datasetFiles, readHiveDataset } from "./hive-dataset.ts";

let server: Awaited<ReturnType<typeof startTestServer>>;
let peer: S3Peer;
let proxy: FaultProxy;
let duck: DuckDBConnection;
let duckInstance: DuckDBInstance;
let projectId: string;
let destinationId: string;
const downloads = scratchDir("export-downloads");

/** Runs per UTC day of the exported project: 2026-11-17 … 2026-11-19, plus one outside the window. */
const DAYS: Record<string, number> = { "2026-11-17": 30, "2026-11-18": 50, "2026-11-19": 20 };
const LLM_EVERY = 5;

type Export = { id: string; status: string } & Record<string, unknown>;
type ExportRun = {
  id: string;
  status: string;
  retry_number: number;
  errors: Record<string, string>;
  rows_written: number;
  exported_files: string[];
};

async function api<T>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { "X-Api-Key": server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBe(expected);
  // No response of the export API may carry a secret.
  expect(text).not.toContain(peer.secretAccessKey);
  return JSON.parse(text) as T;
}

function runsOf(day: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const id = crypto.randomUUID();
    const start = new Date(Date.parse(`${day}T01:00:00.000Z`) + i * 60_000).toISOString();
    const stamp = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
    const llm = i % LLM_EVERY === 0;
    return {
      id,
      name: llm ? "ChatModel" : "step",
      run_type: llm ? "llm" : "chain",
      start_time: start,
      end_time: new Date(Date.parse(start) + 1500).toISOString(),
      session_id: projectId,
      trace_id: id,
      dotted_order: stamp,
      inputs: { question: `q${i}` },
      outputs: { answer: `a${i}` },
      tags: llm ? ["model", "prod"] : [],
      extra: { metadata: { day } },
    };
  });
}

/** Creates an export of the project to the peer destination. */
const newExport = (start: string, end: string, fields: Record<string, unknown> = {}) =>
  api<Export>("POST", "/bulk-exports", {
    bulk_export_destination_id: destinationId,
    session_id: projectId,
    start_time: start,
    end_time: end,
    ...fields,
  });

const tick = (time?: Date) =>
  fetch(`${server.url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*${time ? `&time=${time.getTime()}` : ""}`).then((r) =>
    r.text(),
  );

/** Polls `probe` (every 250 ms) until it answers a value. */
async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const value = await poll(probe, Boolean, timeoutMs, 250).catch((error: Error) => {
    throw new Error(`timed out waiting for ${what}: ${error.message}`);
  });
  return value as T;
}

const finished = (id: string) =>
  until(`export ${id} to finish`, async () => {
    const exported = await api<Export>("GET", `/bulk-exports/${id}`);
    return ["Completed", "Failed", "Cancelled", "TimedOut"].includes(exported.status) && exported;
  });

/** Downloads an export's objects into a local folder that keeps their keys, for DuckDB. */
async function download(exportId: string): Promise<string> {
  const root = join(downloads, exportId);
  const client = peer.client();
  for (const object of await client.listObjects(`exports/export_id=${exportId}/`)) {
    const path = join(root, object.key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, (await client.getObject(object.key))!);
  }
  return join(root, `exports/export_id=${exportId}`);
}

/**
 * A Python with polars (`PYTHON`, else `python3`), for reading an export the way data teams do;
 * null when there is none (`pip install polars` provides it).
 */
const PYTHON_WITH_POLARS = (() => {
  const python = process.env.PYTHON ?? "python3";
  const probe = spawnSync(python, ["-c", "import polars"], { encoding: "utf8" });
  return probe.status === 0 ? python : null;
})();
/** The folder of the first export, downloaded, for the polars check. */
let exportedFolder = "";

const rowsOf = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
const parquetGlob = (folder: string) =>
  `read_parquet('${folder}/**/*.parquet', hive_partitioning = true, hive_types = {'year': INTEGER, 'month': INTEGER, 'day': INTEGER})`;

beforeAll(async () => {
  peer = await startS3Peer();
  proxy = await startFaultProxy(peer.endpoint);
  server = await startTestServer();
  duckInstance = await DuckDBInstance.create();
  duck = await duckInstance.connect();
  projectId = (await api<{ id: string }>("POST", "/sessions", { name: `export-${crypto.randomUUID()}` })).id;
  const posts = [...Object.entries(DAYS).flatMap(([day, count]) => runsOf(day, count)), ...runsOf("2026-11-21", 3)];
  const ingested = await api<{ accepted: number; errors: unknown[] }>("POST", "/runs/batch", { post: posts }, 202);
  expect(ingested).toEqual({ accepted: posts.length, errors: [] });
}, 120_000);

afterAll(async () => {
  duck?.closeSync();
  await server?.stop();
  await proxy?.stop();
  await peer?.stop();
  rmSync(downloads, { recursive: true, force: true });
  // No log line of the platform may carry a secret either.
  if (server) expect(server.output()).not.toContain(peer.secretAccessKey);
});

const destinationBody = (patch: Record<string, unknown> = {}, credentials: Record<string, unknown> = {}) => ({
  display_name: "Peer lake",
  config: {
    bucket_name: peer.bucket,
    prefix: "exports",
    endpoint_url: proxy.url,
    config_kwargs_s3: { addressing_style: "path" },
    ...patch,
  },
  credentials: { access_key_id: peer.accessKeyId, secret_access_key: peer.secretAccessKey, ...credentials },
});

describe("destinations against a real S3 peer", () => {
  it("refuses each kind of bad destination with LangSmith's message", async () => {
    proxy.denyAccessKey("denied-key-id");
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{}, { access_key_id: "denied-key-id" }, "Access denied"],
      [{ bucket_name: "no-such-bucket" }, {}, "Bucket is not valid"],
      [{}, { access_key_id: "unknown-key-id" }, "Key ID you provided does not exist"],
      [{ endpoint_url: "http://127.0.0.1:9/nothing" }, {}, "Invalid endpoint"],
    ];
    for (const [config, credentials, message] of cases) {
      const response = await api<{ detail: string }>(
        "POST",
        "/bulk-exports/destinations",
        destinationBody(config, credentials),
        400,
      );
      expect(response.detail).toContain(message);
    }
    // A wrong secret is caught by the peer's signature check.
    const wrongSecret = await api<{ detail: string }>(
      "POST",
      "/bulk-exports/destinations",
      destinationBody({}, { secret_access_key: "not-the-secret" }),
      400,
    );
    expect(wrongSecret.detail).toContain("SignatureDoesNotMatch");
  });

  it("creates a destination after a test write it cleans up, showing credential names only", async () => {
    const destination = await api<{ id: string; credentials_keys: string[] }>(
      "POST",
      "/bulk-exports/destinations",
      destinationBody(),
    );
    expect(destination.credentials_keys.sort()).toEqual(["access_key_id", "secret_access_key"]);
    destinationId = destination.id;
    expect(await peer.client().listObjects("exports/tmp/")).toEqual([]);
    expect(proxy.requests().some((r) => r.method === "PUT" && r.path.includes("/exports/tmp/destination-check-"))).toBe(
      true,
    );
    // Rotating credentials re-checks access.
    await api(
      "PATCH",
      `/bulk-exports/destinations/${destinationId}`,
      { credentials: { access_key_id: "unknown-key-id", secret_access_key: "x" } },
      400,
    );
    await api("PATCH", `/bulk-exports/destinations/${destinationId}`, {
      credentials: { access_key_id: peer.accessKeyId, secret_access_key: peer.secretAccessKey },
    });
  });
});

describe("one-off exports", () => {
  it("writes every run of the window in Hive partitions with the v1 schema and a manifest", async () => {
    const created = await newExport("2026-11-17T00:00:00Z", "2026-11-20T00:00:00Z");
    await tick();
    const done = await finished(created.id);
    expect(done.status).toBe("Completed");

    const runs = await api<ExportRun[]>("GET", `/bulk-exports/${created.id}/runs`);
    expect(runs.map((r) => [r.status, r.rows_written])).toEqual(
      Object.values(DAYS).map((count) => ["Completed", count]),
    );
    expect(await api<ExportRun>("GET", `/bulk-exports/${created.id}/runs/${runs[1].id}`)).toEqual(runs[1]);
    await api("GET", `/bulk-exports/${created.id}/runs/${crypto.randomUUID()}`, undefined, 404);

    const folder = await download(created.id);
    exportedFolder = folder;
    const perDay = await rowsOf(
      `SELECT year, month, day, count(*)::INTEGER AS n FROM ${parquetGlob(folder)} GROUP BY ALL ORDER BY day`,
    );
    expect(perDay).toEqual([
      { year: 2026, month: 11, day: 17, n: 30 },
      { year: 2026, month: 11, day: 18, n: 50 },
      { year: 2026, month: 11, day: 19, n: 20 },
    ]);
    const types = Object.fromEntries(
      (await rowsOf(`DESCRIBE SELECT * FROM ${parquetGlob(folder)}`)).map((r) => [r.column_name, r.column_type]),
    );
    expect(types).toMatchObject({
      id: "VARCHAR",
      start_time: "TIMESTAMP_NS",
      end_time: "TIMESTAMP_NS",
      tags: "VARCHAR",
      is_root: "BOOLEAN",
      total_tokens: "BIGINT",
      inputs: "VARCHAR",
      tenant_id: "VARCHAR",
      session_id: "VARCHAR",
    });
    const [sample] = await rowsOf(
      `SELECT inputs->>'question' AS q, session_id, is_root FROM ${parquetGlob(folder)} WHERE day = 18 ORDER BY start_time LIMIT 1`,
    );
    expect(sample).toEqual({ q: "q0", session_id: projectId, is_root: true });

    const manifest = JSON.parse(
      new TextDecoder().decode((await peer.client().getObject(`exports/_manifest.export_id=${created.id}.json`))!),
    );
    expect(manifest).toMatchObject({
      export_id: created.id,
      total_rows: 100,
      format_version: "v1",
      compression: "zstandard",
    });
    expect(manifest.files.map((f: { rows: number }) => f.rows)).toEqual([30, 50, 20]);
    expect(manifest.columns.find((c: { name: string }) => c.name === "start_time")).toEqual({
      name: "start_time",
      type: "timestamp[ns]",
    });

    // A directory reader pointed at the export folder (pyarrow.dataset, polars with hive partitioning)
    // opens its files: all of them are Parquet. polars does not skip `_` names, so none is there.
    const files = datasetFiles(folder);
    expect(files).toHaveLength(3);
    expect(readdirSync(folder, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())).toHaveLength(3);
    for (const file of files)
      expect(file).toMatch(
        /^tenant_id=[^/]+\/session_id=[^/]+\/runs\/year=2026\/month=11\/day=1[789]\/part-[^/]+\.parquet$/,
      );
    const dataset = await readHiveDataset(folder);
    expect(dataset).toHaveLength(100);
    const byDay: Record<string, number> = {};
    for (const row of dataset)
      byDay[`${row.year}-${row.month}-${row.day}`] = (byDay[`${row.year}-${row.month}-${row.day}`] ?? 0) + 1;
    expect(byDay).toEqual({ "2026-11-17": 30, "2026-11-18": 50, "2026-11-19": 20 });
    expect(new Set(dataset.map((row) => row.session_id))).toEqual(new Set([projectId]));
    const first = dataset.find((row) => row.day === "18" && JSON.parse(String(row.inputs)).question === "q0");
    expect(first).toMatchObject({ is_root: true, run_type: "llm", tags: '["model","prod"]' });
  }, 120_000);

  // polars refuses a dataset folder that holds any file of another extension (even `_manifest.json`):
  // the manifest lives beside the export's folder.
  it.skipIf(!PYTHON_WITH_POLARS)(
    `polars.scan_parquet reads the export folder with hive_partitioning${PYTHON_WITH_POLARS ? "" : " (skipped: no python3 with polars; pip install polars, or set PYTHON)"}`,
    () => {
      expect(exportedFolder).not.toBe("");
      const script = [
        "import json, sys, polars as pl",
        "df = pl.scan_parquet(sys.argv[1] + '/', hive_partitioning=True).collect()",
        "days = df.group_by('day').len().sort('day')",
        "print(json.dumps({'rows': df.height, 'days': days['day'].to_list(), 'counts': days['len'].to_list()}))",
      ].join("\n");
      const result = spawnSync(PYTHON_WITH_POLARS!, ["-c", script, exportedFolder], { encoding: "utf8" });
      expect(result.status, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ rows: 100, days: [17, 18, 19], counts: [30, 50, 20] });
    },
  );

  it("honours filter and export_fields, with the v2_beta schema", async () => {
    const created = await newExport("2026-11-18T00:00:00Z", "2026-11-20T00:00:00Z", {
      filter: 'and(eq(run_type, "llm"), has(tags, "prod"))',
      export_fields: ["id", "name", "run_type", "start_time", "tags", "is_root"],
      format_version: "v2_beta",
      compression: "snappy",
    });
    await tick();
    expect((await finished(created.id)).status).toBe("Completed");
    const folder = await download(created.id);
    const perDay = await rowsOf(
      `SELECT day, count(*)::INTEGER AS n, count(DISTINCT name)::INTEGER AS names FROM ${parquetGlob(folder)} GROUP BY day ORDER BY day`,
    );
    expect(perDay).toEqual([
      { day: 18, n: 50 / LLM_EVERY, names: 1 },
      { day: 19, n: 20 / LLM_EVERY, names: 1 },
    ]);
    const columns = (
      await rowsOf(`DESCRIBE SELECT * FROM read_parquet('${folder}/**/*.parquet', hive_partitioning = false)`)
    ).map((r) => [r.column_name, r.column_type]);
    expect(columns).toEqual([
      ["id", "VARCHAR"],
      ["name", "VARCHAR"],
      ["run_type", "VARCHAR"],
      ["start_time", "TIMESTAMP WITH TIME ZONE"],
      ["tags", "VARCHAR[]"],
      ["is_root", "BOOLEAN"],
    ]);
    const [tags] = await rowsOf(`SELECT tags FROM ${parquetGlob(folder)} LIMIT 1`);
    expect(tags).toEqual({ tags: ["model", "prod"] });
  }, 120_000);

  it("retries an upload that keeps failing, records each attempt, and writes no duplicate rows", async () => {
    // Four 503s on Parquet uploads: the client's own three attempts fail, the run records retry_0,
    // the retry succeeds.
    proxy.failNext(4, { status: 503, code: "SlowDown" }, (r) => r.method === "PUT" && r.path.includes(".parquet"));
    const created = await newExport("2026-11-17T00:00:00Z", "2026-11-18T00:00:00Z");
    await tick();
    expect((await finished(created.id)).status).toBe("Completed");
    const [run] = await api<ExportRun[]>("GET", `/bulk-exports/${created.id}/runs`);
    expect(run).toMatchObject({ status: "Completed", retry_number: 1, rows_written: 30 });
    expect(run.errors.retry_0).toContain("SlowDown");
    const folder = await download(created.id);
    expect(
      await rowsOf(`SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS ids FROM ${parquetGlob(folder)}`),
    ).toEqual([{ n: 30, ids: 30 }]);
  }, 120_000);

  it("stops a running export that is cancelled while it waits to retry", async () => {
    // Every upload attempt of this export fails at first, so its run waits for a retry; cancel then.
    proxy.failNext(3, { status: 500, code: "InternalError" }, (r) => r.method === "PUT" && r.path.includes(".parquet"));
    const created = await newExport("2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z");
    await tick();
    await until(
      "the first failed attempt",
      async () => (await api<ExportRun[]>("GET", `/bulk-exports/${created.id}/runs`))[0]?.retry_number === 1,
    );
    expect(await api<Export>("PATCH", `/bulk-exports/${created.id}`, { status: "Cancelled" })).toMatchObject({
      status: "Cancelled",
    });
    // The retry comes and goes (5 s backoff) without writing anything. Time itself is under test: the
    // retry's real backoff, and nothing written when it has passed.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    const [run] = await api<ExportRun[]>("GET", `/bulk-exports/${created.id}/runs`);
    expect(run).toMatchObject({ status: "Cancelled", rows_written: 0, exported_files: [] });
    expect(
      (await peer.client().listObjects(`exports/export_id=${created.id}/`)).filter((o) => o.key.endsWith(".parquet")),
    ).toEqual([]);
    expect((await api<Export>("GET", `/bulk-exports/${created.id}`)).status).toBe("Cancelled");
  }, 60_000);

  it("never starts a cancelled export", async () => {
    const created = await newExport("2026-11-17T00:00:00Z", "2026-11-20T00:00:00Z");
    await api("PATCH", `/bulk-exports/${created.id}`, { status: "Cancelled" });
    await tick();
    expect(await api<ExportRun[]>("GET", `/bulk-exports/${created.id}/runs`)).toEqual([]);
    expect(await peer.client().listObjects(`exports/export_id=${created.id}/`)).toEqual([]);
  });
});

describe("scheduled exports", () => {
  it("spawn the window that is due on the injected clock and export it", async () => {
    const schedule = await api<Export>("POST", "/bulk-exports", {
      bulk_export_destination_id: destinationId,
      session_id: projectId,
      start_time: "2026-11-18T00:00:00Z",
      interval_hours: 24,
    });
    expect(schedule.status).toBe("IntervalScheduled");
    // 2026-11-19T00:09: the first window is not due until 00:10.
    await tick(new Date("2026-11-19T00:09:00Z"));
    expect(await api<ExportRun[]>("GET", `/bulk-exports/runs?source_bulk_export_id=${schedule.id}`)).toEqual([]);
    await tick(new Date("2026-11-19T00:10:00Z"));
    const runs = await until("the spawned export's run to complete", async () => {
      const spawned = await api<ExportRun[]>("GET", `/bulk-exports/runs?source_bulk_export_id=${schedule.id}`);
      return spawned.length === 1 && spawned[0].status === "Completed" && spawned;
    });
    expect(runs[0].rows_written).toBe(DAYS["2026-11-18"]);
    const children = (
      await api<(Export & { source_bulk_export_id: string; start_time: string; end_time: string })[]>(
        "GET",
        "/bulk-exports",
      )
    ).filter((e) => e.source_bulk_export_id === schedule.id);
    expect(children.map((c) => [c.start_time, c.end_time])).toEqual([
      ["2026-11-18T00:00:00.000Z", "2026-11-19T00:00:00.000Z"],
    ]);
    await api("PATCH", `/bulk-exports/${schedule.id}`, { status: "Cancelled" });
    await tick(new Date("2026-11-21T00:10:00Z"));
    expect(await api<ExportRun[]>("GET", `/bulk-exports/runs?source_bulk_export_id=${schedule.id}`)).toHaveLength(1);
  }, 120_000);
});
