// Tests in Node: pure modules, the build step, and the end-to-end files that drive `npm start`'s runtime
// with the official clients. Files run two at a time: most of an end-to-end file's time is spent waiting
// on its server, and every server binds a port the system picks and builds into folders of its own.
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/node/sequencer.ts";

/** End-to-end files that share one server (test/node/shared-server.ts) because they need nothing of their own. */
const SHARED_SERVER = [
  "test/node/e2e.test.ts",
  "test/node/e2e-chat-examples.test.ts",
  "test/node/e2e-feedback.test.ts",
  "test/node/e2e-langsmith-client.test.ts",
  "test/node/e2e-protocols.test.ts",
  "test/node/e2e-protocol-v2.test.ts",
  "test/node/e2e-runs.test.ts",
  "test/node/e2e-tracing.test.ts",
  "test/node/e2e-ui.test.ts",
  "test/node/limits-guard.test.ts",
];

/** Real time is what they test (the minute tick, a server killed and restarted): `npm test -- --fast` skips them. */
const SLOW = ["test/node/**/*.slow.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: { name: "node", include: ["test/node/**/*.test.ts"], exclude: [...SHARED_SERVER, ...SLOW] },
      },
      {
        extends: true,
        test: { name: "e2e-shared", include: SHARED_SERVER, globalSetup: ["test/node/shared-server.ts"] },
      },
      { extends: true, test: { name: "slow", include: SLOW } },
    ],
  },
});
