import { applyD1Migrations, env } from "cloudflare:test";

// Every file starts from the migrated schema (applying is idempotent: files that share a runtime, see
// vitest.config.ts, apply it once).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
