import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

/**
 * Flows 4 and 5 of the console: an agent run's trace as a tree with timings, the projects' stats,
 * and the runs table's filter language (a refused filter shows the parser's position).
 */

let harness: ConsoleHarness;

const PROJECT = `console-e2e-${randomUUID().slice(0, 8)}`;
/** Filler runs so the runs table has a second page (it shows 50 a page). */
const FILLERS = 52;
const ATTACHMENT_TEXT = "notes the retriever kept";

type ApiRun = {
  id: string;
  name: string;
  run_type: string;
  trace_id: string;
  parent_run_id: string | null;
  latency: number | null;
  start_time: string;
  extra?: { metadata?: Record<string, unknown> };
};
type RunStats = {
  run_count: number;
  error_rate: number | null;
  latency_p50: number | null;
  latency_p99: number | null;
  total_tokens: number;
  total_cost: number | null;
};

async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${harness.server.url}${path}`, {
    method,
    headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function ok<T>(method: string, path: string, body?: unknown): Promise<T> {
  const result = await call<T>(method, path, body);
  if (result.status >= 300) throw new Error(`${method} ${path}: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body;
}

/** Every run a /runs/query body matches, all pages. */
async function allRuns(body: Record<string, unknown>): Promise<ApiRun[]> {
  const runs: ApiRun[] = [];
  let cursor: string | null = null;
  do {
    const page: { runs: ApiRun[]; cursors: { next: string | null } } = await ok("POST", "/api/v1/runs/query", {
      ...body,
      limit: 100,
      cursor,
    });
    runs.push(...page.runs);
    cursor = page.cursors.next;
  } while (cursor);
  return runs;
}

/** A dotted_order segment: the start time as YYYYMMDDTHHMMSSffffffZ, then the run id. */
const segment = (start: Date, id: string) =>
  `${start
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.(\d{3})Z$/, ".$1000Z")
    .replace(".", "")}${id}`;

/** Runs with errors, token usage and costs, in a project of their own, through POST /runs/batch. */
async function ingestProject(): Promise<string> {
  const base = Date.now() - 10 * 60_000;
  const post: Record<string, unknown>[] = [];
  const add = (options: {
    name: string;
    run_type: string;
    offsetMs: number;
    durationMs: number;
    parent?: { id: string; trace_id: string; dotted_order: string };
    error?: string;
    usage?: Record<string, number>;
    tags?: string[];
  }) => {
    const id = randomUUID();
    const start = new Date(base + options.offsetMs);
    const dotted = options.parent ? `${options.parent.dotted_order}.${segment(start, id)}` : segment(start, id);
    const run = {
      id,
      name: options.name,
      run_type: options.run_type,
      session_name: PROJECT,
      start_time: start.toISOString(),
      end_time: new Date(base + options.offsetMs + options.durationMs).toISOString(),
      inputs: { question: `${options.name} input` },
      outputs: options.usage
        ? { answer: "ok", usage_metadata: options.usage }
        : options.error
          ? null
          : { answer: `${options.name} output` },
      error: options.error ?? null,
      tags: options.tags ?? [],
      parent_run_id: options.parent?.id ?? null,
      trace_id: options.parent?.trace_id ?? id,
      dotted_order: dotted,
    };
    post.push(run);
    return { id, trace_id: run.trace_id, dotted_order: dotted };
  };
  const first = add({ name: "pipeline", run_type: "chain", offsetMs: 0, durationMs: 1800, tags: ["beta"] });
  add({
    name: "chat",
    run_type: "llm",
    offsetMs: 100,
    durationMs: 1200,
    parent: first,
    usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42, input_cost: 0.0003, output_cost: 0.0006 },
  });
  const lookup = add({
    name: "lookup",
    run_type: "tool",
    offsetMs: 1400,
    durationMs: 300,
    parent: first,
    error: "lookup failed",
  });
  const second = add({ name: "pipeline", run_type: "chain", offsetMs: 5000, durationMs: 2500, error: "boom" });
  add({
    name: "chat",
    run_type: "llm",
    offsetMs: 5100,
    durationMs: 2200,
    parent: second,
    usage: { input_tokens: 50, output_tokens: 20, total_tokens: 70, input_cost: 0.0005, output_cost: 0.001 },
  });
  add({ name: "retrieve", run_type: "retriever", offsetMs: 9000, durationMs: 400 });
  // The retriever run goes as the SDKs send attachments: multipart, with an attachment part.
  const retrieve = post.pop()!;
  for (let i = 0; i < FILLERS; i++)
    add({ name: `step-${i}`, run_type: "chain", offsetMs: 20_000 + i * 1000, durationMs: 50 + i * 10 });
  const result = await ok<{ accepted: number; errors: unknown[] }>("POST", "/api/v1/runs/batch", { post });
  expect(result.errors).toEqual([]);
  const form = new FormData();
  form.append(`post.${retrieve.id}`, new Blob([JSON.stringify(retrieve)], { type: "application/json" }));
  form.append(`attachment.${retrieve.id}.notes`, new Blob([ATTACHMENT_TEXT], { type: "text/plain" }));
  const encoded = new Response(form);
  const multipart = await fetch(`${harness.server.url}/api/v1/runs/multipart`, {
    method: "POST",
    headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": encoded.headers.get("content-type")! },
    body: await encoded.arrayBuffer(),
  });
  expect(multipart.status).toBe(202);
  await ok("POST", "/api/v1/feedback", { run_id: lookup.id, key: "correctness", score: 0, comment: "wrong tool" });
  const [project] = await ok<{ id: string }[]>("GET", `/api/v1/sessions?name=${PROJECT}`);
  return project.id;
}

let projectId: string;

beforeAll(async () => {
  harness = await startConsoleHarness();
  projectId = await ingestProject();
});
afterAll(async () => {
  await harness?.close();
});

async function signedIn(path: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await harness.open(path, viewport ? { viewport } : undefined);
  await harness.signIn(page);
  return page;
}

/** The agent graph run to its end through the API: its thread and run ids. */
async function runAgent(): Promise<{ threadId: string; runId: string }> {
  const thread = await ok<{ thread_id: string }>("POST", "/threads", {});
  const run = await ok<{ run_id: string }>("POST", `/threads/${thread.thread_id}/runs`, {
    assistant_id: "agent",
    input: { messages: [{ role: "user", content: "what is the weather in sf" }] },
  });
  await ok("GET", `/threads/${thread.thread_id}/runs/${run.run_id}/join`);
  return { threadId: thread.thread_id, runId: run.run_id };
}

describe("flow 4: an agent run's trace", () => {
  it("finds the trace of an agent run and shows its tree with timings, runs' inputs and outputs, and the thread link", async () => {
    const { threadId, runId } = await runAgent();
    const page = await signedIn(`/console/traces/agent-runs/${runId}`);
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/\/console\/traces\/trace\/[0-9a-f-]{36}/);
    const traceId = /\/traces\/trace\/([0-9a-f-]{36})/.exec(page.url())![1];

    // What the API holds for that trace.
    const apiRuns = await allRuns({ trace: traceId, order: "asc" });
    expect(apiRuns.length).toBeGreaterThan(3);
    expect(apiRuns.every((run) => run.extra?.metadata?.run_id === runId)).toBe(true);

    const tree = page.getByRole("table", { name: "Trace tree" });
    const rows = tree.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(apiRuns.length);
    const names = await rows.locator(".run-name").allTextContents();
    expect([...names].sort()).toEqual(apiRuns.map((run) => run.name).sort());
    for (const name of ["agent", "tools", "search", "ScriptedChatModel"]) expect(names).toContain(name);
    expect(await page.getByTestId("trace-run-count").textContent()).toBe(String(apiRuns.length));

    // Children under their parents: each row's depth is its parent's + 1.
    const depthOf = new Map<string, number>();
    for (const row of await rows.all()) {
      const id = (await row.getAttribute("data-run-id"))!;
      const depth = Number(await row.getAttribute("data-depth"));
      const run = apiRuns.find((r) => r.id === id)!;
      expect(depth).toBe(run.parent_run_id ? depthOf.get(run.parent_run_id)! + 1 : 0);
      depthOf.set(id, depth);
      // The duration shown is the API's latency, and the waterfall bar has a width.
      const duration = row.getByTestId("run-duration");
      expect(Number(await duration.getAttribute("data-ms"))).toBeCloseTo((run.latency ?? 0) * 1000, 3);
      expect(await duration.textContent()).toMatch(/\d+(\.\d+)? (ms|s)$/);
      const box = await row.getByTestId("waterfall-bar").boundingBox();
      expect(box?.width ?? 0).toBeGreaterThan(0);
    }
    // The root spans the whole timeline; a child's bar starts inside it.
    const rootBar = await rows.first().getByTestId("waterfall-bar").boundingBox();
    const timeline = await rows.first().locator(".waterfall").boundingBox();
    expect(rootBar!.width).toBeGreaterThan(timeline!.width * 0.9);

    // The thread link leads back to the agent run's thread.
    const threadLink = page.getByTestId("trace-thread-link");
    expect(await threadLink.getAttribute("href")).toBe(`/console/threads/${threadId}`);

    // Selecting the tool run shows its inputs and outputs.
    const search = apiRuns.find((run) => run.name === "search")!;
    await tree.getByRole("button", { name: "search", exact: true }).click();
    await expect.poll(() => page.url()).toContain(`run=${search.id}`);
    const detail = page.getByRole("region", { name: "Selected run" });
    await expect.poll(() => detail.getByRole("heading", { level: 2 }).textContent()).toBe("search");
    await expect.poll(() => detail.getByTestId("run-inputs").textContent()).toContain("what is the weather in sf");
    expect(await detail.getByTestId("run-outputs").textContent()).not.toContain("No outputs");
    expect(await detail.getByRole("link", { name: `Open thread ${threadId}` }).getAttribute("href")).toBe(
      `/console/threads/${threadId}`,
    );
    await harness.screenshot(page, "4-trace-tree");

    // Collapsing a node hides its descendants.
    const tools = apiRuns.find((run) => run.name === "tools")!;
    const toolsChildren = apiRuns.filter((run) => run.parent_run_id === tools.id).length;
    await tree.getByRole("button", { name: "Collapse tools" }).click();
    await expect.poll(() => rows.count()).toBe(apiRuns.length - toolsChildren);
    await tree.getByRole("button", { name: "Expand tools" }).click();
    await expect.poll(() => rows.count()).toBe(apiRuns.length);

    await threadLink.click();
    await expect.poll(() => page.url()).toBe(`${harness.server.url}/console/threads/${threadId}`);

    // At a phone's width the tree and the selected run stack.
    const phone = await signedIn(`/console/traces/trace/${traceId}?run=${search.id}`, { width: 390, height: 844 });
    await expect.poll(() => phone.locator("table[aria-label='Trace tree'] tbody tr").count()).toBe(apiRuns.length);
    await phone.getByRole("region", { name: "Selected run" }).waitFor();
    expect(await phone.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await harness.screenshot(phone, "4-trace-tree-phone");
  });

  it("says so when an agent run has no trace", async () => {
    const page = await signedIn(`/console/traces/agent-runs/${randomUUID()}`);
    await expect
      .poll(() => page.getByRole("status").textContent(), { timeout: 15_000 })
      .toContain("No trace found for this run");
  });

  it("lists the projects with run counts, error rate, latency p50/p99, tokens and cost as the API computes them", async () => {
    const page = await signedIn("/console/traces");
    const table = page.getByRole("table", { name: "Tracing projects" });
    const row = table.locator(`tr[data-project="${PROJECT}"]`);
    await row.waitFor();

    const check = async (body: Record<string, unknown>) => {
      const stats = await ok<RunStats>("POST", "/api/v1/runs/stats", { session: [projectId], ...body });
      const value = (stat: string) => row.locator(`[data-stat="${stat}"]`).getAttribute("data-value");
      await expect.poll(() => value("run_count")).toBe(String(stats.run_count));
      expect(Number(await value("error_rate"))).toBeCloseTo(stats.error_rate!, 9);
      expect(Number(await value("latency_p50"))).toBeCloseTo(stats.latency_p50!, 9);
      expect(Number(await value("latency_p99"))).toBeCloseTo(stats.latency_p99!, 9);
      expect(await value("total_tokens")).toBe(String(stats.total_tokens));
      if (stats.total_cost === null) expect(await value("total_cost")).toBe("");
      else expect(Number(await value("total_cost"))).toBeCloseTo(stats.total_cost, 9);
      // And as a person reads them.
      const text = (stat: string) => row.locator(`[data-stat="${stat}"]`).textContent();
      expect(await text("run_count")).toBe(String(stats.run_count));
      expect(await text("error_rate")).toBe(`${(Math.round(stats.error_rate! * 1000) / 10).toString()}%`);
      expect(await text("total_tokens")).toBe(String(stats.total_tokens));
      const cost = stats.total_cost;
      expect(await text("total_cost")).toBe(
        cost === null ? "—" : `$${cost < 0.01 && cost > 0 ? cost.toFixed(6) : cost.toFixed(4)}`,
      );
      return stats;
    };

    const all = await check({ start_time: new Date(Date.now() - 86_400_000).toISOString() });
    expect(all.run_count).toBe(6 + FILLERS);
    expect(all.total_tokens).toBe(112);
    expect(all.total_cost).toBeCloseTo(0.0024, 9);
    expect(all.error_rate).toBeCloseTo(2 / (6 + FILLERS), 9);
    await harness.screenshot(page, "4b-projects");

    // Root runs only: counts and error rate of the traces.
    await page.getByLabel("Runs counted").selectOption("roots");
    const roots = await check({ start_time: new Date(Date.now() - 86_400_000).toISOString(), is_root: true });
    expect(roots.run_count).toBe(3 + FILLERS);
    expect(roots.error_rate).toBeCloseTo(1 / (3 + FILLERS), 9);

    // The last hour still holds them; the range is in the URL.
    await page.getByLabel("Time range").selectOption("1h");
    await expect.poll(() => page.url()).toContain("range=1h");
    await check({ start_time: new Date(Date.now() - 3_600_000).toISOString(), is_root: true });

    const phone = await signedIn("/console/traces", { width: 390, height: 844 });
    await phone.locator(`tr[data-project="${PROJECT}"] [data-stat="run_count"]`).waitFor();
    await harness.screenshot(phone, "4b-projects-phone");
  });
});

describe("flow 5: filter runs", () => {
  it("shows a bad filter's error at the parser's position, then narrows the table with a good one", async () => {
    const page = await signedIn(`/console/traces/projects/${projectId}`);
    const table = page.getByRole("table", { name: "Runs" });
    const bodyRows = table.locator("tbody tr");
    await expect.poll(() => bodyRows.count()).toBe(50);

    const filterBox = page.getByRole("textbox", { name: "Filter" });
    const apply = page.getByRole("button", { name: "Apply" });
    const errorView = page.getByRole("region", { name: "Filter error" });

    for (const bad of ['and(eq(name, "x")', "eq(nope, 1)", 'and(eq(run_type, "llm"), gt(latency, "soon"))']) {
      const refused = await call<{ detail: string }>("POST", "/api/v1/runs/query", {
        session: [projectId],
        filter: bad,
      });
      expect(refused.status).toBe(400);
      const position = Number(/at position (\d+)/.exec(refused.body.detail)![1]);
      await filterBox.fill(bad);
      await apply.click();
      await expect.poll(() => errorView.getByTestId("filter-error-position").textContent()).toBe(String(position));
      expect(await errorView.getByTestId("error-message").textContent()).toBe(refused.body.detail);
      // The marked character is the one at that position (a space past the end).
      expect(await errorView.getByTestId("filter-error-mark").textContent()).toBe(bad[position] ?? " ");
      const caret = await errorView.locator(".filter-caret").textContent();
      expect(caret).toBe(`${" ".repeat(position)}^`);
      expect(await table.count()).toBe(0);
      if (bad === "eq(nope, 1)") await harness.screenshot(page, "5-filter-error");
    }

    // A good filter narrows the table to what the API matches.
    const good = 'and(eq(run_type, "llm"), gt(latency, 1))';
    await filterBox.fill(good);
    await apply.click();
    const matched = await allRuns({ session: [projectId], filter: good });
    expect(matched.length).toBe(2);
    await expect.poll(() => bodyRows.count()).toBe(matched.length);
    expect(await errorView.count()).toBe(0);
    expect((await bodyRows.locator("td:first-child a").allTextContents()).sort()).toEqual(["chat", "chat"]);
    expect(page.url()).toContain("filter=");

    // Root runs only, with the filter.
    await filterBox.fill('eq(name, "pipeline")');
    await apply.click();
    await expect.poll(() => bodyRows.count()).toBe(2);
    await filterBox.fill("neq(error, null)");
    await apply.click();
    const failed = await allRuns({ session: [projectId], filter: "neq(error, null)" });
    await expect.poll(() => bodyRows.count()).toBe(failed.length);
    await page.getByLabel("Root runs only").check();
    const failedRoots = await allRuns({ session: [projectId], filter: "neq(error, null)", is_root: true });
    expect(failedRoots.length).toBeLessThan(failed.length);
    await expect.poll(() => bodyRows.count()).toBe(failedRoots.length);

    // No filter: 58 runs on two pages, newest first; the start header flips the order.
    await page.getByLabel("Root runs only").uncheck();
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => bodyRows.count()).toBe(50);
    const everything = await allRuns({ session: [projectId], order: "desc" });
    expect(await bodyRows.first().getAttribute("data-run-id")).toBe(everything[0].id);
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => bodyRows.count()).toBe(everything.length - 50);
    expect(await bodyRows.first().getAttribute("data-run-id")).toBe(everything[50].id);
    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(() => bodyRows.first().getAttribute("data-run-id")).toBe(everything[0].id);
    await page.getByRole("button", { name: /^Start/ }).click();
    await expect.poll(() => bodyRows.first().getAttribute("data-run-id")).toBe(everything.at(-1)!.id);
    expect(await table.locator("th[aria-sort='ascending']").textContent()).toContain("Start");

    // A row leads to its trace, with that run selected.
    await filterBox.fill('eq(name, "lookup")');
    await apply.click();
    await expect.poll(() => bodyRows.count()).toBe(1);
    await bodyRows.first().getByRole("link", { name: "lookup" }).click();
    await expect.poll(() => page.url()).toMatch(/\/console\/traces\/trace\/[0-9a-f-]{36}\?run=/);
    const detail = page.getByRole("region", { name: "Selected run" });
    await expect.poll(() => detail.getByRole("heading", { level: 2 }).textContent()).toBe("lookup");
    expect(await detail.locator(".run-error").textContent()).toBe("lookup failed");
    await expect.poll(() => page.getByRole("table", { name: "Trace tree" }).locator("tbody tr").count()).toBe(3);
    // Its feedback, as the API lists it.
    const feedback = detail.getByRole("table", { name: "Feedback" });
    await expect.poll(() => feedback.locator("tbody tr").count()).toBe(1);
    expect(await feedback.locator("tbody tr").textContent()).toMatch(/correctness\s*0.*wrong tool/);

    // A run's attachment downloads through its pre-signed link.
    await filterBox.waitFor({ state: "detached" });
    await page.goBack();
    await filterBox.fill('eq(name, "retrieve")');
    await apply.click();
    await expect.poll(() => bodyRows.count()).toBe(1);
    await bodyRows.first().getByRole("link", { name: "retrieve" }).click();
    const link = detail.getByRole("list", { name: "Attachments" }).getByRole("link", { name: "notes" });
    const href = (await link.getAttribute("href"))!;
    expect(href).toContain("/api/v1/attachments/");
    expect(await (await fetch(href)).text()).toBe(ATTACHMENT_TEXT);
    expect(await detail.getByRole("list", { name: "Attachments" }).textContent()).toContain("text/plain");

    const phone = await signedIn(`/console/traces/projects/${projectId}?filter=${encodeURIComponent("eq(nope, 1)")}`, {
      width: 390,
      height: 844,
    });
    await phone.getByRole("region", { name: "Filter error" }).waitFor();
    await harness.screenshot(phone, "5-filter-error-phone");
  });
});
