import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { findChromium, SCREENSHOT_DIR } from "../../scripts/lib/chromium.ts";
import { sharedServer } from "../node/helpers.ts";

/** The deployment the browser opens: its URL and a key the tests call its API with. */
export interface ConsoleTarget {
  url: string;
  apiKey: string;
}

export interface ConsoleHarness {
  server: ConsoleTarget;
  browser: Browser;
  /** Opens a fresh tab (its own session storage) on a console path, e.g. "/console/". */
  open(path?: string, options?: { viewport?: { width: number; height: number } }): Promise<Page>;
  /** Signs in through the form with the server's development key (or the given credentials). */
  signIn(page: Page, credentials?: { apiKey?: string; bearerToken?: string }): Promise<void>;
  /** Saves a full-page screenshot as `<name>.png` and prints its path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The system Chromium, headless, on the server the browser files share (test/node/shared-server.ts), or
 * on `target` (another deployment the test started and stops itself).
 */
export async function startConsoleHarness(options: { target?: ConsoleTarget } = {}): Promise<ConsoleHarness> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error("Chromium is not installed (apt-get install chromium)");
  const server: ConsoleTarget = options.target ?? sharedServer();
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu"] });
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    server,
    browser,
    async open(path = "/console/", { viewport = { width: 1280, height: 860 } } = {}) {
      const context = await browser.newContext({ viewport, colorScheme: "light" });
      contexts.push(context);
      const page = await context.newPage();
      // An uncaught page error, or anything the Content-Security-Policy blocked, is a console bug:
      // printed at once, and it fails the file when the harness closes.
      page.on("pageerror", (error) => {
        problems.push(`page error on ${page.url()}: ${error.message}`);
        console.error(`page error: ${error.message}`);
      });
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
          problems.push(`blocked by the CSP on ${page.url()}: ${message.text()}`);
        }
      });
      await page.goto(`${server.url}${path}`);
      return page;
    },
    async signIn(page, credentials = { apiKey: server.apiKey }) {
      if (credentials.apiKey) await page.getByLabel("API key").fill(credentials.apiKey);
      if (credentials.bearerToken) await page.getByLabel(/Bearer token/).fill(credentials.bearerToken);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("navigation", { name: "Sections" }).waitFor();
    },
    async screenshot(page, name) {
      const file = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(`screenshot: ${file}`);
      return file;
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {});
      await browser.close();
      if (problems.length) throw new Error(`The console failed in the browser:\n${problems.join("\n")}`);
    },
  };
}
