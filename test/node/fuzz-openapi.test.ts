// Property-based fuzzing of the whole API against its own OpenAPI document: every operation gets
// requests generated from its schemas (valid) and hostile mutations of them; every answer must be
// documented (status, content type, body schema) and none may be a 5xx. FUZZ_SEED / FUZZ_RUNS.
// Then, on the same server, the hostile-input suites of ./fuzz/hostile.ts.
import { type Schema, Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createFixtures,
  type Endpoint,
  type Fixtures,
  fill as fillPath,
  fuzz,
  inParallel,
  jsonSchemaOf,
  knownValues,
  params,
  serverError,
  startFuzzServer,
} from "./fuzz/harness.ts";
import { describeHostileInput } from "./fuzz/hostile.ts";
import { type JsonSchema, resolve, schemaArbitrary, wrongTypeValue } from "./fuzz/schema-arbitrary.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
/** Scales the number of generated valid requests per operation (3 × FUZZ_RUNS). */
const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 1));
const CONCURRENCY = 6;
/** Per request, headers and the body we read; streams and waits we do not need are aborted at once. */
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_LISTED_FINDINGS = 60;

/** One request the fuzzer sends, and what kind of input it carries (for the failure report). */
interface Probe {
  endpoint: Endpoint;
  kind: string;
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Another workspace's id this request names: no answer may contain it. */
  foreignId?: string;
}
interface Finding {
  method: string;
  path: string;
  status: number | "timeout" | "network";
  kind: string;
  why: string;
}

let fixtures: Fixtures;

const HOSTILE_IDS: Record<string, (path: string, name: string) => string> = {
  "another tenant's id": (_path, name) => fixtures.otherTenant[name] ?? crypto.randomUUID(),
  // fetch resolves a bare `..` segment before sending; an encoded slash keeps the traversal in the id.
  "path traversal id": () => "..%2F..%2Fthreads",
  "NUL id": () => "%00",
  "long id (4,096 chars)": () => "a".repeat(4_096),
  "unicode id": () => encodeURIComponent("ü🙂\u202eñ"),
};

const fill = (endpoint: Endpoint, override: Record<string, string> = {}) => fillPath(fixtures, endpoint, override);

function sample<T>(arbitrary: fc.Arbitrary<T>, seed: number, count: number): T[] {
  return fc.sample(arbitrary, { seed, numRuns: count });
}

/** Valid query strings: required parameters always, optional ones now and then. */
function queryArbitrary(endpoint: Endpoint): fc.Arbitrary<URLSearchParams> {
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const parameter of params(endpoint, "query")) {
    record[parameter.name] = schemaArbitrary(parameter.schema ?? {}, fuzz.doc.components.schemas);
    if (parameter.required) required.push(parameter.name);
  }
  return fc.record(record, { requiredKeys: required }).map((values) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(values)) {
      for (const item of Array.isArray(value) ? value : [value])
        query.append(name, typeof item === "string" ? item : JSON.stringify(item));
    }
    return query;
  });
}

const deepValue = (levels: number): string => "[".repeat(levels) + "]".repeat(levels);

/** Puts `value` into every free-form field of a generated body (where hostile data can travel furthest). */
function plant(body: unknown, schema: JsonSchema, value: unknown): unknown {
  const s = resolve(schema, fuzz.doc.components.schemas);
  if (!body || typeof body !== "object" || Array.isArray(body)) return { fuzz: value };
  const result: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  let planted = false;
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    const p = resolve(property, fuzz.doc.components.schemas);
    const freeForm = !p.type || p.type === "object" || (Array.isArray(p.type) && p.type.includes("object"));
    if (freeForm && !p.enum && !p.$ref) {
      result[name] = value;
      planted = true;
    }
  }
  if (!planted) result.fuzz = value;
  return result;
}

/** Every request the fuzzer sends for one operation. */
function probesFor(endpoint: Endpoint, index: number): Probe[] {
  const seed = SEED + index * 7_919;
  const components = fuzz.doc.components.schemas;
  const probes: Probe[] = [];
  const queries = sample(queryArbitrary(endpoint), seed, 3 * RUNS);
  const bodySchema = jsonSchemaOf(endpoint);
  const json = (body: unknown) => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const valid = bodySchema
    ? sample(schemaArbitrary(bodySchema, components, knownValues(fixtures)), seed, 3 * RUNS)
    : [];
  const base = valid[0] ?? {};

  for (let i = 0; i < 3 * RUNS; i++) {
    probes.push({
      endpoint,
      kind: "valid",
      path: fill(endpoint),
      query: queries[i],
      ...(bodySchema ? json(valid[i]) : {}),
    });
  }
  // Credentials problems are answered by shared middleware: one of the two per operation is enough.
  probes.push(
    index % 2 === 0
      ? { endpoint, kind: "no API key", path: fill(endpoint), headers: { "X-Api-Key": "" } }
      : {
          endpoint,
          kind: "unknown workspace (X-Tenant-Id)",
          path: fill(endpoint),
          headers: { "X-Tenant-Id": crypto.randomUUID() },
        },
  );
  // Only handlers that read the body themselves (JSON-RPC, multipart) look at Accept.
  if (!bodySchema)
    probes.push({ endpoint, kind: "Accept: text/html", path: fill(endpoint), headers: { Accept: "text/html" } });

  // Every path id gets another tenant's id, and two of the other hostile ids (rotating, so each kind meets every route family).
  const [otherTenant, ...hostile] = Object.entries(HOSTILE_IDS);
  params(endpoint, "path").forEach((parameter, position) => {
    const chosen = [otherTenant!, ...[0, 1].map((k) => hostile[(index + position + k * 2) % hostile.length]!)];
    for (const [kind, value] of chosen) {
      const id = value(endpoint.path, parameter.name);
      const foreignId = kind === otherTenant![0] && Object.values(fixtures.otherTenant).includes(id) ? id : undefined;
      probes.push({
        endpoint,
        kind: `${kind} in ${parameter.name}`,
        path: fill(endpoint, { [parameter.name]: id }),
        foreignId,
        ...(bodySchema ? json(base) : {}),
      });
    }
  });
  for (const parameter of params(endpoint, "query")) {
    const wrong = wrongTypeValue(parameter.schema ?? {}, components);
    if (wrong === undefined || typeof wrong === "number") continue;
    probes.push({
      endpoint,
      kind: `wrong type in query ${parameter.name}`,
      path: fill(endpoint),
      query: new URLSearchParams({ [parameter.name]: JSON.stringify(wrong) }),
    });
  }

  if (bodySchema) {
    const s = resolve(bodySchema, components);
    const wrong = wrongTypeValue(s, components);
    if (wrong !== undefined) probes.push({ endpoint, kind: "wrong body type", path: fill(endpoint), ...json(wrong) });
    for (const [name, property] of Object.entries(s.properties ?? {}).slice(0, 3)) {
      const wrongField = wrongTypeValue(property, components);
      if (wrongField !== undefined && base && typeof base === "object")
        probes.push({
          endpoint,
          kind: `wrong type in ${name}`,
          path: fill(endpoint),
          ...json({ ...base, [name]: wrongField }),
        });
    }
    if ((s.required ?? []).length > 0 && base && typeof base === "object") {
      const { [s.required![0]!]: _dropped, ...rest } = base as Record<string, unknown>;
      probes.push({ endpoint, kind: `missing required ${s.required![0]}`, path: fill(endpoint), ...json(rest) });
    }
    probes.push({
      endpoint,
      kind: "malformed JSON",
      path: fill(endpoint),
      headers: { "Content-Type": "application/json" },
      body: '{"a": [1, 2',
    });
    probes.push({
      endpoint,
      kind: "deep nesting (3,000 levels)",
      path: fill(endpoint),
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(plant(base, s, null)).replace("null", deepValue(3_000)),
    });
    probes.push({
      endpoint,
      kind: "huge string (1 MB)",
      path: fill(endpoint),
      ...json(plant(base, s, "x".repeat(1_000_000))),
    });
    probes.push({
      endpoint,
      kind: "NUL in keys and values",
      path: fill(endpoint),
      ...json(plant(base, s, { "k\u0000ey": "v\u0000alue", nested: { "\u0000": ["\u0000"] } })),
    });
    probes.push({
      endpoint,
      kind: "text/plain content type",
      path: fill(endpoint),
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(base),
    });
    probes.push({
      endpoint,
      kind: "no content type",
      path: fill(endpoint),
      body: new TextEncoder().encode(JSON.stringify(base)),
    });
  } else if (endpoint.method !== "get") {
    // Bodies the operation does not declare (JSON-RPC and multipart endpoints read them themselves).
    probes.push({ endpoint, kind: "JSON object body", path: fill(endpoint), ...json({}) });
    probes.push({
      endpoint,
      kind: "malformed JSON",
      path: fill(endpoint),
      headers: { "Content-Type": "application/json" },
      body: '{"jsonrpc": "2.0", ',
    });
    probes.push({
      endpoint,
      kind: "text/plain content type",
      path: fill(endpoint),
      headers: { "Content-Type": "text/plain" },
      body: "hello",
    });
    probes.push({
      endpoint,
      kind: "NUL in keys and values",
      path: fill(endpoint),
      ...json({ "jsonrpc\u0000": "2.0\u0000", method: "\u0000", id: 1 }),
    });
    probes.push({
      endpoint,
      kind: "deep nesting (3,000 levels)",
      path: fill(endpoint),
      headers: { "Content-Type": "application/json" },
      body: `{"jsonrpc":"2.0","id":1,"method":"x","params":${deepValue(3_000)}}`,
    });
    probes.push({
      endpoint,
      kind: "garbled multipart",
      path: fill(endpoint),
      headers: { "Content-Type": "multipart/form-data; boundary=fuzz" },
      body: '--fuzz\r\nContent-Disposition: form-data; name="post.x"\r\n\r\n{not json\r\n--fuzz--\r\n',
    });
  }
  return probes;
}

const validators = new Map<JsonSchema, Validator>();
function validatorFor(schema: JsonSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator({ ...schema, components: fuzz.doc.components } as Schema, "2020-12", true);
    validators.set(schema, validator);
  }
  return validator;
}

const essence = (contentType: string | null) => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

/** Why an answer breaks the document, or null when it is documented. */
async function check(probe: Probe, response: Response): Promise<string | null> {
  const { operation } = probe.endpoint;
  if (response.status >= 500) {
    await response.body?.cancel();
    return "server error";
  }
  const documented = operation.responses[String(response.status)] ?? operation.responses.default;
  if (!documented) {
    await response.body?.cancel();
    return `status ${response.status} not documented (${Object.keys(operation.responses).join(", ")})`;
  }
  const type = essence(response.headers.get("content-type"));
  if (!documented.content) {
    const text = await response.text();
    return text.length === 0 ? null : `a body (${type || "no content type"}) where the document declares none`;
  }
  const media = documented.content[type];
  if (!media) {
    await response.body?.cancel();
    return `content type "${type}" not documented (${Object.keys(documented.content).join(", ")})`;
  }
  const schema = media.schema ?? {};
  // Streams, waits and joins: the schema accepts anything, so the body is not worth waiting for.
  if (type !== "application/json" || Object.keys(schema).length === 0) {
    await response.body?.cancel();
    return null;
  }
  const text = await response.text();
  if (probe.foreignId && response.ok && text.includes(probe.foreignId))
    return "another workspace's resource was served";
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `body is not JSON: ${text.slice(0, 80)}`;
  }
  const result = validatorFor(schema).validate(body);
  if (result.valid) return null;
  const first = result.errors.at(-1) ?? result.errors[0];
  return `body does not match the schema: ${first?.instanceLocation} ${first?.error}`.slice(0, 200);
}

type Outcome = { status: number | "timeout" | "network"; why: string | null };

/** Sends a probe; a connection dropped before any answer (a reused keep-alive socket the server just closed) is retried once. */
async function send(probe: Probe): Promise<Outcome> {
  const first = await sendOnce(probe);
  return first.status === "network" ? sendOnce(probe) : first;
}

async function sendOnce(probe: Probe): Promise<Outcome> {
  const url = `${fuzz.server.url}${probe.path}${probe.query?.size ? `?${probe.query}` : ""}`;
  try {
    const response = await fetch(url, {
      method: probe.endpoint.method.toUpperCase(),
      headers: { "X-Api-Key": fuzz.server.apiKey, Accept: "application/json, text/event-stream", ...probe.headers },
      body: probe.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const why = await check(probe, response);
    return {
      status: response.status,
      why: why && response.status >= 500 ? `${why}: ${await serverError(response)}` : why,
    };
  } catch (error) {
    const name = (error as Error).name;
    if (name === "TimeoutError" || name === "AbortError")
      return { status: "timeout", why: `no complete answer within ${REQUEST_TIMEOUT_MS / 1000} s` };
    const cause = (error as Error).cause;
    return {
      status: "network",
      why: `${name}: ${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ""}`,
    };
  }
}

let setupSeconds = 0;

beforeAll(async () => {
  const started = Date.now();
  await startFuzzServer();
  fixtures = await createFixtures();
  setupSeconds = (Date.now() - started) / 1000;
}, 180_000);

afterAll(async () => {
  await fuzz.server?.stop();
});

describe("fuzzing every operation of /openapi.json", () => {
  it("answers generated valid and hostile requests with documented statuses and bodies, never a 5xx", async () => {
    const started = Date.now();
    const endpoints: Endpoint[] = Object.entries(fuzz.doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({ method, path, operation })),
    );
    // Deletions last, so they do not remove the fixtures the other operations read.
    const order = (e: Endpoint) => (e.method === "delete" ? 1 : 0);
    endpoints.sort((a, b) => order(a) - order(b));
    const probes = endpoints.flatMap((endpoint, index) => probesFor(endpoint, index));

    const byStatus = new Map<string, number>();
    const findings: Finding[] = [];
    await inParallel(probes, CONCURRENCY, async (probe) => {
      const { status, why } = await send(probe);
      byStatus.set(String(status), (byStatus.get(String(status)) ?? 0) + 1);
      if (why)
        findings.push({
          method: probe.endpoint.method.toUpperCase(),
          path: probe.endpoint.path,
          status,
          kind: probe.kind,
          why,
        });
    });

    const counts = [...byStatus]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => `${status}: ${n}`)
      .join(", ");
    console.log(
      `fuzz: seed ${SEED} (FUZZ_SEED), runs ${RUNS} (FUZZ_RUNS), ${endpoints.length} operations, ${probes.length} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (server start and fixtures ${setupSeconds.toFixed(1)} s); by status: ${counts}`,
    );

    // One line per distinct (method, path, status, why), with the input kinds that caused it.
    const distinct = new Map<string, { finding: Finding; kinds: Set<string> }>();
    for (const finding of findings) {
      const key = `${finding.method} ${finding.path} → ${finding.status}: ${finding.why}`;
      const entry = distinct.get(key) ?? { finding, kinds: new Set<string>() };
      entry.kinds.add(finding.kind);
      distinct.set(key, entry);
    }
    const lines = [...distinct]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([key, { kinds }]) =>
          `${key}  [${[...kinds].slice(0, 4).join("; ")}${kinds.size > 4 ? `; +${kinds.size - 4}` : ""}]`,
      );
    const report = [
      `${findings.length} undocumented answers (${distinct.size} distinct), seed ${SEED}:`,
      ...lines.slice(0, MAX_LISTED_FINDINGS),
      ...(lines.length > MAX_LISTED_FINDINGS ? [`… and ${lines.length - MAX_LISTED_FINDINGS} more`] : []),
    ].join("\n");
    expect(findings.length, report).toBe(0);
  }, 240_000);
});

describeHostileInput();
