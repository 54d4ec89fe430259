/** Renders results as a plain-text table (right-aligned numbers, monospace friendly). */
import type { ScenarioResult } from "./load.ts";
import { fixed2 } from "./stats.ts";

const COLUMNS = ["scenario", "ops", "errors", "ops/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "cpu ms/op"] as const;

function row(result: ScenarioResult): string[] {
  if (result.failed) return [result.scenario, "-", "-", "-", "-", "-", "-", "-", "-"];
  return [
    result.scenario,
    String(result.ops),
    String(result.errors),
    fixed2(result.throughput),
    fixed2(result.p50),
    fixed2(result.p95),
    fixed2(result.p99),
    fixed2(result.max),
    // Server CPU is per operation of the scenario, so mark rows (e.g. `stream:first-event`) have none.
    fixed2(result.cpuMsPerOp ?? Number.NaN),
  ];
}

export function formatTable(results: readonly ScenarioResult[]): string {
  const rows = [[...COLUMNS], ...results.map(row)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((cells) => cells[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  const out = [line(rows[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)];

  // Failures and error samples go under the table, where they do not break the column layout.
  for (const result of results) {
    if (result.failed) out.push(`! ${result.scenario} failed before load: ${result.failed}`);
    else if (result.firstError) out.push(`! ${result.scenario}: ${result.errors} errors, first: ${result.firstError}`);
  }
  return out.join("\n");
}
