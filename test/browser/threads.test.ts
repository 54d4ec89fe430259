import { Client, type ThreadState } from "@langchain/langgraph-sdk";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

interface StepsValues {
  items: string[];
  answer?: unknown;
}

let harness: ConsoleHarness;
let sdk: Client<StepsValues>;
let threadId: string;
let runId: string;

beforeAll(async () => {
  harness = await startConsoleHarness();
  sdk = new Client<StepsValues>({ apiUrl: harness.server.url, apiKey: harness.server.apiKey });
  // A decoy first, so the metadata search has something to leave out.
  await sdk.threads.create({ metadata: { flow: "decoy" } });
  const thread = await sdk.threads.create({ metadata: { flow: "fork-7", owner: "console-test" } });
  threadId = thread.thread_id;
  await sdk.runs.wait(threadId, "steps", { input: { items: [] } });
  const runs = await sdk.runs.list(threadId);
  runId = runs[0].run_id;
});
afterAll(async () => {
  await harness?.close();
});

/** The timeline's entries, newest first, as their accessible names ("Step 1: step1"). */
async function timeline(page: Page): Promise<string[]> {
  const entries = await page.getByRole("list", { name: "Checkpoints" }).locator(":scope > li").all();
  return Promise.all(entries.map(async (entry) => (await entry.getAttribute("aria-label")) ?? ""));
}

async function history(): Promise<ThreadState<StepsValues>[]> {
  return sdk.threads.getHistory(threadId, { limit: 100 });
}

describe("flow 7: fork a thread from its history", () => {
  it("finds the thread by metadata, shows its state, its checkpoints in order, and forks from step 1", async () => {
    const page = await harness.open("/console/threads");
    await harness.signIn(page);
    await expect.poll(() => page.url()).toMatch(/\/console\/threads$/);

    // A metadata filter that isn't a JSON object is refused before any request.
    const metadata = page.getByLabel("Metadata (JSON object)");
    await metadata.fill('["fork-7"]');
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("must be a JSON object");

    await metadata.fill('{"flow": "fork-7"}');
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.url()).toContain("metadata=");
    const table = page.getByRole("table", { name: "Threads" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    const row = table.locator("tbody tr").first();
    expect(await row.textContent()).toContain("steps");
    expect(await row.locator("[data-status]").getAttribute("data-status")).toBe("idle");
    expect(await page.getByRole("alert").count()).toBe(0);
    await harness.screenshot(page, "7a-threads-search");
    await page.getByRole("link", { name: threadId }).click();

    // State: the values as a tree, nothing next.
    await expect.poll(() => page.url()).toContain(`/console/threads/${threadId}`);
    const values = page.getByRole("region", { name: "State values" });
    await values.waitFor();
    await expect.poll(() => values.textContent()).toContain('"review"');
    for (const node of ["step1", "step2", "step3"]) expect(await values.textContent()).toContain(`"${node}"`);
    expect(await page.getByText("nothing (done until new input)").count()).toBe(1);
    await harness.screenshot(page, "7b-thread-state");

    // History: every step with the node that wrote it, newest first, and what it changed.
    await page.getByRole("tab", { name: "History" }).click();
    await expect.poll(() => page.url()).toContain("tab=history");
    await expect
      .poll(() => timeline(page))
      .toEqual([
        "Step 4: review",
        "Step 3: step3",
        "Step 2: step2",
        "Step 1: step1",
        "Step 0: __start__",
        "Step -1: input",
      ]);
    const step1 = page.getByRole("listitem", { name: "Step 1: step1" });
    expect(await step1.getByRole("list", { name: "Changes" }).textContent()).toContain(
      'items changed 1 item added: "step1"',
    );
    expect(await step1.textContent()).toContain("next: step2");

    // Fork from the checkpoint after step1 with an edited value.
    const before = await history();
    const step1Checkpoint = before.find((state) => state.metadata?.step === 1)!;
    expect(step1Checkpoint.values.items).toEqual(["step1"]);
    await step1.getByRole("button", { name: "Fork…" }).click();
    const form = page.getByRole("form", { name: "Fork from step 1" });
    const edited = { items: ["step1"], answer: "forked in the console" };
    await form.getByLabel("Values (JSON)").fill(JSON.stringify(edited, null, 2));
    await form.getByRole("button", { name: "Fork", exact: true }).click();
    const result = page.getByRole("status");
    await expect.poll(() => result.textContent()).toContain("new checkpoint");
    const forkedId = (await page.getByTestId("fork-checkpoint").textContent())!;

    // Through the API: a new checkpoint, child of step 1's, with the edited values (items not appended twice).
    const after = await history();
    expect(after.length).toBe(before.length + 1);
    const forked = after.find((state) => state.checkpoint.checkpoint_id === forkedId)!;
    expect(forked).toBeDefined();
    expect(forked.parent_checkpoint?.checkpoint_id).toBe(step1Checkpoint.checkpoint.checkpoint_id);
    expect(forked.values).toEqual(edited);
    expect(forked.metadata?.source).toBe("update");
    expect(forked.next).toEqual(["step2"]);

    // The timeline shows the branch on top, with what changed from step 1.
    await expect.poll(async () => (await timeline(page))[0]).toBe("Step 2: update");
    const top = page.getByRole("list", { name: "Checkpoints" }).locator(":scope > li").first();
    expect(await top.getAttribute("data-checkpoint-id")).toBe(forkedId);
    expect(await top.textContent()).toContain(`branches from …${step1Checkpoint.checkpoint.checkpoint_id!.slice(-8)}`);
    expect(await top.getByRole("list", { name: "Changes" }).textContent()).toContain("answer added");
    await harness.screenshot(page, "7-fork-thread-history");
  });

  it("forks and runs: the new branch runs on to the end", async () => {
    const page = await harness.open(`/console/threads/${threadId}?tab=history`);
    await harness.signIn(page);
    const step2 = page.getByRole("listitem", { name: "Step 2: step2" });
    await step2.getByRole("button", { name: "Fork…" }).click();
    const form = page.getByRole("form", { name: "Fork from step 2" });
    await form.getByLabel("Values (JSON)").fill(JSON.stringify({ items: ["step1", "step2"], answer: "rerun" }));
    await form.getByRole("button", { name: "Fork and run" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("run ");
    const forkedId = (await page.getByTestId("fork-checkpoint").textContent())!;
    const runLink = page.getByRole("status").getByRole("link", { name: "trace" });
    const newRunId = /agent-runs\/([^/?]+)/.exec((await runLink.getAttribute("href"))!)?.[1];
    expect(newRunId).toBeDefined();
    await sdk.runs.join(threadId, newRunId!);
    const state = await sdk.threads.getState(threadId);
    expect(state.values).toEqual({ items: ["step1", "step2", "step3", "review"], answer: "rerun" });
    // The run continued from the forked checkpoint.
    const states = await history();
    const byId = new Map(states.map((entry) => [entry.checkpoint.checkpoint_id, entry]));
    let cursor: ThreadState<StepsValues> | undefined = byId.get(state.checkpoint.checkpoint_id);
    const lineage: string[] = [];
    while (cursor) {
      lineage.push(cursor.checkpoint.checkpoint_id!);
      cursor = byId.get(cursor.parent_checkpoint?.checkpoint_id ?? "");
    }
    expect(lineage).toContain(forkedId);
  });

  it("edits the current state as a node; bad JSON shows a clear error and sends nothing", async () => {
    const page = await harness.open(`/console/threads/${threadId}?tab=edit`);
    await harness.signIn(page);
    const form = page.getByRole("form", { name: "Edit state" });
    const field = form.getByLabel("Values (JSON)");
    await expect.poll(() => field.inputValue()).toContain('"rerun"');

    const before = (await history()).length;
    const stateWrites: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().endsWith(`/threads/${threadId}/state`))
        stateWrites.push(request.url());
    });
    await field.fill('{"answer": "oops",');
    await form.getByRole("button", { name: "Update state" }).click();
    const alert = form.getByRole("alert");
    await expect.poll(() => alert.textContent()).toContain("Values is not valid JSON");
    await field.fill('"just a string"');
    await form.getByRole("button", { name: "Update state" }).click();
    await expect.poll(() => alert.textContent()).toContain("Values must be a JSON object");
    expect(stateWrites).toEqual([]);
    expect((await history()).length).toBe(before);

    // As node: the graph's nodes are offered; updating as step3 makes review the next node.
    const asNode = form.getByLabel("As node");
    expect(await asNode.locator("option").allTextContents()).toEqual([
      "(automatic)",
      "step1",
      "step2",
      "step3",
      "review",
    ]);
    await field.fill(
      JSON.stringify({ items: ["step1", "step2", "step3", "review"], answer: "edited as step3" }, null, 2),
    );
    expect(await alert.count()).toBe(0);
    await asNode.selectOption("step3");
    await harness.screenshot(page, "7d-thread-edit-state");
    await form.getByRole("button", { name: "Update state" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("State updated: new checkpoint");
    expect(stateWrites.length).toBe(1);
    const state = await sdk.threads.getState(threadId);
    expect(state.values).toEqual({ items: ["step1", "step2", "step3", "review"], answer: "edited as step3" });
    expect(state.next).toEqual(["review"]);
    expect(state.metadata?.source).toBe("update");
    // The form now holds the new state, and the State tab shows review as next.
    await expect.poll(() => field.inputValue()).toContain("edited as step3");
    await page.getByRole("tab", { name: "State", exact: true }).click();
    await expect.poll(() => page.locator(".state-facts").textContent()).toContain("review");
  });

  it("lists the thread's runs with their status, duration and a link to each trace", async () => {
    const page = await harness.open(`/console/threads/${threadId}?tab=runs`);
    await harness.signIn(page);
    const table = page.getByRole("table", { name: "Runs" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);
    const first = table.locator(`tr[data-run-id="${runId}"]`);
    expect(await first.locator("[data-status]").getAttribute("data-status")).toBe("success");
    expect(await first.textContent()).toMatch(/\d+(\.\d+)? m?s/);
    const link = first.getByRole("link", { name: /Trace of run/ });
    expect(await link.getAttribute("href")).toBe(`/console/traces/agent-runs/${runId}`);
    await expect.poll(() => table.locator('[data-status="success"]').count()).toBe(2);
  });

  it("shows an open interrupt with a link to answer it in chat", async () => {
    const waiting = await sdk.threads.create({ metadata: { flow: "interrupt-7" } });
    await sdk.runs.wait(waiting.thread_id, "steps", { input: { items: [], ask_human: true } });
    const assistantId = (await sdk.threads.get(waiting.thread_id)).metadata?.assistant_id;
    expect(typeof assistantId).toBe("string");
    const page = await harness.open(`/console/threads/${waiting.thread_id}`);
    await harness.signIn(page);
    const interrupts = page.getByRole("region", { name: "Interrupts" });
    await expect.poll(() => interrupts.textContent()).toContain('"approve?"');
    expect(await page.locator("[data-status]").first().getAttribute("data-status")).toBe("interrupted");
    expect(await interrupts.getByRole("link", { name: "Answer in chat" }).getAttribute("href")).toBe(
      `/console/chat/${assistantId}?thread=${waiting.thread_id}`,
    );
    expect(await page.locator(".state-facts").textContent()).toContain("review");
    await harness.screenshot(page, "7e-thread-interrupt");
  });

  it("fits a phone-sized screen", async () => {
    const page = await harness.open(`/console/threads/${threadId}?tab=history`, {
      viewport: { width: 390, height: 844 },
    });
    await harness.signIn(page);
    await page.getByRole("list", { name: "Checkpoints" }).waitFor();
    await page.getByRole("listitem", { name: "Step 1: step1" }).getByRole("button", { name: "Fork…" }).click();
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await harness.screenshot(page, "7c-thread-history-phone");
  });
});
