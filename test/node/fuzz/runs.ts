// Values that travel into graphs and checkpoints: LangChain-serialized (`lc`) objects in every
// free-form field of every operation, followed by the reads and runs that deserialize them; and
// RunnableConfig values (recursion_limit, max_concurrency) that must never leave a run hanging.
import { expect, it } from "vitest";
import { baseBody, bodyEndpoints, fieldsOf, ITEMS, setAt } from "./bodies.ts";
import {
  api,
  call,
  describeAnswer,
  describeRequest,
  type Endpoint,
  type Exchange,
  Findings,
  type Fixtures,
  fill,
  inParallel,
  jsonSchemaOf,
  runOutcomes,
  succeeded,
} from "./harness.ts";

const CONCURRENCY = 4;
/** Every run must reach a terminal status within this (the echo and steps graphs take milliseconds). */
const RUN_DEADLINE_MS = 60_000;
/** A wait or a stream of such a run answers whole within this, or it is hung. */
const REQUEST_DEADLINE_MS = 30_000;

const LC_OBJECTS: Record<string, unknown> = {
  "lc constructor": { lc: 1, type: "constructor", id: ["langchain", "llms", "openai", "OpenAI"], kwargs: {} },
  "lc secret": { lc: 1, type: "secret", id: ["OPENAI_API_KEY"] },
};

/** The thread and run a 2xx answer created or named, from its body or Content-Location. */
export function createdRun(exchange: Exchange): { threadId?: string; runId?: string } {
  const location = exchange.headers?.get("content-location") ?? "";
  const fromLocation = location.match(/\/threads\/([^/]+)\/runs\/([^/?]+)/);
  if (fromLocation) return { threadId: fromLocation[1], runId: fromLocation[2] };
  // A stateless run's temporary thread has the run's id.
  const stateless = location.match(/^\/runs\/([^/?]+)$/);
  if (stateless) return { threadId: stateless[1], runId: stateless[1] };
  const body = exchange.json as { run_id?: string; thread_id?: string } | undefined;
  return body?.run_id && body.thread_id ? { threadId: body.thread_id, runId: body.run_id } : {};
}

/** A thread with one finished run, for probes that must not disturb the shared fixtures. */
async function newThread(): Promise<string> {
  const threadId = (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id;
  await api("POST", `/threads/${threadId}/runs/wait`, {
    assistant_id: "echo",
    input: { messages: [{ role: "user", content: "before" }] },
  });
  return threadId;
}

/** The reads and a new run on a thread: none may fail, and the run must succeed (the thread is not bricked). */
async function followUps(findings: Findings, threadId: string, cause: string): Promise<void> {
  // A thread a probe deleted (or gave a short TTL) is gone, which is no failure.
  if ((await call("GET", `/threads/${threadId}`)).status === 404) return;
  for (const [method, path, body] of [
    ["GET", `/threads/${threadId}`, undefined],
    ["GET", `/threads/${threadId}/state`, undefined],
    ["GET", `/threads/${threadId}/history`, undefined],
    ["POST", `/threads/${threadId}/history`, { limit: 5 }],
    ["GET", `/threads/${threadId}/runs`, undefined],
    ["POST", `/threads/${threadId}/copy`, {}],
  ] as const) {
    const exchange = await call(method, path, { body });
    const request = describeRequest(method, path, `after ${cause}`);
    if (findings.check(request, exchange) && exchange.status !== 200 && exchange.status !== 404)
      findings.add(`a read fails after ${cause}`, request, describeAnswer(exchange));
  }
  const path = `/threads/${threadId}/runs/wait`;
  const exchange = await call("POST", path, {
    body: { assistant_id: "echo", input: { messages: [{ role: "user", content: "after" }] } },
    timeoutMs: RUN_DEADLINE_MS,
  });
  const request = describeRequest("POST", path, `a new run after ${cause}`);
  if (!findings.check(request, exchange)) return;
  if (exchange.status === 404) return;
  if (exchange.status !== 200 || exchange.text.includes("__error__"))
    findings.add(`the thread cannot run after ${cause}`, request, describeAnswer(exchange));
}

export function describeRunValues(fixtures: () => Fixtures): void {
  it("takes lc-shaped objects in every free-form field, and the state, history and later runs still work", async () => {
    const findings = new Findings("lc objects");
    const thread = await newThread();
    const threads = new Set<string>([thread]);
    const assistants = new Set<string>();
    const runs: { threadId: string; runId: string; request: string }[] = [];
    const probes = bodyEndpoints().flatMap((endpoint, index) => {
      const base = baseBody(endpoint, fixtures(), index);
      return fieldsOf(jsonSchemaOf(endpoint)!)
        .filter((field) => field.freeForm)
        .flatMap((field) =>
          Object.entries(LC_OBJECTS).map(([kind, value]) => ({
            endpoint,
            what: `${field.path.filter((s) => s !== ITEMS).join(".")}: ${kind}`,
            body: setAt(base, field.path, value),
          })),
        );
    });
    expect(probes.length).toBeGreaterThan(100);
    // Other thread operations share one thread; a run gets a thread of its own (runs on one thread
    // wait for each other), and deletions and prunes keep to the fixtures.
    await inParallel(probes, CONCURRENCY, async ({ endpoint, what, body }) => {
      const method = endpoint.method.toUpperCase();
      const destructive = method === "DELETE" || endpoint.path.endsWith("/prune");
      let threadId = thread;
      if (method === "POST" && endpoint.path.startsWith("/threads/{thread_id}/runs")) {
        threadId = await newThread();
        threads.add(threadId);
      }
      const path = fill(fixtures(), endpoint, destructive ? {} : { thread_id: threadId });
      const exchange = await call(method, path, { body, timeoutMs: RUN_DEADLINE_MS });
      const request = describeRequest(method, endpoint.path, what, body);
      if (!findings.check(request, exchange, endpoint.operation) || !succeeded(exchange)) return;
      const created = exchange.json as { thread_id?: unknown; assistant_id?: unknown } | undefined;
      if (typeof created?.thread_id === "string" && /^\/threads(\/\{thread_id\}\/copy)?$/.test(endpoint.path))
        threads.add(created.thread_id);
      if (typeof created?.assistant_id === "string" && endpoint.path.startsWith("/assistants"))
        assistants.add(created.assistant_id);
      const started = createdRun(exchange);
      if (started.threadId && started.runId) runs.push({ threadId: started.threadId, runId: started.runId, request });
    });
    for (const { request, outcome } of await runOutcomes(runs, RUN_DEADLINE_MS))
      if (outcome.startsWith("hung")) findings.add("a run never ends", request, outcome);
    await inParallel([...threads], CONCURRENCY, (threadId) => followUps(findings, threadId, "lc objects"));
    for (const assistantId of assistants) {
      const read = await call("GET", `/assistants/${assistantId}`);
      if (findings.check(describeRequest("GET", "/assistants/{id}", "after lc objects"), read) && read.status !== 200)
        findings.add("a read fails after lc objects", "GET /assistants/{id}", describeAnswer(read));
      const run = await call("POST", "/runs/wait", {
        body: { assistant_id: assistantId, input: { messages: [{ role: "user", content: "hi" }] } },
        timeoutMs: RUN_DEADLINE_MS,
      });
      const request = describeRequest("POST", "/runs/wait", "a run of an assistant created with lc objects");
      if (findings.check(request, run) && (run.status !== 200 || run.text.includes("__error__")))
        findings.add("the assistant cannot run after lc objects", request, describeAnswer(run));
    }
    for (const query of ["namespace=fuzz&key=item"]) {
      const read = await call("GET", "/store/items", { query });
      findings.check(describeRequest("GET", "/store/items", "after lc objects"), read);
    }
    const search = await call("POST", "/store/items/search", { body: { namespace_prefix: ["fuzz"] } });
    findings.check(describeRequest("POST", "/store/items/search", "after lc objects"), search);
    findings.expectNone();
  }, 300_000);

  it("ends every run whatever its recursion_limit and max_concurrency, or refuses the config", async () => {
    const findings = new Findings("RunnableConfig values");
    const values: unknown[] = [0, -1, 1.5, 2 ** 53 + 2, 1e21, "10", "abc", null, {}];
    // The operations whose body has a RunnableConfig: each gets the value in a body that runs `steps`.
    const targets: { endpoint: Endpoint; index: number; name: string }[] = [];
    bodyEndpoints().forEach((endpoint, index) => {
      // max_concurrency is not declared beside recursion_limit, but it is a RunnableConfig key that reaches the graph.
      if (fieldsOf(jsonSchemaOf(endpoint)!).some((f) => f.path.join(".") === "config.recursion_limit"))
        for (const name of ["recursion_limit", "max_concurrency"]) targets.push({ endpoint, index, name });
    });
    expect(targets.length).toBeGreaterThan(16);
    const probes = targets.flatMap((target) => values.map((value) => ({ ...target, value })));
    const runs: { threadId: string; runId: string; request: string }[] = [];
    await inParallel(probes, 2 * CONCURRENCY, async ({ endpoint, index, name, value }) => {
      const method = endpoint.method.toUpperCase();
      const base = baseBody(endpoint, fixtures(), index) as Record<string, unknown>;
      // What the operation requires, and a run of the four-step graph with this config.
      const required = Object.fromEntries(Object.entries(base).filter(([key]) => ["schedule"].includes(key)));
      const body = {
        ...required,
        ...(endpoint.path.startsWith("/assistants")
          ? { graph_id: "steps" }
          : { assistant_id: "steps", input: { items: [] } }),
        ...(endpoint.path.startsWith("/runs") && !endpoint.path.includes("crons") ? { on_completion: "keep" } : {}),
        config: { [name]: value },
      };
      const thread = endpoint.path.includes("{thread_id}")
        ? (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id
        : undefined;
      const path = fill(fixtures(), endpoint, thread ? { thread_id: thread } : {});
      // A wait or a stream that answered 200 must end with its run.
      const exchange = await call(method, path, { body, timeoutMs: REQUEST_DEADLINE_MS });
      const request = describeRequest(method, endpoint.path, `config.${name}: ${JSON.stringify(value)}`);
      if (!findings.check(request, exchange, endpoint.operation) || !succeeded(exchange)) return;
      const { threadId, runId } = createdRun(exchange);
      if (threadId && runId) runs.push({ threadId, runId, request });
      // An assistant with this config: its run must end too.
      const assistantId = (exchange.json as { assistant_id?: string } | undefined)?.assistant_id;
      if (endpoint.path.startsWith("/assistants") && assistantId) {
        const own = (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id;
        const run = await call("POST", `/threads/${own}/runs`, {
          body: { assistant_id: assistantId, input: { items: [] } },
        });
        const runRequest = describeRequest(
          "POST",
          "/threads/{id}/runs",
          `an assistant with config.${name}: ${JSON.stringify(value)}`,
        );
        if (findings.check(runRequest, run) && succeeded(run)) {
          const started = createdRun(run);
          if (started.runId) runs.push({ threadId: own, runId: started.runId, request: runRequest });
        }
      }
    });
    for (const { request, outcome } of await runOutcomes(runs, RUN_DEADLINE_MS))
      if (outcome.startsWith("hung")) findings.add("a run never ends", request, outcome);
    findings.expectNone();
  }, 300_000);
}
