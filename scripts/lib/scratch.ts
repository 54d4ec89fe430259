import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "./deployment.ts";

/** A scratch directory inside the project (so packages resolve from node_modules), removed by the caller. */
export function scratchDir(prefix: string): string {
  const root = join(PROJECT_ROOT, ".tmp");
  mkdirSync(root, { recursive: true });
  return mkdtempSync(join(root, `${prefix}-`));
}
