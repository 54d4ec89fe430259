// The console's browser suite: real Chromium (the system's, see scripts/lib/chromium.ts) against
// `npm start`'s server. One file at a time: each starts its own server and browser.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
