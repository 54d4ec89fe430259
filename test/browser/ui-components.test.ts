// Generative UI in a real browser: a host app on its own React shows UI messages through the official
// SDK's LoadExternalComponent, which fetches the fragment this platform answers (src/ui/service.ts) and
// loads the bundle this platform builds (scripts/lib/ui-bundle.ts) into a shadow root. The components
// must render, and update, on the host's single React and read the host's stream context.

import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../../scripts/lib/chromium.ts";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { bundleUi } from "../../scripts/lib/ui-bundle.ts";
import { UiCatalog } from "../../src/ui/service.ts";

const FIXTURES = join(PROJECT_ROOT, "test/fixtures/ui");
/** The page's origin: every request to it is answered below, so no server is needed. */
const ORIGIN = "http://lgui.test";

let dir: string;
let browser: Browser;
let hostScript: string;
let componentScript: string;
const fragments: { name: string; auth: string | null }[] = [];
const errors: string[] = [];

beforeAll(async () => {
  dir = scratchDir("ui-browser");
  await bundleUi({ "my-agent": "./cards.tsx" }, { configDir: FIXTURES, assetsDir: join(dir, "assets") });
  componentScript = readFileSync(join(dir, "assets/ui/my-agent/entrypoint.js"), "utf8");
  // The host app, bundled as an app would be: its own copy of React, react-dom and the SDK.
  const host = await build({
    entryPoints: [join(FIXTURES, "host.tsx")],
    bundle: true,
    write: false,
    platform: "browser",
    format: "iife",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  hostScript = host.outputFiles[0].text;
  const executablePath = findChromium();
  if (!executablePath) throw new Error("Chromium is not installed (apt-get install chromium)");
  browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu"] });
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A page on ORIGIN: the host page, the platform's fragment for POST /ui/my-agent, and the bundle. */
async function openHost(): Promise<Page> {
  const page = await browser.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
  const catalog = new UiCatalog([{ id: "my-agent", files: ["entrypoint.js"] }]);
  await page.route(`${ORIGIN}/**`, async (route) => {
    const request = route.request();
    const { pathname, host } = new URL(request.url());
    if (pathname === "/") {
      return route.fulfill({ contentType: "text/html", body: '<div id="root"></div><script src="/host.js"></script>' });
    }
    if (pathname === "/host.js") return route.fulfill({ contentType: "text/javascript", body: hostScript });
    if (request.method() === "POST" && pathname === "/ui/my-agent") {
      const { name } = request.postDataJSON() as { name: string };
      fragments.push({ name, auth: request.headers()["x-api-key"] ?? null });
      return route.fulfill({ contentType: "text/html", body: catalog.fragment("my-agent", name, host) ?? "" });
    }
    if (pathname === "/ui/my-agent/entrypoint.js") {
      return route.fulfill({ contentType: "text/javascript", body: componentScript });
    }
    return route.fulfill({ status: 404, body: "File not found" });
  });
  await page.goto(`${ORIGIN}/`);
  return page;
}

describe("a ui bundle in the host page, through the SDK's LoadExternalComponent", () => {
  it("renders each component on the host's React, updates it, and gives it the host's stream context", async () => {
    const page = await openHost();
    const visits = page.getByRole("button", { name: "Oslo: 2 visits" });
    await visits.waitFor();
    expect(await page.getByText("Bergen in Celsius for my-agent").count()).toBe(1);
    // The component's state lives in the host's renderer: a click re-renders it.
    await visits.click();
    await page.getByRole("button", { name: "Oslo: 3 visits" }).waitFor();

    // One React: the hooks the bundle was given are the host app's own.
    const same = await page.evaluate(() => {
      const globals = globalThis as unknown as {
        __hostReact: { useState: unknown };
        __lguiProbe: { useState: unknown };
      };
      return globals.__lguiProbe.useState === globals.__hostReact.useState;
    });
    expect(same).toBe(true);
    // Each component sits in the shadow root LoadExternalComponent made for it.
    const inShadow = await page.evaluate(() => {
      const { document } = globalThis as unknown as {
        document: { querySelectorAll(selector: string): Iterable<{ shadowRoot: unknown }> };
      };
      return Array.from(document.querySelectorAll("[id^=child-shadow-]"), (el) => el.shadowRoot !== null);
    });
    expect(inShadow).toEqual([true, true]);
    expect(fragments.map((f) => f.name).sort()).toEqual(["unit", "visits"]);
    expect(fragments.every((f) => f.auth === "test-key")).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
