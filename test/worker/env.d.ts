declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** A secret: set for tests in vitest.config.ts, declared for the rest in src/env.d.ts. */
    EXPORT_ENCRYPTION_KEY?: string;
    /** The limits guard, "paid" in the tests (vitest.config.ts); declared for the rest in src/env.d.ts. */
    LIMITS_GUARD?: string;
    /** An R2 bucket the test config adds, for destinations with `r2_binding`. */
    EXPORT_TEST_BUCKET: R2Bucket;
  }
}
interface Env {
  TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
}
