// The console's browser suite: real Chromium (the system's, see scripts/lib/chromium.ts) against
// `npm start`'s server, one the files share (test/node/shared-server.ts). Two files at a time, each
// with its own browser.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    globalSetup: ["test/node/shared-server.ts"],
  },
});
