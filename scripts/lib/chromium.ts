import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the browser suite saves each flow's screenshot; `npm test` lists them after the suite. */
export const SCREENSHOT_DIR = fileURLToPath(new URL("../../.tmp/console-screenshots", import.meta.url));

/**
 * The system Chromium the browser suite drives (Debian's `chromium` package; nothing is downloaded):
 * $CHROMIUM_PATH when set, else the usual install paths. Undefined when none is installed.
 */
export function findChromium(): string | undefined {
  const candidates = [
    process.env.CHROMIUM_PATH,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
  ];
  return candidates.find((path): path is string => Boolean(path) && existsSync(path as string));
}

export const CHROMIUM_MISSING = "browser suite skipped: Chromium not installed (apt-get install chromium)";
