// The limits guard is on in npm start's runtime (scripts/lib/local-runtime.ts): a request that
// Cloudflare would fail fails locally too, where workerd alone would have accepted it.
import { describe, expect, it } from "vitest";
import { sharedServer } from "./helpers.ts";

const server = sharedServer();

describe("npm start enforces Cloudflare's limits", () => {
  it("says so when it starts", () => {
    expect(server.startupOutput).toContain("Limits guard paid: requests fail past the Workers Paid plan's limits");
  });

  it("refuses to store a 2.1 MB value, which local SQLite alone would store", async () => {
    const headers = { "X-Api-Key": server.apiKey, "Content-Type": "application/json" };
    const item = { namespace: ["limits-guard"], key: "big" };
    const put = await fetch(`${server.url}/store/items`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ ...item, value: { text: "x".repeat(2_100_000) } }),
    });
    expect(put.status).toBeGreaterThanOrEqual(400);
    // Without the guard local SQLite stores it and answers 204 (the limits audit, E3). The store has
    // no cap of its own today, so the refusal is the guard's SQLITE_TOOBIG (a 500).
    await put.body?.cancel();
    const read = () => fetch(`${server.url}/store/items?namespace=limits-guard&key=big`, { headers });
    expect(await (await read()).json()).toBeNull();
    // Under the limit it is stored.
    const small = await fetch(`${server.url}/store/items`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ ...item, value: { text: "x".repeat(100_000) } }),
    });
    expect(small.status).toBe(204);
    expect(await (await read()).json()).toMatchObject({ key: "big", value: { text: "x".repeat(100_000) } });
  });
});
