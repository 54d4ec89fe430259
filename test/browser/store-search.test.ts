// The console's store search: ranked by meaning with each item's score on a deployment whose langgraph.json
// declares store.index (its own server: the shared one has no index), a text match with no score on the
// shared server; and a put from the console that sets index and ttl.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScoredItem } from "../../src/store/schemas.ts";
import { startDeployment, type TestServer } from "../node/helpers.ts";
import { type ConsoleHarness, type ConsoleTarget, startConsoleHarness } from "./harness.ts";

async function call(target: ConsoleTarget, method: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { "X-Api-Key": target.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

const put = (target: ConsoleTarget, body: Record<string, unknown>) => call(target, "PUT", "/store/items", body);

/** What the API answers the console's search (the page asks for one more than a page, 21). */
async function searchApi(target: ConsoleTarget, prefix: string[], query: string): Promise<ScoredItem[]> {
  const answer = (await call(target, "POST", "/store/items/search", {
    namespace_prefix: prefix,
    query,
    limit: 21,
  })) as { items: ScoredItem[] };
  return answer.items;
}

/** Each item card the page shows, in order: its label and the score it shows (null when none). */
async function shownItems(page: Page): Promise<{ label: string | null; score: string | null }[]> {
  const cards = await page.getByRole("region", { name: "Items" }).getByRole("article").all();
  return Promise.all(
    cards.map(async (card) => {
      const score = card.locator("[data-score]");
      return {
        label: await card.getAttribute("aria-label"),
        score: (await score.count()) ? await score.textContent() : null,
      };
    }),
  );
}

async function searchInConsole(page: Page, query: string, kind: RegExp): Promise<void> {
  const form = page.getByRole("form", { name: "Search items" });
  await form.getByLabel("Query").fill(query);
  await form.getByRole("button", { name: "Search" }).click();
  // The line appears once the answer to this query is on the page (a new query empties the list first).
  await expect.poll(() => page.getByRole("status", { name: "Search kind" }).textContent()).toMatch(kind);
}

const label = (item: ScoredItem) => `Item ${item.namespace.join(".")} ${item.key}`;

describe("with a store index: ranked by meaning, each item's score", () => {
  let deployment: TestServer;
  let harness: ConsoleHarness;

  beforeAll(async () => {
    deployment = await startDeployment("test/node/fixtures/semantic/langgraph.json");
    harness = await startConsoleHarness({ target: { url: deployment.url, apiKey: deployment.apiKey } });
  });
  afterAll(async () => {
    await harness?.close();
    await deployment?.stop();
  });

  it("puts with index and ttl from the form, searches by a query, and shows the API's order and scores", async () => {
    const target = harness.server;
    const namespace = ["memories", "ann"];
    await put(target, { namespace, key: "food", value: { text: "User likes spicy ramen and sushi" } });
    await put(target, { namespace, key: "pet", value: { text: "User has a dog named Rex" } });
    await put(target, { namespace, key: "chef", value: { text: "Works as a chef making spicy noodles" } });
    await put(target, { namespace: ["memories", "bob"], key: "food", value: { text: "Loves spicy ramen" } });

    const page = await harness.open("/console/store");
    await harness.signIn(page);
    const form = page.getByRole("form", { name: "Put item" });
    const puts: unknown[] = [];
    page.on("request", (request) => {
      if (request.method() === "PUT" && request.url().endsWith("/store/items")) puts.push(request.postDataJSON());
    });
    // Embedded at its title only (its text shares no word with the query), expiring in 30 minutes.
    await form.getByLabel(/Namespace/).fill("memories.ann");
    await form.getByLabel("Key").fill("recipe");
    await form.getByLabel("Value (JSON object)").fill('{"text": "gardening", "title": "Spicy ramen recipe"}');
    await form.getByLabel(/Index paths/).fill("title");
    await form.getByLabel("TTL (minutes)").fill("30");
    await form.getByRole("button", { name: "Put item" }).click();
    // The form empties the key once the put succeeded.
    await expect.poll(() => form.getByLabel("Key").inputValue()).toBe("");
    expect(puts).toHaveLength(1);
    // Not embedded at all: it matches the query's words, yet has no score and comes last.
    await form.getByLabel("Key").fill("playlist");
    await form.getByLabel("Value (JSON object)").fill('{"text": "spicy ramen playlist"}');
    await form.getByLabel(/Index paths/).fill("");
    await form.getByLabel("TTL (minutes)").fill("");
    await form.getByLabel(/Don't embed/).check();
    await form.getByRole("button", { name: "Put item" }).click();
    await expect.poll(() => form.getByLabel("Key").inputValue()).toBe("");
    expect(puts).toHaveLength(2);
    expect(puts[0]).toMatchObject({ key: "recipe", index: ["title"], ttl: 30 });
    expect(puts[1]).toMatchObject({ key: "playlist", index: false });
    expect(puts[1]).not.toHaveProperty("ttl");
    const tree = page.getByRole("navigation", { name: "Namespaces" });
    await tree.getByRole("button", { name: "ann" }).waitFor();
    // A TTL the API refuses: its detail, on the form, and nothing stored (the search below finds 6 items).
    await form.getByLabel(/Don't embed/).uncheck();
    await form.getByLabel("Key").fill("forever");
    await form.getByLabel("TTL (minutes)").fill("999999999");
    await form.getByRole("button", { name: "Put item" }).click();
    const refused = form.getByRole("alert");
    await expect.poll(() => refused.textContent()).toMatch(/HTTP 422 · .*ttl/);
    expect(await form.getByLabel("Key").inputValue()).toBe("forever");

    await searchInConsole(page, "spicy ramen", /^Ranked by meaning/);
    const answer = await searchApi(target, [], "spicy ramen");
    expect(answer.map(label).sort()).toEqual(
      ["ann chef", "ann food", "ann pet", "ann playlist", "ann recipe", "bob food"].map((k) => `Item memories.${k}`),
    );
    // The form's index took effect: the title was embedded (the text alone scores 0), the playlist not at all.
    expect(answer.find((item) => item.key === "recipe")?.score).toBeGreaterThan(0.5);
    expect(answer.at(-1)).toMatchObject({ key: "playlist" });
    expect(answer.at(-1)).not.toHaveProperty("score");
    expect(await shownItems(page)).toEqual(
      answer.map((item) => ({
        label: label(item),
        score: item.score === undefined ? null : item.score.toFixed(3),
      })),
    );
    await harness.screenshot(page, "store-search-ranked");

    // Under a chosen namespace the query still ranks, within it.
    await tree.getByRole("button", { name: "ann" }).click();
    const within = await searchApi(target, namespace, "spicy ramen");
    expect(within).toHaveLength(5);
    await expect
      .poll(() => shownItems(page))
      .toEqual(within.map((item) => ({ label: label(item), score: item.score?.toFixed(3) ?? null })));
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => page.getByRole("status", { name: "Search kind" }).count()).toBe(0);
    await expect.poll(async () => (await shownItems(page)).every((item) => item.score === null)).toBe(true);
  });
});

describe("without a store index: a text match, no scores", () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsoleHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it("shows the items whose value contains the query, in the API's order, and no score", async () => {
    const target = harness.server;
    // The shared server's store holds other files' items: a word of this run's own.
    const word = `quokka${Date.now().toString(36)}`;
    const namespace = ["console-search", word];
    await put(target, { namespace, key: "one", value: { text: `A ${word} in the sun` } });
    await put(target, { namespace, key: "two", value: { note: `${word.toUpperCase()} again` } });
    await put(target, { namespace, key: "other", value: { text: "nothing to see" } });

    const page = await harness.open("/console/store");
    await harness.signIn(page);
    await searchInConsole(page, word, /^Text match/);
    const answer = await searchApi(target, [], word);
    expect(answer.map((item) => item.key).sort()).toEqual(["one", "two"]);
    expect(answer.every((item) => item.score === undefined)).toBe(true);
    expect(await shownItems(page)).toEqual(answer.map((item) => ({ label: label(item), score: null })));
    expect(await page.getByRole("region", { name: "Items" }).locator("[data-score]").count()).toBe(0);
  });
});
