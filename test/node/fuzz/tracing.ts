// The tracing API's hostile inputs: tampered pre-signed attachment URLs, trace filters that
// `/runs/query/validate` and the query routes must judge alike, and times at the edges of every
// format, which are refused or read back exactly.
import { zstdDecompressSync } from "node:zlib";
import fc from "fast-check";
import { parquetReadObjects } from "hyparquet";
import { it } from "vitest";
import { type S3Peer, startS3Peer } from "../../../scripts/lib/s3-peer/index.ts";
import { until } from "../../fixtures/until.ts";
import { SEED } from "./bodies.ts";
import {
  api,
  call,
  describeAnswer,
  describeRequest,
  type Exchange,
  Findings,
  fuzz,
  inParallel,
  succeeded,
} from "./harness.ts";

async function postMultipart(parts: [string, Blob, string?][]): Promise<Exchange> {
  const form = new FormData();
  for (const [name, blob, filename] of parts) form.append(name, blob, filename);
  const response = await fetch(`${fuzz.server.url}/api/v1/runs/multipart`, {
    method: "POST",
    headers: { "X-Api-Key": fuzz.server.apiKey },
    body: form,
  });
  return { status: response.status, text: await response.text() };
}

/** Reads a traced run, which ingestion stores in the background of the answer. */
async function readRun<T>(id: string): Promise<Exchange & { run?: T }> {
  const read = () => call("GET", `/api/v1/runs/${id}`);
  // Still 404 after 15 s: the last answer is the finding.
  const exchange = await until(read, (answer) => answer.status !== 404, 15_000, 200).catch(read);
  return { ...exchange, run: exchange.json as T };
}

/**
 * Tampered variants of a pre-signed URL, none of which may open the attachment. (Percent-encoding a
 * character, or the MAC in the standard base64 alphabet, spells the same URL and MAC: not tampering.)
 */
function tampered(url: URL): [string, string][] {
  const variants: [string, string][] = [];
  const signature = url.searchParams.get("signature")!;
  const expires = url.searchParams.get("expires")!;
  const [, , , , workspace, run, name] = url.pathname.split("/");
  const withParams = (params: string, path = url.pathname) => `${path}?${params}`;
  const ok = (s = signature, e = expires) => `expires=${e}&signature=${s}`;
  for (let i = 0; i < signature.length; i++) {
    const swapped = signature[i] === "A" ? "B" : "A";
    variants.push([
      `signature char ${i} changed`,
      withParams(ok(signature.slice(0, i) + swapped + signature.slice(i + 1))),
    ]);
  }
  variants.push(
    ["signature with = padding", withParams(ok(`${signature}=`))],
    ["signature with a character more", withParams(ok(`${signature}A`))],
    ["signature one character short", withParams(ok(signature.slice(0, -1)))],
    ["signature upper-cased", withParams(ok(signature.toUpperCase()))],
    ["empty signature", withParams(ok(""))],
    ["no signature", withParams(`expires=${expires}`)],
    [
      "two signatures, the first forged",
      withParams(`expires=${expires}&signature=${"A".repeat(signature.length)}&signature=${signature}`),
    ],
    [
      "two expiries, the first later",
      withParams(`expires=${Number(expires) + 3600}&expires=${expires}&signature=${signature}`),
    ],
    ["expires with a leading zero", withParams(ok(signature, `0${expires}`))],
    ["expires with a leading plus", withParams(ok(signature, `%2B${expires}`))],
    ["expires with a fraction", withParams(ok(signature, `${expires}.0`))],
    ["expires with a space", withParams(ok(signature, `%20${expires}`))],
    ["expires in exponent form", withParams(ok(signature, `${Number(expires) / 1e9}e9`))],
    ["expires one second later", withParams(ok(signature, String(Number(expires) + 1)))],
    ["expires far in the future", withParams(ok(signature, "99999999999"))],
    ["upper-case workspace id", withParams(ok(), `/api/v1/attachments/${workspace!.toUpperCase()}/${run}/${name}`)],
    ["upper-case run id", withParams(ok(), `/api/v1/attachments/${workspace}/${run!.toUpperCase()}/${name}`)],
    ["upper-case attachment name", withParams(ok(), `/api/v1/attachments/${workspace}/${run}/${name!.toUpperCase()}`)],
    ["run id with braces", withParams(ok(), `/api/v1/attachments/${workspace}/%7B${run}%7D/${name}`)],
    ["trailing slash", withParams(ok(), `/api/v1/attachments/${workspace}/${run}/${name}/`)],
  );
  // A variant that spells the issued URL unchanged (an id with no letters to upper-case) is no tampering.
  const issued = withParams(ok());
  return variants.filter(([, variant]) => variant !== issued);
}

const TIME_RUN = (id: string, start: unknown, session: string) => ({
  id,
  name: "edge time",
  run_type: "chain",
  session_name: session,
  start_time: start,
  inputs: {},
});

/**
 * Times at the edges of each format, and what a run must read back when the server takes them
 * (undefined: it must refuse them; an array: any of these).
 */
const EDGE_TIMES: [string | number, string | string[] | undefined][] = [
  ["0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000000Z"],
  ["0000-01-01T00:00:00.000001Z", "0000-01-01T00:00:00.000001Z"],
  // The bounds of a signed 64-bit count of nanoseconds (pandas, Arrow ns timestamps).
  ["1677-09-21T00:12:43.145224Z", "1677-09-21T00:12:43.145224Z"],
  ["1677-09-21T00:12:43.145225Z", "1677-09-21T00:12:43.145225Z"],
  ["2262-04-11T23:47:16.854775Z", "2262-04-11T23:47:16.854775Z"],
  ["2262-04-11T23:47:16.854776Z", "2262-04-11T23:47:16.854776Z"],
  ["1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"],
  ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"],
  ["9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.999999Z"],
  ["2026-06-01T12:00:00.123456789Z", "2026-06-01T12:00:00.123456Z"],
  ["2026-06-01T12:00:00+23:59", "2026-05-31T12:01:00.000000Z"],
  ["0000-01-01T00:00:00+01:00", undefined],
  ["9999-12-31T23:00:00-01:00", undefined],
  ["2026-06-01T12:00:00+25:00", undefined],
  ["2026-06-01T12:00:00-24:00", undefined],
  ["2026-06-01T12:00:00+05:60", undefined],
  ["2016-12-31T23:59:60Z", ["2017-01-01T00:00:00.000000Z"]],
  ["2016-12-31T23:59:60.5Z", ["2017-01-01T00:00:00.500000Z"]],
  ["2026-06-01T12:00:00", "2026-06-01T12:00:00.000000Z"],
  ["2026-06-01T24:00:00Z", ["2026-06-02T00:00:00.000000Z"]],
  ["2026-02-29T00:00:00Z", undefined],
  ["2026-13-01T00:00:00Z", undefined],
  ["10000-01-01T00:00:00Z", undefined],
  ["+010000-01-01T00:00:00Z", undefined],
  ["-000001-12-31T00:00:00Z", undefined],
  [-62_167_219_200_000, "0000-01-01T00:00:00.000000Z"],
  [-62_167_219_200_001, undefined],
  [253_402_300_799_999, "9999-12-31T23:59:59.999000Z"],
  [253_402_300_800_000, undefined],
  [8.64e15 + 1, undefined],
  [0.5, "1970-01-01T00:00:00.000500Z"],
];

/** Nanoseconds since the epoch of a `YYYY-MM-DDTHH:MM:SS.ffffffZ` time (any year 0000–9999). */
function nanoseconds(iso: string): bigint | undefined {
  const parts = iso.match(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second, micros] = parts.slice(1).map(Number) as number[];
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour!, minute!, second!, 0);
  return BigInt(date.getTime()) * 1_000_000n + BigInt(micros!) * 1_000n;
}

const hyparquetCompressors = { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) };

/**
 * Exports each stored run's UTC day to the S3 peer and checks that its Parquet `start_time` is the
 * time the API reads back, to the nanosecond: a time the server took must survive the export too.
 */
async function exportExactly(
  findings: Findings,
  peer: S3Peer,
  session: string,
  stored: { id: string; request: string; time: string }[],
): Promise<void> {
  const destination = await call("POST", "/api/v1/bulk-exports/destinations", {
    body: {
      display_name: "fuzz edge times",
      config: {
        bucket_name: peer.bucket,
        prefix: "fuzz",
        endpoint_url: peer.endpoint,
        config_kwargs_s3: { addressing_style: "path" },
      },
      credentials: { access_key_id: peer.accessKeyId, secret_access_key: peer.secretAccessKey },
    },
  });
  if (destination.status !== 200) throw new Error(`export destination: ${describeAnswer(destination)}`);
  const destinationId = (destination.json as { id: string }).id;
  const byDay = new Map<string, typeof stored>();
  // A time read back in another form is reported already; only well-formed ones are exported.
  for (const run of stored.filter((r) => nanoseconds(r.time) !== undefined))
    byDay.set(run.time.slice(0, 10), [...(byDay.get(run.time.slice(0, 10)) ?? []), run]);
  const exports: { id: string; runs: typeof stored; day: string }[] = [];
  for (const [day, runs] of byDay) {
    const start = `${day}T00:00:00Z`;
    const next = new Date(Number(nanoseconds(`${day}T00:00:00.000000Z`)! / 1_000_000n) + 86_400_000);
    const end = next.getUTCFullYear() > 9999 ? "9999-12-31T23:59:59.999999Z" : next.toISOString();
    const created = await call("POST", "/api/v1/bulk-exports", {
      body: { bulk_export_destination_id: destinationId, session_id: session, start_time: start, end_time: end },
    });
    const request = describeRequest(
      "POST",
      "/api/v1/bulk-exports",
      `the day ${day} of ${runs.map((r) => r.time).join(", ")}`,
    );
    if (!findings.check(request, created)) continue;
    if (!succeeded(created)) findings.add("an accepted time cannot be exported", request, describeAnswer(created));
    else exports.push({ id: (created.json as { id: string }).id, runs, day });
  }
  // The minute tick starts created exports (a few per tick): it runs again while one is still waiting.
  const tick = () => fetch(`${fuzz.server.url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*`).then((r) => r.text());
  await tick();
  let ticked = Date.now();
  const deadline = Date.now() + 60_000;
  await inParallel(exports, 2, async ({ id, runs, day }) => {
    let status = "";
    const ended = async () => {
      status =
        ((await call("GET", `/api/v1/bulk-exports/${id}`)).json as { status?: string } | undefined)?.status ?? "";
      if (status === "Created" && Date.now() - ticked > 2_000) {
        ticked = Date.now();
        await tick();
      }
      return ["Completed", "Failed", "Cancelled", "TimedOut"].includes(status);
    };
    // An export not ended by the deadline is a finding below.
    await until(ended, Boolean, Math.max(1, deadline - Date.now()), 250).catch(() => undefined);
    const request = describeRequest("GET", "/api/v1/bulk-exports/{id}", `the export of ${day}`);
    if (status !== "Completed") {
      const runsOfExport = await call("GET", `/api/v1/bulk-exports/${id}/runs`);
      findings.add(
        "an accepted time cannot be exported",
        request,
        `${status || "unfinished"}: ${runsOfExport.text.slice(0, 200)}`,
      );
      return;
    }
    const times = new Map<string, bigint>();
    const client = peer.client();
    for (const object of await client.listObjects(`fuzz/export_id=${id}/`)) {
      if (!object.key.endsWith(".parquet")) continue;
      const bytes = (await client.getObject(object.key))!;
      const rows = (await parquetReadObjects({
        file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
        compressors: hyparquetCompressors,
        parsers: { timestampFromNanoseconds: (nanos: bigint) => nanos },
      })) as { id: string; start_time: bigint }[];
      for (const row of rows) times.set(row.id, row.start_time);
    }
    for (const run of runs) {
      const exported = times.get(run.id);
      if (exported !== nanoseconds(run.time))
        findings.add(
          "a time exported differently",
          run.request,
          `read back ${run.time}, exported ${exported === undefined ? "no row" : `${exported} ns`} (expected ${nanoseconds(run.time)} ns)`,
        );
    }
  });
}

/** A grammar of LangSmith trace filters (fixed seed), for the validate-versus-query check. */
function filterArbitrary(): fc.Arbitrary<string> {
  const text = fc.constantFrom('"fuzz"', '"x"', '""', '"\\"quoted\\""', '"%"', '"_"', '"ü🙂"');
  const leaf = fc.oneof(
    fc
      .tuple(fc.constantFrom("eq", "neq"), fc.constantFrom("name", "run_type", "status", "id", "trace_id"), text)
      .map(([op, field, value]) => `${op}(${field}, ${value})`),
    fc
      .tuple(
        fc.constantFrom("gt", "gte", "lt", "lte"),
        fc.constantFrom("start_time", "end_time", "latency", "total_tokens", "total_cost", "feedback_score"),
        fc.constantFrom('"2026-01-01T00:00:00Z"', "1.5", "0", "-1", '"1e3"', '"not a time"', "1e400"),
      )
      .map(([op, field, value]) => `${op}(${field}, ${value})`),
    fc
      .tuple(fc.constantFrom("like", "search"), fc.constantFrom("name", "inputs", "error"), text)
      .map(([op, field, value]) => (op === "search" ? `search(${value})` : `like(${field}, ${value})`)),
    fc
      .tuple(fc.constantFrom("has", "exists"), fc.constantFrom("tags", "metadata", "inputs", "name"), text)
      .map(([op, field, value]) => `${op}(${field}, ${value})`),
    fc.constantFrom(
      'eq(metadata_key, "k")',
      'and(eq(metadata_key, "k"), eq(metadata_value, "v"))',
      'eq(feedback_key, "thumbs")',
      "eq(is_root, true)",
      "eq(error, false)",
      'in(run_type, ["llm", "chain"])',
      "in(name, [])",
      "eq(name)",
      "unknown_call(name)",
      'eq(nonexistent_field, "x")',
      "",
      "and()",
      "eq(name, ",
    ),
  );
  return fc.letrec<{ filter: string }>((tie) => ({
    filter: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc
        .tuple(fc.constantFrom("and", "or"), fc.array(tie("filter"), { minLength: 1, maxLength: 3 }))
        .map(([op, parts]) => `${op}(${parts.join(", ")})`),
      tie("filter").map((inner) => `not(${inner})`),
    ),
  })).filter;
}

/** Filters at and past the limits the query compiler must respect (parameters, LIKE length, depth, size). */
function limitFilters(): [string, string][] {
  const leaves = (n: number) => Array.from({ length: n }, (_, i) => `eq(name, "n${i}")`).join(", ");
  const nest = (depth: number) => `${"and(".repeat(depth - 1)}eq(name, "x")${")".repeat(depth - 1)}`;
  const uuids = (n: number) =>
    Array.from({ length: n }, (_, i) => `"00000000-0000-4000-8000-${String(i).padStart(12, "0")}"`).join(", ");
  return [
    ["in(id, [20,000 ids])", `in(id, [${uuids(20_000)}])`],
    ["in(name, [20,000 names])", `in(name, [${Array.from({ length: 20_000 }, (_, i) => `"n${i}"`).join(", ")}])`],
    ["in(id, [99 ids])", `in(id, [${uuids(99)}])`],
    ["in(id, [101 ids])", `in(id, [${uuids(101)}])`],
    ["like(name, 49-byte pattern)", `like(name, "%${"a".repeat(47)}%")`],
    ["like(name, 50-byte pattern)", `like(name, "%${"a".repeat(48)}%")`],
    ["like(name, 60-byte pattern)", `like(name, "%${"a".repeat(58)}%")`],
    ["like(name, 60-byte multibyte pattern)", `like(name, "%${"é".repeat(29)}%")`],
    ["search(60-byte text)", `search("${"a".repeat(60)}")`],
    ["or() of 99 leaves", `or(${leaves(99)})`],
    ["or() of 100 leaves", `or(${leaves(100)})`],
    ["or() of 6,000 leaves", `or(${leaves(6_000)})`],
    ["and() of 6,000 leaves", `and(${leaves(6_000)})`],
    ["and() nested 63 deep", nest(63)],
    ["and() nested 64 deep", nest(64)],
    ["and() nested 65 deep", nest(65)],
    ["not() nested 200 deep", `${"not(".repeat(200)}eq(name, "x")${")".repeat(200)}`],
    ["has(metadata, 60-byte key)", `has(metadata, '{"${"k".repeat(56)}": 1}')`],
    ["a 2 MB string", `eq(name, "${"x".repeat(2_000_000)}")`],
  ];
}

export function describeTracing(): void {
  it("never opens an attachment through a tampered pre-signed URL", async () => {
    const findings = new Findings("tampered pre-signed URLs");
    const id = crypto.randomUUID();
    const posted = await postMultipart([
      [
        `post.${id}`,
        new Blob([JSON.stringify(TIME_RUN(id, new Date().toISOString(), "fuzz-attachments"))], {
          type: "application/json",
        }),
      ],
      [`attachment.${id}.file`, new Blob([new Uint8Array([1, 2, 3])], { type: "application/octet-stream" }), "file"],
    ]);
    if (posted.status !== 202) throw new Error(`multipart ingest: ${posted.status} ${posted.text}`);
    const read = await readRun<{ s3_urls?: Record<string, { presigned_url: string }> }>(id);
    const genuine = new URL(read.run!.s3_urls!["attachment.file"]!.presigned_url);
    const open = (pathAndQuery: string) =>
      fetch(`${genuine.origin}${pathAndQuery}`, { signal: AbortSignal.timeout(15_000) }).then(async (response) => ({
        status: response.status,
        text: await response.text(),
      }));
    const original = await open(`${genuine.pathname}${genuine.search}`);
    if (original.status !== 200)
      findings.add("the genuine URL does not open", genuine.pathname, String(original.status));
    for (const [what, pathAndQuery] of tampered(genuine)) {
      const answer = await open(pathAndQuery);
      if (answer.status < 300 || answer.status >= 500)
        findings.add(
          answer.status < 300 ? "a tampered URL opens the attachment" : "server error",
          describeRequest("GET", "/api/v1/attachments/{workspace}/{run}/{name}", what),
          `${answer.status} ${answer.text.slice(0, 80)}`,
        );
    }
    findings.expectNone();
  }, 60_000);

  it("refuses each edge time of the tracing ingest formats, or reads it back and exports it exactly", async () => {
    const findings = new Findings("edge times");
    const session = (
      await api<{ id: string }>("POST", "/api/v1/sessions", { name: `fuzz-times-${crypto.randomUUID()}` })
    ).body.id;
    // The export's S3 peer starts while the runs are ingested.
    const starting = startS3Peer();
    const stored: { id: string; request: string; time: string }[] = [];
    await inParallel(EDGE_TIMES, 4, async ([time, expected]) => {
      const id = crypto.randomUUID();
      const what = `start_time ${JSON.stringify(time)}`;
      const request = describeRequest("POST", "/api/v1/runs", what);
      const posted = await call("POST", "/api/v1/runs", {
        body: { ...TIME_RUN(id, time, ""), session_name: undefined, session_id: session },
      });
      if (!findings.check(request, posted)) return;
      if (!succeeded(posted)) return;
      if (expected === undefined) {
        findings.add("an impossible time accepted", request, describeAnswer(posted));
        return;
      }
      const read = await readRun<{ start_time?: string }>(id);
      const accepted = Array.isArray(expected) ? expected : [expected];
      const got = read.run?.start_time;
      if (read.status !== 200 || !got) {
        findings.add("an accepted run cannot be read back", request, describeAnswer(read));
        return;
      }
      stored.push({ id, request, time: got });
      if (!accepted.includes(got))
        findings.add("a time read back changed", request, `read back ${got}, expected ${accepted.join(" or ")}`);
      // The query answers it the same, and finds it by its own time.
      const queried = await call("POST", "/api/v1/runs/query", {
        body: { session: [session], id: [id], start_time: got, limit: 1 },
      });
      const found = (queried.json as { runs?: { start_time?: string }[] } | undefined)?.runs?.[0]?.start_time;
      if (findings.check(describeRequest("POST", "/api/v1/runs/query", `${what} by id`), queried) && found !== got)
        findings.add(
          "a time queried back differs",
          request,
          `query: ${found ?? describeAnswer(queried)}, read: ${got}`,
        );
    });
    const peer = await starting;
    try {
      await exportExactly(findings, peer, session, stored);
    } finally {
      await peer.stop();
    }
    findings.expectNone();
  }, 180_000);

  it("agrees with /runs/query/validate on every filter, at every size, on every query route", async () => {
    const findings = new Findings("trace filters: validate versus query");
    const session = (
      await api<{ id: string }>("POST", "/api/v1/sessions", { name: `fuzz-filters-${crypto.randomUUID()}` })
    ).body.id;
    await api("POST", "/api/v1/runs/batch", {
      post: ["fuzz", "x", "n1"].map((name) => ({
        ...TIME_RUN(crypto.randomUUID(), new Date().toISOString(), ""),
        session_name: undefined,
        session_id: session,
        name,
        tags: ["fuzz"],
        extra: { metadata: { k: "v" } },
      })),
    });
    const generated = fc
      .sample(filterArbitrary(), { seed: SEED, numRuns: 40 })
      .map((filter): [string, string] => [filter.length > 60 ? `${filter.slice(0, 60)}…` : filter, filter]);
    const filters = [...limitFilters(), ...generated];
    const fields = ["filter", "trace_filter", "tree_filter"] as const;
    const probes = filters.flatMap(([what, filter]) => fields.map((field) => ({ what, filter, field })));
    await inParallel(probes, 3, async ({ what, filter, field }) => {
      const validate = await call("POST", "/api/v1/runs/query/validate", { body: { [field]: filter } });
      const shown = `${field}: ${what}`;
      if (!findings.check(describeRequest("POST", "/api/v1/runs/query/validate", shown), validate)) return;
      const valid = validate.status === 200 ? (validate.json as { valid?: boolean }).valid : false;
      const routes: [string, unknown][] = [
        ["/api/v1/runs/query", { session: [session], [field]: filter, limit: 5 }],
        ["/api/v1/runs/stats", { session: [session], [field]: filter }],
        ["/api/v2/runs/query", { project_ids: [session], [field]: filter, page_size: 5 }],
      ];
      for (const [path, body] of routes) {
        const answer = await call("POST", path, { body, timeoutMs: 30_000 });
        const request = describeRequest("POST", path, shown);
        if (!findings.check(request, answer)) continue;
        const accepted = answer.status === 200;
        if (accepted !== valid)
          findings.add(
            valid ? "validate accepts a filter the query refuses" : "validate refuses a filter the query runs",
            request,
            `validate: ${validate.status} ${JSON.stringify(validate.json).slice(0, 120)}; query: ${describeAnswer(answer)}`,
          );
      }
    });
    findings.expectNone();
  }, 180_000);
}
