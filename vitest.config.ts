// Unit and integration tests inside workerd (the Workers runtime), against the real bindings.

import { join } from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** Files that need a runtime of their own (see `projects` below). */
const FRESH_RUNTIME = [
  "test/worker/partition-migration.test.ts",
  "test/worker/partition-d1.test.ts",
  "test/worker/plans.test.ts",
  "test/worker/workspace-partition.test.ts",
  // Exact counts of the whole runtime's work (the usage meter's counters), which background work other
  // files leave behind (due crons, queued retries) would change.
  "test/worker/usage-meter.test.ts",
  // Which objects one thread create reaches: a cron or retry another file left would land in its window.
  "test/worker/hot-path-units.test.ts",
];

export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      remoteBindings: false,
      miniflare: {
        // A bucket for exports through an R2 binding (destinations with config.r2_binding).
        r2Buckets: ["EXPORT_TEST_BUCKET"],
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(join(import.meta.dirname, "migrations")),
          BOOTSTRAP_API_KEY: "lgp_test_bootstrap_key",
          MAX_BODY_BYTES: "65536",
          // Below the body limit, so a test can send a traced run over it.
          MAX_TRACED_RUN_BYTES: "32768",
          // Row bounds scaled down (metadata, config, context 8 KiB; store values, cron payloads
          // 32 KiB) so that tests reach them within the body limit.
          MAX_JSON_FIELD_BYTES: "8192",
          // A runs/query page of a few such runs, so a test can page over large runs by bytes.
          QUERY_PAGE_BYTES: "200000",
          EXPORT_ENCRYPTION_KEY: "test-export-encryption-key-0123456789",
          // The limits guard (src/limits-guard/): the tests enforce the Workers Paid limits local
          // workerd does not (2 MB rows, 32 function arguments, subrequests and D1 queries).
          LIMITS_GUARD: "paid",
        },
      },
    })),
  ],
  test: {
    setupFiles: ["./test/worker/setup.ts"],
    // The Worker's structured logs (expected warnings of failure-path tests) are shown for failing
    // tests only, so a passing run stays readable.
    silent: "passed-only",
    // Two runtimes side by side on a 2-core machine.
    maxWorkers: 2,
    projects: [
      // Most files share one runtime per worker (module state, D1 and objects carry over from file to
      // file): starting workerd per file cost about 200 s of a 280 s run. Their tests use ids of their
      // own, so what another file left behind does not show.
      {
        extends: true,
        test: { name: "workers", include: ["test/worker/**/*.test.ts"], exclude: FRESH_RUNTIME, isolate: false },
      },
      // These assert what a fresh deployment holds (D1 row counts, the partition migration's state
      // per isolate), so each gets a runtime of its own.
      { extends: true, test: { name: "workers-fresh", include: FRESH_RUNTIME, isolate: true } },
    ],
  },
});
