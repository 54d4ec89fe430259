// Verified API keys are cached per isolate (src/auth/api-key-auth.ts): authentication does not ask
// D1 on every request, a revoked key is refused at once where it was revoked, and a miss is never cached.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { API_KEY_CACHE_TTL_MS } from "../../src/core/limits.ts";
import { TtlCache } from "../../src/core/ttl-cache.ts";
import { D1_BOOKMARK_HEADER } from "../../src/db/client.ts";
import { hashApiKey } from "../../src/tenancy/keys.ts";
import { DEFAULT_ORGANIZATION_ID } from "../../src/tenancy/store.ts";
import { spiedD1 } from "./d1-spy.ts";
import { json } from "./helpers.ts";

interface CreatedKey {
  id: string;
  key: string;
}

/** The key checks among the statements: the lookup of a key by its hash. */
const KEY_LOOKUP = /^select .* from "api_keys" where "api_keys"."key_hash" = \?/i;

afterEach(() => vi.restoreAllMocks());

/** Moves the Worker's clock (Date.now) forward by `ms`. */
function later(ms: number): void {
  const now = Date.now();
  vi.spyOn(Date, "now").mockReturnValue(now + ms);
}

describe("the API-key cache", () => {
  it("checks a key against D1 once for many requests, through a D1 session", async () => {
    const d1 = spiedD1();
    const created = await json<CreatedKey>(await d1.fetch("/api/v1/api-key", { method: "POST", json: {} }));
    for (let i = 0; i < 20; i++) {
      expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    }
    const lookups = d1.matching(KEY_LOOKUP);
    // The bootstrap key is compared with the configured secret, not looked up: this is the new key's one check.
    expect(lookups).toHaveLength(1);
    expect(lookups.every((lookup) => lookup.via !== "primary")).toBe(true);
  });

  it("refuses a key revoked in this isolate at once, though it was cached", async () => {
    const d1 = spiedD1();
    const created = await json<CreatedKey>(await d1.fetch("/api/v1/api-key", { method: "POST", json: {} }));
    expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    const revoked = await d1.fetch(`/api/v1/api-key/${created.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    // Written through the request's D1 session: its bookmark (this isolate's next sessions start there) covers it.
    expect(d1.matching(/^update "api_keys" set "revoked_at"/i).map((update) => update.via)).toEqual([
      { session: expect.any(String) },
    ]);
    expect(revoked.headers.get(D1_BOOKMARK_HEADER)).toEqual(expect.any(String));
    const refused = await d1.fetch("/api/v1/orgs/current", { key: created.key });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: "API key has been revoked" });
  });

  it("checks a key again once its entry is older than the TTL: a key revoked elsewhere stops then", async () => {
    const d1 = spiedD1();
    const created = await json<CreatedKey>(await d1.fetch("/api/v1/api-key", { method: "POST", json: {} }));
    const hash = await hashApiKey(created.key);
    const lookupsOfKey = () => d1.matching(KEY_LOOKUP).length;
    expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    const afterFirst = lookupsOfKey();

    // Revoked by another isolate: this one still trusts its entry, for the TTL at most.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE key_hash = ?")
      .bind(new Date().toISOString(), hash)
      .run();
    later(API_KEY_CACHE_TTL_MS - 1_000);
    expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    expect(lookupsOfKey()).toBe(afterFirst);

    vi.restoreAllMocks();
    later(API_KEY_CACHE_TTL_MS + 1);
    const refused = await d1.fetch("/api/v1/orgs/current", { key: created.key });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: "API key has been revoked" });
    expect(lookupsOfKey()).toBe(afterFirst + 1);
  });

  it("never keeps a key past its own expiry", async () => {
    const d1 = spiedD1();
    const expiresAt = new Date(Date.now() + 10_000).toISOString();
    const created = await json<CreatedKey>(
      await d1.fetch("/api/v1/api-key", { method: "POST", json: { expires_at: expiresAt } }),
    );
    expect((await d1.fetch("/api/v1/orgs/current", { key: created.key })).status).toBe(200);
    later(11_000);
    const refused = await d1.fetch("/api/v1/orgs/current", { key: created.key });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: "API key has expired" });
  });

  it("does not cache a failure: a key refused a moment before it existed works once it does", async () => {
    const d1 = spiedD1();
    const key = `lgp_manual_${crypto.randomUUID().replaceAll("-", "")}`;
    const refused = await d1.fetch("/api/v1/orgs/current", { key });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: "Invalid API key" });
    // A miss on the replica is asked of the primary before it is refused.
    const misses = d1.matching(KEY_LOOKUP).slice(-2);
    expect(misses.map((miss) => miss.via === "primary")).toEqual([false, true]);

    await env.DB.prepare(
      "INSERT INTO api_keys (id, organization_id, role, key_hash, short_key, created_at) VALUES (?, ?, 'member', ?, 'lgp_...', ?)",
    )
      .bind(crypto.randomUUID(), DEFAULT_ORGANIZATION_ID, await hashApiKey(key), new Date().toISOString())
      .run();
    expect((await d1.fetch("/api/v1/orgs/current", { key })).status).toBe(200);
  });
});

describe("TtlCache", () => {
  it("drops the least recently used entry past its bound, and expired entries", () => {
    const cache = new TtlCache<number>(2);
    cache.set("a", 1, 100);
    cache.set("b", 2, 100);
    expect(cache.get("a", 0)).toBe(1);
    cache.set("c", 3, 100);
    expect(cache.size).toBe(2);
    expect(cache.get("b", 0)).toBeUndefined();
    expect(cache.get("a", 0)).toBe(1);
    expect(cache.get("c", 99)).toBe(3);
    expect(cache.get("c", 100)).toBeUndefined();
    cache.deleteWhere((key) => key === "a");
    expect(cache.size).toBe(0);
  });
});
