import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleHarness, startConsoleHarness } from "./harness.ts";

let harness: ConsoleHarness;
beforeAll(async () => {
  harness = await startConsoleHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe("flow 1: sign in", () => {
  it("refuses a wrong key with the API's reason, then signs in with a good one and lists the assistants", async () => {
    const page = await harness.open();
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Invalid API key");

    await harness.signIn(page);
    await expect.poll(() => page.url()).toMatch(/\/console\/assistants$/);
    const table = page.getByRole("table", { name: "Assistants" });
    await table.waitFor();
    await expect.poll(() => table.getByRole("row").count()).toBeGreaterThan(5);
    expect(await table.textContent()).toContain("agent");
    await harness.screenshot(page, "1-sign-in-assistants");
  });

  it("keeps the key for the tab only: a reload stays signed in, a new tab asks again, sign-out forgets it", async () => {
    const page = await harness.open();
    await harness.signIn(page);
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).waitFor();
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    const other = await harness.open();
    await other.getByRole("button", { name: "Sign in" }).waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("never puts an id from its own URL into an API path unless it is a well-formed id", async () => {
    const page = await harness.open();
    await harness.signIn(page);
    const requested: string[] = [];
    page.on("request", (request) => requested.push(new URL(request.url()).pathname));
    // A crafted link would otherwise make the signed-in tab call another API path with the key.
    await page.goto(`${harness.server.url}/console/chat/agent?thread=${encodeURIComponent("../../runs?x=")}`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Not a valid thread id");
    await page.goto(`${harness.server.url}/console/threads/..%2F..%2Fruns`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Not a valid id");
    // The page loads themselves are the console's; no API call went anywhere odd.
    const apiCalls = requested.filter((path) => !path.startsWith("/console/"));
    expect(apiCalls.filter((path) => path === "/runs" || path.includes("..") || path.includes("%2F"))).toEqual([]);
  });

  it("serves the console with a strict content security policy and deep links to its pages", async () => {
    const response = await fetch(`${harness.server.url}/console/threads`);
    expect(response.status).toBe(200);
    const policy = response.headers.get("content-security-policy") ?? "";
    for (const directive of ["script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
      expect(policy).toContain(directive);
    }
    expect(policy).not.toContain("unsafe-inline");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const html = await response.text();
    const script = /src="(\/console\/assets\/app-[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const bundle = await fetch(`${harness.server.url}${script}`);
    expect(bundle.headers.get("cache-control")).toContain("immutable");
    const missing = await fetch(`${harness.server.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
  });
});
