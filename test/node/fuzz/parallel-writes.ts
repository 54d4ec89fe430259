// Parallel writes to each kind of resource: every update the server acknowledged must survive, and
// concurrent runs on one thread end under every multitask strategy.
import { it } from "vitest";
import { gate } from "../../fixtures/gate.ts";
import { api, call, describeAnswer, describeRequest, Findings, runOutcomes } from "./harness.ts";

const WRITERS = 20;
const RUN_DEADLINE_MS = 60_000;

interface Resource {
  kind: string;
  create: () => Promise<string>;
  path: (id: string) => string;
}

const RESOURCES: Resource[] = [
  {
    kind: "assistant",
    create: async () =>
      (await api<{ assistant_id: string }>("POST", "/assistants", { graph_id: "echo", metadata: { base: 0 } })).body
        .assistant_id,
    path: (id) => `/assistants/${id}`,
  },
  {
    kind: "thread",
    create: async () =>
      (await api<{ thread_id: string }>("POST", "/threads", { metadata: { base: 0 } })).body.thread_id,
    path: (id) => `/threads/${id}`,
  },
  {
    kind: "cron",
    create: async () =>
      (
        await api<{ cron_id: string }>("POST", "/runs/crons", {
          assistant_id: "echo",
          schedule: "0 0 1 1 *",
          metadata: { base: 0 },
        })
      ).body.cron_id,
    path: (id) => `/runs/crons/${id}`,
  },
];

export function describeParallelWrites(): void {
  it(`keeps every acknowledged metadata update of ${WRITERS} concurrent PATCHes of an assistant, a thread and a cron`, async () => {
    const findings = new Findings("parallel metadata updates");
    for (const resource of RESOURCES) {
      const id = await resource.create();
      const path = resource.path(id);
      const answers = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => call("PATCH", path, { body: { metadata: { [`writer${i}`]: i } } })),
      );
      const acknowledged: number[] = [];
      answers.forEach((exchange, i) => {
        const request = describeRequest("PATCH", path, `${resource.kind}, writer ${i} of ${WRITERS}`);
        if (findings.check(request, exchange) && typeof exchange.status === "number" && exchange.status < 300)
          acknowledged.push(i);
        else if (exchange.status !== 409)
          findings.add(`a concurrent ${resource.kind} update refused`, request, describeAnswer(exchange));
      });
      const read = await call("GET", path);
      const metadata = (read.json as { metadata?: Record<string, unknown> } | undefined)?.metadata ?? {};
      const lost = acknowledged.filter((i) => metadata[`writer${i}`] !== i);
      if (lost.length > 0 || metadata.base !== 0)
        findings.add(
          `acknowledged ${resource.kind} updates lost`,
          describeRequest("GET", path, `${resource.kind} after ${WRITERS} concurrent PATCHes`),
          `${lost.length} of ${acknowledged.length} acknowledged keys missing (writers ${lost.join(", ")})${metadata.base === 0 ? "" : "; the original key is gone"}`,
        );
      if (resource.kind === "assistant") {
        // Each acknowledged update is a version of its own.
        const versions = await call("POST", `${path}/versions`, { body: { limit: 100 } });
        const numbers = ((versions.json as { version: number }[] | undefined) ?? []).map((v) => v.version);
        if (new Set(numbers).size !== acknowledged.length + 1)
          findings.add(
            "acknowledged assistant versions lost",
            describeRequest("POST", `${path}/versions`, "after concurrent PATCHes"),
            `${new Set(numbers).size} distinct versions for ${acknowledged.length} acknowledged updates and the original`,
          );
      }
    }
    findings.expectNone();
  }, 120_000);

  it(`keeps every acknowledged store put of ${WRITERS} concurrent writers`, async () => {
    const findings = new Findings("parallel store puts");
    const namespace = ["fuzz", "parallel", crypto.randomUUID()];
    const distinct = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        call("PUT", "/store/items", { body: { namespace, key: `key${i}`, value: { writer: i } } }),
      ),
    );
    const same = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        call("PUT", "/store/items", { body: { namespace, key: "shared", value: { writer: i } } }),
      ),
    );
    const acknowledgedShared: number[] = [];
    for (const [i, exchange] of distinct.entries()) {
      const request = describeRequest("PUT", "/store/items", `key${i}, one of ${WRITERS} concurrent keys`);
      if (!findings.check(request, exchange)) continue;
      if (exchange.status !== 204 && exchange.status !== 200) {
        findings.add("a concurrent store put refused", request, describeAnswer(exchange));
        continue;
      }
      const read = await call("GET", "/store/items", {
        query: new URLSearchParams([
          ["namespace", namespace.join(".")],
          ["key", `key${i}`],
        ]),
      });
      if ((read.json as { value?: { writer?: number } } | null)?.value?.writer !== i)
        findings.add("an acknowledged store put lost", request, `read back: ${describeAnswer(read)}`);
    }
    for (const [i, exchange] of same.entries()) {
      const request = describeRequest("PUT", "/store/items", `writer ${i} of ${WRITERS} on one key`);
      if (findings.check(request, exchange) && typeof exchange.status === "number" && exchange.status < 300)
        acknowledgedShared.push(i);
    }
    const shared = await call("GET", "/store/items", {
      query: new URLSearchParams([
        ["namespace", namespace.join(".")],
        ["key", "shared"],
      ]),
    });
    const writer = (shared.json as { value?: { writer?: number } } | null)?.value?.writer;
    if (writer === undefined || !acknowledgedShared.includes(writer))
      findings.add(
        "a key written concurrently holds no acknowledged value",
        describeRequest("GET", "/store/items", "the shared key"),
        describeAnswer(shared),
      );
    const search = await call("POST", "/store/items/search", { body: { namespace_prefix: namespace, limit: 100 } });
    const found = ((search.json as { items?: unknown[] } | undefined)?.items ?? []).length;
    if (found !== WRITERS + 1)
      findings.add(
        "acknowledged store puts missing from search",
        describeRequest("POST", "/store/items/search", "the namespace"),
        `${found} items, expected ${WRITERS + 1}`,
      );
    findings.expectNone();
  }, 60_000);

  it("ends every acknowledged run of concurrent runs on one thread, under each multitask strategy", async () => {
    const findings = new Findings("concurrent runs on one thread");
    const RUNS = 6;
    await Promise.all(
      (["reject", "enqueue", "interrupt", "rollback"] as const).map(async (strategy) => {
        const threadId = (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id;
        const path = `/threads/${threadId}/runs`;
        // Every run waits at one gate, opened once all are answered: they meet on a busy thread.
        const held = gate();
        const answers = await Promise.all(
          Array.from({ length: RUNS }, () =>
            call("POST", path, {
              body: { assistant_id: "steps", input: { items: [] }, config: held.config, multitask_strategy: strategy },
            }),
          ),
        );
        await call("PUT", "/store/items", { body: held.opening });
        const acknowledged: string[] = [];
        for (const [i, exchange] of answers.entries()) {
          const request = describeRequest("POST", path, `${strategy}, run ${i} of ${RUNS}`);
          if (!findings.check(request, exchange)) continue;
          const runId = (exchange.json as { run_id?: string } | undefined)?.run_id;
          if (exchange.status === 200 && runId) acknowledged.push(runId);
          else if (!(strategy === "reject" && exchange.status === 409))
            findings.add(`a concurrent run refused under ${strategy}`, request, describeAnswer(exchange));
        }
        const outcomes = (
          await runOutcomes(
            acknowledged.map((runId) => ({ threadId, runId })),
            RUN_DEADLINE_MS,
          )
        ).map(({ outcome }) => outcome);
        const allowed: Record<string, string[]> = {
          reject: ["success"],
          enqueue: ["success"],
          interrupt: ["success", "interrupted"],
          rollback: ["success", "deleted"],
        };
        outcomes.forEach((outcome, i) => {
          if (!allowed[strategy]!.includes(outcome))
            findings.add(
              outcome.startsWith("hung") ? "a run never ends" : `a run ends ${outcome} under ${strategy}`,
              describeRequest("POST", path, `${strategy}, acknowledged run ${i}`),
              outcome,
            );
        });
        if (!outcomes.includes("success"))
          findings.add(
            `no run succeeds under ${strategy}`,
            describeRequest("POST", path, strategy),
            outcomes.join(", "),
          );
        // What each acknowledged run that succeeded wrote is in the state: four items per run.
        const state = await call("GET", `/threads/${threadId}/state`);
        const items = ((state.json as { values?: { items?: unknown[] } } | undefined)?.values?.items ?? []).length;
        const succeeded = outcomes.filter((o) => o === "success").length;
        const interrupted = outcomes.filter((o) => o === "interrupted").length;
        if (items < 4 * succeeded || items > 4 * (succeeded + interrupted))
          findings.add(
            `acknowledged runs' writes lost under ${strategy}`,
            describeRequest("GET", `/threads/${threadId}/state`, strategy),
            `${items} items for ${succeeded} successful runs (4 each) and ${interrupted} interrupted`,
          );
        const thread = await call("GET", `/threads/${threadId}`);
        const status = (thread.json as { status?: string } | undefined)?.status;
        if (status !== "idle")
          findings.add(
            `the thread stays ${status} after its runs under ${strategy}`,
            describeRequest("GET", `/threads/${threadId}`, strategy),
            describeAnswer(thread),
          );
      }),
    );
    findings.expectNone();
  }, 120_000);
}
