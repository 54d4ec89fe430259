// Tests in Node: the build step, and the end-to-end suite that drives `wrangler dev` with the SDK.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each end-to-end file starts its own wrangler dev; one at a time keeps a 2-core machine responsive
    // and keeps `npm start -- --config` (which rewrites the generated registry) away from the others.
    fileParallelism: false,
  },
});
