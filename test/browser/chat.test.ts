import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gate } from "../fixtures/gate.ts";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

let harness: ConsoleHarness;
beforeAll(async () => {
  harness = await startConsoleHarness();
});
afterAll(async () => {
  await harness?.close();
});

/** The Agent Server API as a test client sees it (not through the console). */
async function apiGet<T>(path: string): Promise<T> {
  const response = await fetch(`${harness.server.url}${path}`, { headers: { "X-Api-Key": harness.server.apiKey } });
  expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as T;
}

interface StateMessage {
  type: string;
  content: unknown;
  tool_calls?: { name: string; args: Record<string, unknown> }[];
}

/** Signs in and opens the chat with the assistant of a graph, picked from `/console/chat`. */
async function openChat(graph: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await harness.open("/console/", viewport ? { viewport } : undefined);
  await harness.signIn(page);
  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Chat" }).click();
  await page.getByRole("link", { name: `Chat with ${graph}` }).click();
  await expect.poll(() => page.url()).toMatch(/\/console\/chat\/[0-9a-f-]{36}$/);
  return page;
}

function threadOf(page: Page): string {
  const threadId = new URL(page.url()).searchParams.get("thread");
  expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
  return threadId!;
}

async function waitUntilIdle(page: Page) {
  await page.getByRole("status").filter({ hasText: "Running" }).waitFor({ state: "detached", timeout: 30_000 });
}

describe("flow 2: chat with agent", () => {
  it("streams the answer token by token (messages-tuple), shows the search tool call, and ends on the thread's state", async () => {
    const page = await openChat("agent");
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    // Every length the assistant's text has on screen, as the DOM changes.
    // (Browser-side code as text: the tests' tsconfig has no DOM types.)
    await page.evaluate(`(() => {
      const seen = (window.seenLengths = []);
      new MutationObserver(() => {
        const last = [...document.querySelectorAll('[data-testid="ai-text"]')].at(-1);
        if (last) seen.push(last.textContent.length);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    const streamRequest = page.waitForRequest(
      (request) =>
        request.method() === "POST" && /\/threads\/[^/]+\/runs\/stream$/.test(new URL(request.url()).pathname),
    );
    await page.getByRole("textbox", { name: "Message" }).fill("Tell me about LangGraph");
    await page.getByRole("button", { name: "Send" }).click();

    const body = (await streamRequest).postDataJSON() as { stream_mode: string[]; input: unknown };
    expect(body.stream_mode).toContain("messages-tuple");
    expect(body.input).toEqual({ messages: [{ type: "human", content: "Tell me about LangGraph" }] });

    const tool = page.getByRole("region", { name: "Tool call search" });
    await tool.waitFor();
    expect(JSON.parse((await tool.getByLabel("Arguments").locator("pre").textContent()) ?? "")).toEqual({
      query: "Tell me about LangGraph",
    });
    await expect
      .poll(() => tool.getByLabel("Result").locator("pre").textContent())
      .toBe("LangGraph builds stateful agents as graphs of nodes that share state.");
    await waitUntilIdle(page);

    const threadId = threadOf(page);
    const state = await apiGet<{ values: { messages: StateMessage[] } }>(`/threads/${threadId}/state`);
    const messages = state.values.messages;
    expect(messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[1].tool_calls?.[0]?.name).toBe("search");
    const finalText = String(messages[3].content);
    expect(finalText).toMatch(/^Here is what I found: LangGraph builds stateful agents/);
    const shown = page.getByTestId("ai-text").last();
    await expect.poll(() => shown.textContent()).toBe(finalText);

    // Streamed, not painted at once: the text was seen partly written, growing, before the end.
    const lengths = await page.evaluate<number[]>("window.seenLengths");
    const partial = [...new Set(lengths.filter((length) => length > 0 && length < finalText.length))];
    expect(partial.length, `lengths seen: ${lengths.join(",")}`).toBeGreaterThanOrEqual(2);
    expect(lengths.filter((length) => length > 0)).toEqual(
      [...lengths.filter((length) => length > 0)].sort((a, b) => a - b),
    );

    // The thread and the run's trace are one click away.
    expect(await page.getByRole("link", { name: `…${threadId.slice(-8)}` }).getAttribute("href")).toBe(
      `/console/threads/${threadId}`,
    );
    const runs = await apiGet<{ run_id: string; status: string }[]>(`/threads/${threadId}/runs`);
    expect(runs.map((run) => run.status)).toEqual(["success"]);
    const runsTable = page.getByRole("table", { name: "Runs" });
    await expect
      .poll(() => runsTable.locator(`tr[data-run-id="${runs[0].run_id}"]`).textContent())
      .toContain("success");
    expect(await runsTable.getByRole("link", { name: "trace" }).first().getAttribute("href")).toBe(
      `/console/traces/agent-runs/${runs[0].run_id}`,
    );
    await harness.screenshot(page, "2-chat-agent");

    // The thread in the URL is continued: a fresh tab on the same link shows the conversation again.
    const phone = await harness.open(
      `/console/chat/${new URL(page.url()).pathname.split("/").at(-1)}?thread=${threadId}`,
      {
        viewport: { width: 390, height: 844 },
      },
    );
    await harness.signIn(phone);
    await expect.poll(() => phone.getByTestId("ai-text").last().textContent()).toBe(finalText);
    await phone.getByRole("region", { name: "Tool call search" }).waitFor();
    const overflow = await phone.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await harness.screenshot(phone, "2-chat-agent-phone");
  });

  it("shows the API's reason for an assistant that does not exist", async () => {
    const page = await harness.open("/console/chat/00000000-0000-0000-0000-000000000000");
    await harness.signIn(page);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("HTTP 404");
    expect(await alert.textContent()).not.toContain("{");
  });
});

describe("flow 3: answer an interrupt of steps", () => {
  it("shows the interrupt's question, resumes with Command(resume=…), and the run completes with the answer", async () => {
    const page = await openChat("steps");
    await page.getByLabel("Input (JSON object)").fill('{"ask_human": true}');
    await page.getByRole("button", { name: "Run" }).click();

    const panel = page.getByRole("region", { name: "Interrupt" });
    await panel.waitFor({ timeout: 30_000 });
    const value = JSON.parse((await panel.getByLabel("Interrupt value").textContent()) ?? "");
    expect(value).toEqual({ question: "approve?", items: ["step1", "step2", "step3"] });
    const threadId = threadOf(page);
    const paused = await apiGet<{ next: string[]; values: { items: string[] } }>(`/threads/${threadId}/state`);
    expect(paused.next).toEqual(["review"]);

    const answer = { approved: true, note: "ship it" };
    await panel.getByLabel(/Resume value/).fill(JSON.stringify(answer));
    await harness.screenshot(page, "3-interrupt-steps");
    const resumeRequest = page.waitForRequest((request) => /\/runs\/stream$/.test(new URL(request.url()).pathname));
    await panel.getByRole("button", { name: "Resume" }).click();
    expect((await resumeRequest).postDataJSON().command).toEqual({ resume: answer });

    await panel.waitFor({ state: "detached", timeout: 30_000 });
    await waitUntilIdle(page);
    const stateCard = page.getByRole("region", { name: "State" });
    await expect.poll(() => stateCard.textContent()).toContain('"review"');
    expect(await stateCard.textContent()).toContain('"ship it"');

    const done = await apiGet<{ next: string[]; values: { items: string[]; answer: unknown } }>(
      `/threads/${threadId}/state`,
    );
    expect(done.next).toEqual([]);
    expect(done.values.items).toEqual(["step1", "step2", "step3", "review"]);
    expect(done.values.answer).toEqual(answer);
    const runs = await apiGet<{ status: string }[]>(`/threads/${threadId}/runs`);
    expect(runs.map((run) => run.status)).toEqual(["success", "success"]);
    await expect.poll(() => page.getByRole("table", { name: "Runs" }).locator("tbody tr").count()).toBe(2);
  });

  it("answers the approval example's Agent Inbox request with its buttons: edit, then the edited email is sent", async () => {
    const page = await openChat("approval");
    await page.getByRole("textbox", { name: "Message" }).fill("Lunch at noon?");
    await page.getByRole("button", { name: "Send" }).click();
    const panel = page.getByRole("region", { name: "Interrupt" });
    await panel.waitFor({ timeout: 30_000 });
    expect(await panel.textContent()).toContain("wants to send an email to team@example.com");
    const buttons = panel.getByRole("group", { name: "Answer the request" }).getByRole("button");
    expect(await buttons.allTextContents()).toEqual(["Accept", "Edit…", "Respond…", "Ignore"]);

    // Edit fills in the answer with the drafted call, to change before resuming.
    await panel.getByRole("button", { name: "Edit…" }).click();
    const draft = JSON.parse(await panel.getByLabel(/Resume value/).inputValue());
    expect(draft).toEqual([
      {
        type: "edit",
        args: {
          action: "send_email",
          args: { to: "team@example.com", subject: "Lunch at noon?", body: "Lunch at noon?" },
        },
      },
    ]);
    draft[0].args.args.to = "chef@example.com";
    await panel.getByLabel(/Resume value/).fill(JSON.stringify(draft));
    await panel.getByRole("button", { name: "Resume" }).click();
    await panel.waitFor({ state: "detached", timeout: 30_000 });
    await waitUntilIdle(page);
    const sent = 'I sent the email to chef@example.com with the subject "Lunch at noon?".';
    await expect.poll(() => page.getByTestId("ai-text").last().textContent()).toBe(sent);
    const state = await apiGet<{ values: { messages: { type: string; content: unknown }[] } }>(
      `/threads/${threadOf(page)}/state`,
    );
    expect(state.values.messages.at(-1)?.content).toBe(sent);
  });

  it("accepts the approval example's request with one click", async () => {
    const page = await openChat("approval");
    await page.getByRole("textbox", { name: "Message" }).fill("Ship it");
    await page.getByRole("button", { name: "Send" }).click();
    const panel = page.getByRole("region", { name: "Interrupt" });
    await panel.getByRole("button", { name: "Accept" }).click();
    await panel.waitFor({ state: "detached", timeout: 30_000 });
    await expect
      .poll(() => page.getByTestId("ai-text").last().textContent())
      .toBe('I sent the email to team@example.com with the subject "Ship it".');
  });

  it("takes a resume value that is not JSON as a plain string", async () => {
    const page = await openChat("steps");
    await page.getByLabel("Input (JSON object)").fill('{"ask_human": true}');
    await page.getByRole("button", { name: "Run" }).click();
    const panel = page.getByRole("region", { name: "Interrupt" });
    await panel.waitFor({ timeout: 30_000 });
    await panel.getByLabel(/Resume value/).fill("yes, go ahead");
    await panel.getByRole("button", { name: "Resume" }).click();
    await panel.waitFor({ state: "detached", timeout: 30_000 });
    await waitUntilIdle(page);
    const done = await apiGet<{ values: { answer: unknown } }>(`/threads/${threadOf(page)}/state`);
    expect(done.values.answer).toBe("yes, go ahead");
  });
});

describe("cancel a running run", () => {
  it("stops a slow run of steps: the server's run ends interrupted, and the runs table says so", async () => {
    // An assistant of steps whose runs wait at step2's gate: the run is busy until it is stopped.
    const held = gate("step2");
    const assistant = await fetch(`${harness.server.url}/assistants`, {
      method: "POST",
      headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ graph_id: "steps", name: "Gated pipeline", config: held.config }),
    });
    expect(assistant.status).toBe(200);
    const page = await openChat("Gated pipeline");
    await page.getByLabel("Input (JSON object)").fill('{"items": []}');
    await page.getByRole("button", { name: "Run" }).click();
    // The run exists (its trace link is shown) before it is stopped.
    const traceLink = page.locator(".chat-meta").getByRole("link", { name: "trace" });
    await traceLink.waitFor();
    const runId = (await traceLink.getAttribute("href"))?.split("/").at(-1);
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    await page.getByRole("button", { name: "Stop" }).click();
    await waitUntilIdle(page);

    const threadId = threadOf(page);
    await expect
      .poll(async () => (await apiGet<{ status: string }>(`/threads/${threadId}/runs/${runId}`)).status, {
        timeout: 15_000,
      })
      .toBe("interrupted");
    // It really stopped: with its gate open now, step2 still does not run. Time itself is under test
    // (nothing happens): a live run would pass the open gate within 50 ms.
    const opened = await fetch(`${harness.server.url}/store/items`, {
      method: "PUT",
      headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify(held.opening),
    });
    expect(opened.status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const state = await apiGet<{ values: { items?: string[] } }>(`/threads/${threadId}/state`);
    expect(state.values.items ?? []).not.toContain("step2");
    const row = page.getByRole("table", { name: "Runs" }).locator(`tr[data-run-id="${runId}"]`);
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("interrupted");
    expect(await page.getByRole("alert").count()).toBe(0);
  });
});
