// npm start applies the D1 migrations in its own process (scripts/lib/local-runtime.ts), keeping the
// record wrangler keeps, so `wrangler d1 migrations apply --local` and npm start agree on what is applied.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/lib/deployment.ts";
import { applyMigrations } from "../../scripts/lib/local-runtime.ts";
import { scratchDir } from "../../scripts/lib/scratch.ts";
import { applyLocalMigrations, WRANGLER_CONFIG } from "../../scripts/lib/wrangler.ts";

const state = scratchDir("migrations-state");
afterAll(() => rmSync(state, { recursive: true, force: true }));

describe("the local D1 migrations", () => {
  it("applies every migration once, in order, and wrangler then finds none to apply", async () => {
    const all = readdirSync(join(PROJECT_ROOT, "migrations"))
      .filter((file) => file.endsWith(".sql"))
      .sort();
    expect(await applyMigrations(WRANGLER_CONFIG, state)).toEqual(all);
    expect(await applyMigrations(WRANGLER_CONFIG, state)).toEqual([]);
    expect(await applyLocalMigrations(state)).toContain("No migrations to apply");
  });
});
