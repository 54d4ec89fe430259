// Odd `Last-Event-ID` values on the stream-join routes: each is refused (4xx) or replays exactly
// what a client that saw the events up to that id missed; never a replay from somewhere else.
import { it } from "vitest";
import { api, call, describeAnswer, describeRequest, Findings } from "./harness.ts";
import { createdRun } from "./runs.ts";

/** The SSE ids of a stream's events, in order. */
const eventIds = (text: string) =>
  text
    .split(/\r?\n/)
    .filter((line) => line.startsWith("id:"))
    .map((line) => Number(line.slice(3).trim()));

/**
 * What each value may replay, given the run's event ids and the replay of a join without the
 * header: a decimal id replays the events after it; anything else is either refused or ignored.
 */
const VALUES = [
  "3",
  "1e3",
  "abc",
  "-1",
  " 5",
  "0x10",
  "1.5",
  "+2",
  "03",
  "",
  "99999999999999999999999",
  "9007199254740993",
  "\u00b3",
];

function allowedReplays(value: string, ids: number[], withoutHeader: number[]): number[][] {
  // HTTP strips the whitespace around a header value, so " 5" is "5".
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) {
    const after = Number(trimmed);
    return Number.isSafeInteger(after) ? [ids.filter((id) => id > after)] : [[], withoutHeader];
  }
  // Before the first event: everything.
  if (/^-[0-9]+$/.test(trimmed)) return [ids, withoutHeader];
  return [withoutHeader];
}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export function describeLastEventId(): void {
  it("answers odd Last-Event-ID values on the join routes with a 4xx or an exact replay", async () => {
    const findings = new Findings("Last-Event-ID");
    // A resumable run on a thread, and a stateless one kept after it ends.
    const threadId = (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id;
    const body = {
      assistant_id: "steps",
      input: { items: [] },
      stream_mode: ["values", "updates", "debug"],
      stream_resumable: true,
    };
    const threadRun = await call("POST", `/threads/${threadId}/runs/stream`, { body, timeoutMs: 30_000 });
    const stateless = await call("POST", "/runs/stream", {
      body: { ...body, on_completion: "keep" },
      timeoutMs: 30_000,
    });
    const routes = [threadRun, stateless].map((started) => {
      const { threadId, runId } = createdRun(started);
      return { started, thread: threadId!, run: runId! };
    });
    for (const { started, thread, run } of routes) {
      if (started.status !== 200 || !run) throw new Error(`run for the joins: ${describeAnswer(started)}`);
      const ids = eventIds(started.text);
      // A stateless run (its thread has its id) is joined through both routes; a thread's run through the thread's.
      const joins: [string, string][] = [
        ["/threads/{thread_id}/runs/{run_id}/stream", `/threads/${thread}/runs/${run}/stream`],
      ];
      if (thread === run) joins.push(["/runs/{run_id}/stream", `/runs/${run}/stream`]);
      for (const [route, path] of joins) {
        const plain = await call("GET", path, { timeoutMs: 20_000 });
        const withoutHeader = eventIds(plain.text);
        for (const value of VALUES) {
          const exchange = await call("GET", path, { headers: { "Last-Event-ID": value }, timeoutMs: 20_000 });
          const request = describeRequest(
            "GET",
            route,
            `${thread === run ? "stateless run, " : ""}Last-Event-ID ${JSON.stringify(value)}`,
          );
          if (!findings.check(request, exchange)) continue;
          if (exchange.status !== 200) continue;
          const replayed = eventIds(exchange.text);
          const allowed = allowedReplays(value, ids, withoutHeader);
          if (!allowed.some((ids) => same(ids, replayed)))
            findings.add(
              "a wrong replay",
              request,
              `replayed ids [${replayed.join(",")}], expected ${allowed.map((a) => `[${a.join(",")}]`).join(" or ")} (or a 4xx)`,
            );
        }
      }
    }
    // The thread's live stream takes the header too: a refusal or a stream, never a failure.
    for (const value of VALUES) {
      const exchange = await call("GET", `/threads/${threadId}/stream`, {
        headers: { "Last-Event-ID": value },
        headersOnly: true,
      });
      findings.check(
        describeRequest("GET", "/threads/{id}/stream", `Last-Event-ID ${JSON.stringify(value)}`),
        exchange,
      );
    }
    findings.expectNone();
  }, 120_000);
}
