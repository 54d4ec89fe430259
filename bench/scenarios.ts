/**
 * The scenario registry: every scenario the bench knows, in the order it runs them. A scenario is one
 * operation the load loop repeats (see context.ts); adding one is one entry in a `scenarios-*.ts` list.
 * Use the official SDK (`ctx.client`) wherever it has a call for the operation, and `ctx.request` only
 * for endpoints the SDK does not cover (the system and admin routes).
 */
import type { Scenario } from "./context.ts";
import { EXPORT_SCENARIOS } from "./scenarios-export.ts";
import { RUN_SCENARIOS } from "./scenarios-runs.ts";
import { STORE_SCENARIOS } from "./scenarios-store.ts";
import { SYSTEM_SCENARIOS } from "./scenarios-system.ts";
import { THREAD_SCENARIOS } from "./scenarios-threads.ts";
import { TRACING_SCENARIOS } from "./scenarios-tracing.ts";

export const SCENARIOS: readonly Scenario[] = [
  ...SYSTEM_SCENARIOS,
  ...THREAD_SCENARIOS,
  ...RUN_SCENARIOS,
  ...STORE_SCENARIOS,
  ...TRACING_SCENARIOS,
  ...EXPORT_SCENARIOS,
];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((scenario) => scenario.name === name);
}
