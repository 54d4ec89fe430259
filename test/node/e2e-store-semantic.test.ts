// Semantic memory end to end: a deployment whose langgraph.json declares store.index (a local hashing
// embedding, test/fixtures/semantic.ts) and store.ttl, and the owner-filtering auth of filter-auth
// (every item a user puts is stamped with its owner, and each user finds only their own). Through the
// official JS SDK the order and scores match LangGraph's InMemoryStore; a graph node recalls by
// meaning; the handler's filter holds for semantic search as for plain search (workspaces are apart:
// test/worker/store-semantic.test.ts); and the Python SDK reads the same scores when it is installed.
import { spawnSync } from "node:child_process";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIMS, FIELDS, FunctionEmbeddings, hashEmbed, PUTS } from "../fixtures/semantic.ts";
import { expectReferenceRanking } from "../fixtures/semantic-parity.ts";
import { startDeployment } from "./helpers.ts";

let deployment: Awaited<ReturnType<typeof startDeployment>>;
beforeAll(async () => {
  deployment = await startDeployment("test/node/fixtures/semantic-auth/langgraph.json");
}, 120_000);
afterAll(async () => {
  await deployment?.stop();
}, 60_000);

const asUser = (user: "alice" | "bob") =>
  new Client({ apiUrl: deployment.url, apiKey: null, defaultHeaders: { Authorization: `Bearer token-${user}` } });

/** The items in (namespace, key) order: equal scores keep put order in the reference and key order here. */
const SORTED = [...PUTS].sort((a, b) => {
  const [x, y] = [a.namespace.join("."), b.namespace.join(".")];
  return x === y ? (a.key < b.key ? -1 : 1) : x < y ? -1 : 1;
});

describe("semantic search through the JS SDK", () => {
  it("gives InMemoryStore's order and scores for the same items, per-item index options and queries", async () => {
    const client = asUser("alice");
    const run = crypto.randomUUID();
    const reference = new InMemoryStore({
      index: { dims: DIMS, embeddings: new FunctionEmbeddings(hashEmbed), fields: FIELDS },
    });
    for (const put of SORTED) {
      // The handler stamps the owner into what alice puts; the reference gets the same value.
      await reference.put(put.namespace, put.key, { ...put.value, owner: "alice" }, put.index);
      await client.store.putItem([run, ...put.namespace], put.key, put.value, { index: put.index });
    }
    const scored = await expectReferenceRanking(reference, async (q) => {
      const { items } = await client.store.searchItems([run, ...q.prefix], {
        query: q.query,
        filter: q.filter,
        offset: q.offset,
        limit: q.limit,
      });
      return items.map((item) => ({ ...item, namespace: item.namespace.slice(1) }));
    });
    expect(scored).toBeGreaterThan(20);
    // Without a query, a search lists (no scores), as before.
    const listed = await client.store.searchItems([run, "memories", "u1", "work"]);
    expect(listed.items.map((i) => [i.key, i.score])).toEqual([
      ["job", undefined],
      ["whole", undefined],
    ]);
  });

  it("answers 422 naming the path for a malformed index path, and stores nothing", async () => {
    const ns = ["bad-index", crypto.randomUUID()];
    const response = await fetch(`${deployment.url}/store/items`, {
      method: "PUT",
      headers: { Authorization: "Bearer token-alice", "content-type": "application/json" },
      body: JSON.stringify({ namespace: ns, key: "k", value: { a: [1] }, index: ["a[first]"] }),
    });
    expect(response.status).toBe(422);
    expect(JSON.stringify(await response.json())).toContain("a[first]");
    expect(await asUser("alice").store.getItem(ns, "k")).toBeNull();
  });
});

describe("semantic search from a graph node", () => {
  it("the memory graph recalls the user's memories closest in meaning, with scores", async () => {
    const client = asUser("alice");
    const user = `user-${crypto.randomUUID()}`;
    for (const [key, text] of [
      ["food", "likes spicy ramen and sushi"],
      ["pet", "has a dog named Rex"],
      ["work", "works as a nurse at night"],
    ])
      await client.store.putItem(["memories", user], key, { text });
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, "memory", {
      input: { messages: [{ role: "user", content: "what ramen should I eat tonight?" }] },
      config: { configurable: { user_id: user } },
    })) as { messages: { content: string }[] };
    const reply = state.messages.at(-1)!.content;
    const expected = (
      await client.store.searchItems(["memories", user], { query: "what ramen should I eat tonight?", limit: 3 })
    ).items;
    expect(reply).toContain("I have 4 memories for you.");
    // The node's ranking is the API's (the message itself was saved after it recalled).
    const recalled = expected.filter((i) => (i.score ?? 0) > 0 && i.value.text !== "what ramen should I eat tonight?");
    expect(recalled[0].value.text).toBe("likes spicy ramen and sushi");
    expect(reply).toContain(`Related: likes spicy ramen and sushi (${recalled[0].score!.toFixed(3)})`);
    expect(reply).not.toContain("dog named Rex");
    // What the node put was indexed: the next run recalls it first.
    const next = (await client.runs.wait(thread.thread_id, "memory", {
      input: { messages: [{ role: "user", content: "ramen tonight" }] },
      config: { configurable: { user_id: user } },
    })) as { messages: { content: string }[] };
    expect(next.messages.at(-1)!.content).toMatch(
      /^I have 5 memories for you\.\nRelated: what ramen should I eat tonight\? \(/,
    );
  });
});

describe("tenancy and authorization filters hold for semantic search", () => {
  it("a user finds only what their handler's filter lets them see, paged after filtering", async () => {
    const ns = ["shared", crypto.randomUUID()];
    const alice = asUser("alice");
    const bob = asUser("bob");
    for (let i = 0; i < 4; i++) {
      await alice.store.putItem(ns, `alice-${i}`, { text: `ramen ${"x ".repeat(i)}` });
      await bob.store.putItem(ns, `bob-${i}`, { text: `ramen ${"x ".repeat(i)}` });
    }
    const mine = await alice.store.searchItems(ns, { query: "ramen", limit: 10 });
    expect(mine.items.map((i) => i.key)).toEqual(["alice-0", "alice-1", "alice-2", "alice-3"]);
    expect(mine.items.every((i) => i.value.owner === "alice" && typeof i.score === "number")).toBe(true);
    const second = await bob.store.searchItems(ns, { query: "ramen", offset: 1, limit: 2 });
    expect(second.items.map((i) => i.key)).toEqual(["bob-1", "bob-2"]);
    // An unknown token is refused, not answered with anyone's items.
    const carol = new Client({
      apiUrl: deployment.url,
      apiKey: null,
      defaultHeaders: { Authorization: "Bearer nobody" },
    });
    await expect(carol.store.searchItems(ns, { query: "ramen" })).rejects.toThrow(/401/);
  });
});

/** A Python whose langgraph_sdk imports (`PYTHON`, else `python3`), or null. */
const PYTHON_WITH_SDK = (() => {
  const python = process.env.PYTHON ?? "python3";
  return spawnSync(python, ["-c", "import langgraph_sdk"], { encoding: "utf8" }).status === 0 ? python : null;
})();

describe("the Python SDK", () => {
  it.skipIf(!PYTHON_WITH_SDK)(
    `search_items with query reads the same ranking and scores${PYTHON_WITH_SDK ? "" : " (skipped: no python3 with langgraph_sdk; pip install langgraph-sdk, or set PYTHON)"}`,
    async () => {
      const client = asUser("alice");
      const ns = ["python", crypto.randomUUID()];
      for (const [key, text] of [
        ["a", "spicy ramen"],
        ["b", "dog walks"],
        ["c", "ramen shop downtown"],
      ])
        await client.store.putItem(ns, key, { text });
      const expected = (await client.store.searchItems(ns, { query: "ramen", limit: 10 })).items;
      const script = `
import json, sys
from langgraph_sdk import get_sync_client
client = get_sync_client(url=sys.argv[1], api_key=None, headers={"Authorization": "Bearer token-alice"})
client.store.put_item(tuple(json.loads(sys.argv[2])), "d", {"text": "ramen"}, index=False)
found = client.store.search_items(tuple(json.loads(sys.argv[2])), query="ramen", limit=10)
print(json.dumps([[i["key"], i.get("score")] for i in found["items"]]))
`;
      const run = spawnSync(PYTHON_WITH_SDK!, ["-c", script, deployment.url, JSON.stringify(ns)], {
        encoding: "utf8",
      });
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual([...expected.map((i) => [i.key, i.score]), ["d", null]]);
    },
  );
});
