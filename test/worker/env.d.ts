declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** A secret: set for tests in vitest.config.ts, declared for the rest in src/env.d.ts. */
    EXPORT_ENCRYPTION_KEY?: string;
  }
}
interface Env {
  TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
}
