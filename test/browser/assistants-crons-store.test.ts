import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

let harness: ConsoleHarness;
beforeAll(async () => {
  harness = await startConsoleHarness();
});
afterAll(async () => {
  await harness?.close();
});

async function open(path: string, viewport?: { width: number; height: number }): Promise<Page> {
  const page = await harness.open(path, viewport ? { viewport } : undefined);
  await harness.signIn(page);
  return page;
}

const nodeIds = async (page: Page) =>
  Promise.all(
    (await page.locator("svg.graph-diagram [data-node-id]").all()).map((n) => n.getAttribute("data-node-id")),
  );

describe("assistant detail", () => {
  it("draws agent's graph: its nodes, and conditional edges dashed", async () => {
    const page = await open("/console/assistants");
    await page.getByRole("table", { name: "Assistants" }).getByRole("link", { name: "agent", exact: true }).click();
    await expect.poll(() => page.url()).toMatch(/\/console\/assistants\/[0-9a-f-]{36}$/);
    const diagram = page.getByRole("img", { name: /^Graph of / });
    await diagram.waitFor();
    expect((await nodeIds(page)).sort()).toEqual(["__end__", "__start__", "agent", "tools"]);
    const conditional = page.locator('[data-edge="agent->tools"]');
    expect(await conditional.getAttribute("data-conditional")).toBe("true");
    expect(await conditional.locator("path").getAttribute("stroke-dasharray")).toBeTruthy();
    expect(await page.locator('[data-edge="agent->__end__"]').getAttribute("data-conditional")).toBe("true");
    expect(await page.locator('[data-edge="__start__->agent"]').getAttribute("data-conditional")).toBe("false");
    // Every node lies inside the drawing.
    const box = (await diagram.boundingBox())!;
    for (const id of ["__start__", "agent", "tools", "__end__"]) {
      const node = (await page.locator(`[data-node-id="${id}"] rect`).first().boundingBox())!;
      expect(node.x).toBeGreaterThanOrEqual(box.x);
      expect(node.y + node.height).toBeLessThanOrEqual(box.y + box.height);
    }
    await harness.screenshot(page, "assistant-graph");

    await page.getByRole("tab", { name: "Schemas" }).click();
    const input = page.getByRole("region", { name: "Input schema" });
    await expect.poll(() => input.textContent()).toContain("messages");
    for (const name of ["Output schema", "State schema", "Config schema", "Context schema"])
      await page.getByRole("region", { name }).waitFor();

    await page.getByRole("tab", { name: "Versions" }).click();
    const versions = page.getByRole("table", { name: "Versions" });
    await expect.poll(() => versions.getByRole("row").count()).toBe(2);
    expect(await versions.textContent()).toContain("latest");

    await page.getByRole("tab", { name: "Configuration" }).click();
    expect(await page.getByRole("region", { name: "Metadata" }).textContent()).toContain("created_by");
  });

  it("marks nested's subgraph node, and groups xray subgraph nodes with their interrupt points", async () => {
    const page = await open("/console/assistants/nested", { width: 390, height: 844 });
    await page.getByRole("img", { name: /^Graph of / }).waitFor();
    expect((await nodeIds(page)).sort()).toEqual(["__end__", "__start__", "child", "observe"]);
    expect(await page.locator('[data-node-id="child"]').getAttribute("data-subgraph")).toBe("true");
    expect(await page.locator('[data-node-id="observe"]').getAttribute("data-subgraph")).toBeNull();
    await harness.screenshot(page, "assistant-graph-nested-phone");

    // LangGraph expands a subgraph with xray only when it has more than one node (nested's has one),
    // and no graph here is compiled with interrupt_before/after: this answer is what such a graph gives.
    await page.route("**/assistants/*/graph?xray=true", (route) =>
      route.fulfill({
        json: {
          nodes: [
            { id: "__start__", type: "schema", data: {} },
            { id: "observe", type: "runnable", data: {}, metadata: { __interrupt: "before" } },
            { id: "child:inner", type: "runnable", data: {} },
            { id: "child:review", type: "runnable", data: {}, metadata: { __interrupt: "after" } },
            { id: "__end__", type: "schema", data: {} },
          ],
          edges: [
            { source: "__start__", target: "observe", conditional: false },
            { source: "observe", target: "child:inner", conditional: false },
            { source: "child:inner", target: "child:review", conditional: true, data: "check" },
            { source: "child:review", target: "__end__", conditional: false },
          ],
        },
      }),
    );
    await page.getByLabel("Expand subgraphs (xray)").check();
    await page.locator('[data-group="child"]').waitFor();
    const group = (await page.locator('[data-group="child"] rect').boundingBox())!;
    for (const id of ["child:inner", "child:review"]) {
      const node = (await page.locator(`[data-node-id="${id}"] rect`).first().boundingBox())!;
      expect(node.x).toBeGreaterThan(group.x);
      expect(node.y).toBeGreaterThan(group.y);
      expect(node.x + node.width).toBeLessThan(group.x + group.width);
      expect(node.y + node.height).toBeLessThan(group.y + group.height);
    }
    const observe = (await page.locator('[data-node-id="observe"] rect').first().boundingBox())!;
    expect(observe.y + observe.height).toBeLessThan(group.y);
    expect(await page.locator('[data-node-id="observe"]').getAttribute("data-interrupt")).toBe("before");
    expect(await page.locator('[data-node-id="child:review"]').getAttribute("data-interrupt")).toBe("after");
    expect(await page.locator('[data-node-id="child:inner"] text').first().textContent()).toBe("inner");
    expect(await page.locator(".graph-edge-label").textContent()).toBe("check");
    await harness.screenshot(page, "assistant-graph-xray");
  });
});

describe("crons", () => {
  it("creates a cron, lists it with its next run time, and deletes it", async () => {
    const page = await open("/console/crons");
    const form = page.getByRole("form", { name: "New cron" });
    await expect.poll(() => form.getByLabel("Assistant").locator("option").count()).toBeGreaterThan(5);
    await form.getByLabel("Assistant").selectOption({ label: "echo" });
    await form.getByLabel("Schedule (cron, UTC)").fill("0 3 * * *");
    // The API takes an object as a cron's input: anything else is refused in the form, nothing is sent.
    await form.getByLabel("Input (JSON)").fill("[1, 2]");
    await form.getByRole("button", { name: "Create cron" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Input must be a JSON object");
    expect(await page.getByRole("table", { name: "Crons" }).count()).toBe(0);
    await form.getByLabel("Input (JSON)").fill('{"messages": [{"role": "user", "content": "nightly"}]}');
    await form.getByRole("button", { name: "Create cron" }).click();

    const table = page.getByRole("table", { name: "Crons" });
    await expect.poll(() => table.getByRole("row").count()).toBe(2);
    const row = table.getByRole("row").nth(1);
    expect(await row.textContent()).toContain("0 3 * * *");
    expect(await row.textContent()).toContain("nightly");
    const cronId = (await row.getAttribute("data-cron-id"))!;
    const cron = (await (
      await fetch(`${harness.server.url}/runs/crons/${cronId}`, { headers: { "X-Api-Key": harness.server.apiKey } })
    ).json()) as { next_run_date: string };
    expect(new Date(cron.next_run_date).getUTCHours()).toBe(3);
    const shown = await row.locator('[data-label="next-run"]').textContent();
    expect(shown).toBe(
      await page.evaluate(
        (date) =>
          new Date(date).toLocaleString(undefined, {
            year: "numeric",
            month: "short",
            day: "numeric",
            hour: "2-digit",
            minute: "2-digit",
            second: "2-digit",
          }),
        cron.next_run_date,
      ),
    );
    await harness.screenshot(page, "crons");

    // A bad schedule is refused with the API's reason.
    await form.getByLabel("Schedule (cron, UTC)").fill("not a schedule");
    await form.getByRole("button", { name: "Create cron" }).click();
    await form.getByRole("alert").waitFor();

    await row.getByRole("button", { name: `Delete cron ${cronId}` }).click();
    await page.getByText("No crons.").waitFor();
    const gone = await fetch(`${harness.server.url}/runs/crons/${cronId}`, {
      headers: { "X-Api-Key": harness.server.apiKey },
    });
    expect(gone.status).toBe(404);
  });
});

describe("store", () => {
  it("puts an item, browses to it by namespace, and deletes it", async () => {
    const page = await open("/console/store");
    const form = page.getByRole("form", { name: "Put item" });
    await form.getByLabel(/Namespace/).fill("users.alice.prefs");
    await form.getByLabel("Key").fill("theme");
    await form.getByLabel("Value (JSON object)").fill('{"color": "teal", "size": 3}');
    await form.getByRole("button", { name: "Put item" }).click();
    const tree = page.getByRole("navigation", { name: "Namespaces" });
    await tree.getByRole("button", { name: "prefs" }).waitFor();
    await form.getByLabel(/Namespace/).fill("users.bob");
    await form.getByLabel("Key").fill("note");
    await form.getByLabel("Value (JSON object)").fill('{"text": "hi"}');
    await form.getByRole("button", { name: "Put item" }).click();

    await tree.getByRole("button", { name: "bob" }).waitFor();
    await tree.getByRole("button", { name: "alice" }).click();
    const items = page.getByRole("region", { name: "Items" });
    await expect.poll(() => items.getByRole("article").count()).toBe(1);
    const item = items.getByRole("article", { name: "Item users.alice.prefs theme" });
    expect(await item.textContent()).toContain('"teal"');
    await harness.screenshot(page, "store");

    await item.getByRole("button", { name: "Delete item theme" }).click();
    await items.getByText("No items.").waitFor();
    await expect.poll(() => tree.getByRole("button", { name: "prefs" }).count()).toBe(0);
    const left = (await (
      await fetch(`${harness.server.url}/store/items/search`, {
        method: "POST",
        headers: { "X-Api-Key": harness.server.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ namespace_prefix: ["users"] }),
      })
    ).json()) as { items: { key: string }[] };
    expect(left.items.map((i) => i.key)).toEqual(["note"]);
  });
});
