// What every fuzz suite shares: the one server they all drive, its OpenAPI document, the fixtures the
// generated requests reach, requests with a deadline, and failure reports grouped by cause.
import { expect } from "vitest";
import { until } from "../../fixtures/until.ts";
import { startTestServer, type TestServer } from "../helpers.ts";
import type { Components, JsonSchema, KnownValues } from "./schema-arbitrary.ts";

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: JsonSchema;
}
export interface MediaType {
  schema?: JsonSchema;
}
export interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
  security?: unknown[];
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Components };
}
export interface Endpoint {
  method: string;
  path: string;
  operation: Operation;
}

/** The server and document of the fuzz file; set by `startFuzzServer` in its `beforeAll`. */
export const fuzz = {} as { server: TestServer; doc: OpenApiDocument };

export async function startFuzzServer(): Promise<void> {
  fuzz.server = await startTestServer();
  fuzz.doc = (await (await fetch(`${fuzz.server.url}/openapi.json`)).json()) as OpenApiDocument;
}

export const endpointsOf = (doc: OpenApiDocument): Endpoint[] =>
  Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ method, path, operation })),
  );
export const jsonSchemaOf = (endpoint: Endpoint): JsonSchema | undefined =>
  endpoint.operation.requestBody?.content["application/json"]?.schema;
export const params = (endpoint: Endpoint, where: Parameter["in"]) =>
  (endpoint.operation.parameters ?? []).filter((p) => p.in === where);

/** A request the suite needs to succeed (fixtures, follow-ups): anything but a 2xx throws. */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${fuzz.server.url}${path}`, {
    method,
    headers: {
      "X-Api-Key": fuzz.server.apiKey,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`fixture ${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T, headers: response.headers };
}

export interface Fixtures {
  ids: Record<string, string>;
  otherTenant: Record<string, string>;
}

/** Data for the generated requests to find: an assistant, a thread with a run, a cron, an item, a project, a traced run, a key; and a thread and an assistant of another workspace. */
export async function createFixtures(label = "fuzz"): Promise<Fixtures> {
  const ids: Record<string, string> = { session_name: label };
  ids.assistant_id = (
    await api<{ assistant_id: string }>("POST", "/assistants", { graph_id: "echo", name: "fuzz" })
  ).body.assistant_id;
  ids.thread_id = (await api<{ thread_id: string }>("POST", "/threads", { metadata: { fuzz: true } })).body.thread_id;
  const waited = await api("POST", `/threads/${ids.thread_id}/runs/wait`, {
    assistant_id: "echo",
    input: { messages: [{ role: "user", content: "hi" }] },
  });
  ids.run_id = waited.headers.get("content-location")!.split("/").pop()!;
  const state = await api<{ checkpoint: { checkpoint_id: string } }>("GET", `/threads/${ids.thread_id}/state`);
  ids.checkpoint_id = state.body.checkpoint.checkpoint_id;
  ids.cron_id = (
    await api<{ cron_id: string }>("POST", "/runs/crons", { assistant_id: "echo", schedule: "0 0 1 1 *" })
  ).body.cron_id;
  await api("PUT", "/store/items", { namespace: ["fuzz"], key: "item", value: { a: 1 } });
  ids.session_id = (await api<{ id: string }>("POST", "/api/v1/sessions", { name: label })).body.id;
  ids.tracing_run_id = crypto.randomUUID();
  await api("POST", "/api/v1/runs", {
    id: ids.tracing_run_id,
    name: "fuzz",
    run_type: "chain",
    session_name: label,
    start_time: new Date().toISOString(),
    inputs: {},
  });
  ids.api_key_id = (await api<{ id: string }>("POST", "/api/v1/api-key", { description: "fuzz" })).body.id;

  const otherTenant: Record<string, string> = {};
  const workspace = (await api<{ id: string }>("POST", "/api/v1/workspaces", { display_name: "fuzz other tenant" }))
    .body.id;
  const other = { "X-Tenant-Id": workspace };
  otherTenant.thread_id = (await api<{ thread_id: string }>("POST", "/threads", {}, other)).body.thread_id;
  otherTenant.assistant_id = (
    await api<{ assistant_id: string }>("POST", "/assistants", { graph_id: "echo" }, other)
  ).body.assistant_id;
  otherTenant.session_id = (
    await api<{ id: string }>("POST", "/api/v1/sessions", { name: `${label} other` }, other)
  ).body.id;
  return { ids, otherTenant };
}

/** Body fields that mostly take fixture values, so valid requests reach real threads and runs. */
export function knownValues({ ids }: Fixtures): KnownValues {
  return {
    assistant_id: [ids.assistant_id!, "echo"],
    graph_id: ["echo"],
    thread_id: [ids.thread_id!],
    session_id: [ids.session_id!],
    session_name: [ids.session_name!],
    // A run must not wait for minutes or call out to the network.
    after_seconds: [0],
    webhook: ["http://127.0.0.1:9/fuzz-webhook"],
  };
}

/** The fixture id for a path parameter: the tracing API's run_id is a traced run, not an agent run. */
export function pathValue({ ids }: Fixtures, path: string, name: string): string {
  if (name === "run_id" && path.startsWith("/api/v1/runs")) return ids.tracing_run_id!;
  if (name === "namespace") return "fuzz";
  if (name === "name") return "attachment";
  return ids[name] ?? crypto.randomUUID();
}

/** The endpoint's path with fixture ids (or `override`s, sent as given) in its parameters. */
export const fill = (fixtures: Fixtures, endpoint: Endpoint, override: Record<string, string> = {}) =>
  endpoint.path.replace(
    /\{([^}]+)\}/g,
    (_m, name: string) => override[name] ?? encodeURIComponent(pathValue(fixtures, endpoint.path, name)),
  );

/** The unhandled error the Worker logged for this request, found by its X-Request-Id. */
export async function serverError(response: Response): Promise<string> {
  const requestId = response.headers.get("x-request-id");
  // The log line reaches the output just after the answer: wait for it (2 s at most).
  const logLine = async () =>
    fuzz.server
      .output()
      .split("\n")
      .find((l) => requestId && l.includes(requestId) && l.includes("unhandled error"));
  const line = requestId
    ? await until(logLine, (found) => found !== undefined, 2_000).catch(() => undefined)
    : undefined;
  const logged = line?.match(/"error":"((?:[^"\\]|\\.)*)"/)?.[1];
  if (!logged) return "(no log line)";
  // Driver errors put the SQL first and the cause last: keep both ends.
  return logged.length <= 200 ? logged : `${logged.slice(0, 100)} … ${logged.slice(-100)}`;
}

export async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** One answer, read whole (or cut off at its deadline, which is then the status). */
export interface Exchange {
  status: number | "timeout" | "network";
  text: string;
  json?: unknown;
  headers?: Headers;
  /** For a 5xx: the error the Worker logged. */
  logged?: string;
}

export interface CallOptions {
  query?: URLSearchParams | string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown;
  timeoutMs?: number;
  /** Stop after the headers (a live stream that is not expected to end). */
  headersOnly?: boolean;
}

/** Sends a request with the API key and reads the whole answer within the deadline (20 s by default). */
export async function call(method: string, path: string, options: CallOptions = {}): Promise<Exchange> {
  const query = options.query === undefined ? "" : String(options.query);
  const raw = typeof options.body === "string" || options.body instanceof Uint8Array;
  const timeoutMs = options.timeoutMs ?? 20_000;
  try {
    const response = await fetch(`${fuzz.server.url}${path}${query ? `?${query}` : ""}`, {
      method,
      headers: {
        "X-Api-Key": fuzz.server.apiKey,
        ...(options.body === undefined || raw ? {} : { "Content-Type": "application/json" }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : raw ? (options.body as string) : JSON.stringify(options.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    // A stream that opened is left unread; a refusal is read, so its detail can be checked.
    if (options.headersOnly && response.ok) {
      await response.body?.cancel();
      return { status: response.status, text: "", headers: response.headers };
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const exchange: Exchange = { status: response.status, text, json, headers: response.headers };
    if (response.status >= 500) exchange.logged = await serverError(response);
    return exchange;
  } catch (error) {
    const name = (error as Error).name;
    if (name === "TimeoutError" || name === "AbortError") return { status: "timeout", text: "" };
    const cause = (error as Error).cause;
    return {
      status: "network",
      text: `${name}: ${(error as Error).message}${cause instanceof Error ? ` (${cause.message})` : ""}`,
    };
  }
}

/** A 2xx answer. */
export const succeeded = (exchange: Exchange) => typeof exchange.status === "number" && exchange.status < 300;

/** The `detail` of an error answer, as text; undefined when there is none. */
export function detailOf(exchange: Exchange): string | undefined {
  const detail = (exchange.json as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === "string" && detail.length > 0) return detail;
  if (Array.isArray(detail) && detail.length > 0) return JSON.stringify(detail);
  return undefined;
}

/** A short account of an answer for a failure line: the status and its detail, or the logged error of a 5xx. */
export function describeAnswer(exchange: Exchange): string {
  if (exchange.status === "timeout") return "no complete answer before the deadline";
  if (exchange.status === "network") return `network error ${exchange.text}`;
  const detail = detailOf(exchange) ?? exchange.text.replace(/\s+/g, " ");
  const shown = detail.length > 160 ? `${detail.slice(0, 160)}…` : detail;
  return `${exchange.status}${exchange.logged ? ` (logged: ${exchange.logged})` : ""}${shown ? ` ${shown}` : ""}`;
}

/**
 * The common rule for any answer to hostile input: never a 5xx or a hang, and every 4xx has a
 * `detail`. Returns why the answer breaks it, or null.
 */
export function hostileAnswerProblem(exchange: Exchange, operation?: Operation): string | null {
  if (exchange.status === "timeout") return "hung (no complete answer before the deadline)";
  if (exchange.status === "network") return "connection failed";
  if (exchange.status >= 500) return "server error";
  if (exchange.status < 400) return null;
  const type = exchange.headers?.get("content-type")?.split(";")[0]?.trim() ?? "";
  if (type === "application/json") return detailOf(exchange) ? null : "4xx without a detail";
  // A few answers are plain text by design (the official server's), and documented so.
  const documented = operation?.responses[String(exchange.status)]?.content ?? {};
  return type in documented ? null : "4xx that is not a JSON detail";
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}…` : text);

/** A request's summary for a report line: method, path (ids shortened), what was sent, and the body's start. */
export function describeRequest(method: string, path: string, what: string, body?: unknown): string {
  const shown =
    body === undefined
      ? ""
      : ` body ${clip(typeof body === "string" ? body : body instanceof Uint8Array ? `${body.length} bytes` : JSON.stringify(body), 200)}`;
  return `${method.toUpperCase()} ${clip(path.replace(UUID, "{id}"), 120)} [${what}]${shown.replace(UUID, "{id}")}`;
}

/** Failures of one suite, grouped by cause, each line naming the request and the answer. */
export class Findings {
  private readonly groups = new Map<string, Map<string, number>>();
  private readonly title: string;
  constructor(title: string) {
    this.title = title;
  }

  add(cause: string, request: string, answer: string): void {
    const group = this.groups.get(cause) ?? new Map<string, number>();
    const line = `${request} → ${answer}`;
    group.set(line, (group.get(line) ?? 0) + 1);
    this.groups.set(cause, group);
  }

  /** Records `exchange` under the cause `hostileAnswerProblem` finds, if any; true when it was fine. */
  check(request: string, exchange: Exchange, operation?: Operation): boolean {
    const problem = hostileAnswerProblem(exchange, operation);
    if (problem) this.add(problem, request, describeAnswer(exchange));
    return problem === null;
  }

  get count(): number {
    return [...this.groups.values()].reduce((n, group) => n + group.size, 0);
  }

  report(perGroup = 25): string {
    const lines = [`${this.title}: ${this.count} failures`];
    for (const [cause, group] of [...this.groups].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`— ${cause} (${group.size}):`);
      const entries = [...group].sort(([a], [b]) => a.localeCompare(b));
      for (const [line, times] of entries.slice(0, perGroup)) lines.push(`  ${line}${times > 1 ? ` (×${times})` : ""}`);
      if (entries.length > perGroup) lines.push(`  … and ${entries.length - perGroup} more`);
    }
    return lines.join("\n");
  }

  /** Fails the test with the grouped report when anything was found. */
  expectNone(): void {
    if (this.count > 0) console.log(this.report());
    expect(this.count, this.report()).toBe(0);
  }
}

const TERMINAL = ["success", "error", "interrupted", "timeout", "deleted"];

/** A run's status now: its own, "deleted" once it is gone, or the answer when it cannot be read. */
async function runStatus(threadId: string, runId: string): Promise<string> {
  const answer = await call("GET", `/threads/${threadId}/runs/${runId}`);
  if (answer.status === 200) return (answer.json as { status: string }).status;
  return answer.status === 404 ? "deleted" : describeAnswer(answer);
}

/** The final status of each run, polled in rounds until all are terminal or one deadline passes for all. */
export async function runOutcomes<T extends { threadId: string; runId: string }>(
  runs: T[],
  deadlineMs = 60_000,
): Promise<(T & { outcome: string })[]> {
  const outcomes = new Map<T, string>();
  const allEnded = async () => {
    const pending = runs.filter((run) => !TERMINAL.includes(outcomes.get(run) ?? ""));
    await inParallel(pending, 4, async (run) => {
      outcomes.set(run, await runStatus(run.threadId, run.runId));
    });
    return runs.every((run) => TERMINAL.includes(outcomes.get(run) ?? ""));
  };
  // Runs still going at the deadline are reported as hung below.
  await until(allEnded, Boolean, deadlineMs, 250).catch(() => undefined);
  return runs.map((run) => {
    const status = outcomes.get(run)!;
    return { ...run, outcome: TERMINAL.includes(status) ? status : `hung (${status} after ${deadlineMs / 1000} s)` };
  });
}
