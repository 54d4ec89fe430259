/** Renders results as a plain-text table (right-aligned numbers, monospace friendly). */
import type { ScenarioResult } from "./load.ts";
import { fixed2 } from "./stats.ts";

const COLUMNS = [
  "scenario",
  "ops",
  "errors",
  "ops/s",
  "p50 ms",
  "p95 ms",
  "p99 ms",
  "max ms",
  "cpu ms/op",
  "heap MB",
] as const;

function row(result: ScenarioResult): string[] {
  if (result.failed) return [result.scenario, "-", "-", "-", "-", "-", "-", "-", "-", "-"];
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
    fixed2(result.heapPeakMb ?? Number.NaN),
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

const mean = (values: number[]): number => {
  const finite = values.filter(Number.isFinite);
  return finite.length ? finite.reduce((a, b) => a + b, 0) / finite.length : Number.NaN;
};
const ratio = (a: number, b: number): string => (Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}x` : "-");

const COMPARE_COLUMNS = [
  "scenario",
  "ops/s P",
  "ops/s R",
  "ops/s P÷R",
  "p50 ms P",
  "p50 ms R",
  "p99 ms P",
  "p99 ms R",
  "cpu ms/op P",
  "cpu ms/op R",
  "CPU P÷R",
  "heap MB P",
] as const;

/**
 * One table over a --compare run: per scenario row (and mark row, e.g. `streams-500:first-event`), the
 * mean over the rounds of each figure on the platform (P) and the reference (R), and the ratios.
 * Mark rows have latencies only. Failed runs are left out of the means and listed under the table.
 */
export function formatCompareTable(results: readonly ScenarioResult[]): string {
  const names = [...new Set(results.map((result) => result.scenario))];
  const pick = (name: string, server: ScenarioResult["server"]) =>
    results.filter((result) => result.scenario === name && result.server === server && !result.failed);
  const rows = names.map((name) => {
    const p = pick(name, "platform");
    const r = pick(name, "reference");
    const mark = name.includes(":");
    const tput = [mean(p.map((x) => x.throughput)), mean(r.map((x) => x.throughput))];
    const cpu = [mean(p.map((x) => x.cpuMsPerOp ?? Number.NaN)), mean(r.map((x) => x.cpuMsPerOp ?? Number.NaN))];
    return [
      name,
      mark ? "" : fixed2(tput[0]),
      mark ? "" : fixed2(tput[1]),
      mark ? "" : ratio(tput[0], tput[1]),
      fixed2(mean(p.map((x) => x.p50))),
      fixed2(mean(r.map((x) => x.p50))),
      fixed2(mean(p.map((x) => x.p99))),
      fixed2(mean(r.map((x) => x.p99))),
      mark ? "" : fixed2(cpu[0]),
      mark ? "" : fixed2(cpu[1]),
      mark ? "" : ratio(cpu[0], cpu[1]),
      mark ? "" : fixed2(Math.max(...p.map((x) => x.heapPeakMb ?? Number.NaN))),
    ];
  });
  const all = [[...COMPARE_COLUMNS], ...rows];
  const widths = COMPARE_COLUMNS.map((_, i) => Math.max(...all.map((cells) => cells[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  const out = [line(all[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
  out.push(
    "",
    "P = this platform (npm start), R = the reference (LangGraph.js dev server); figures are means over the rounds.",
    "ops/s P÷R: platform throughput ÷ reference throughput (above 1x: the platform is faster).",
    "CPU P÷R: platform server CPU per operation ÷ reference server CPU per operation (above 1x: the platform spends more).",
    "heap MB P: the largest JS heap of the platform's Worker isolate over the rounds (a Worker isolate has 128 MB).",
  );
  for (const result of results) {
    const where = `${result.scenario} (${result.server}, round ${result.round})`;
    if (result.failed) out.push(`! ${where} failed before load: ${result.failed}`);
    else if (result.firstError) out.push(`! ${where}: ${result.errors} errors, first: ${result.firstError}`);
  }
  return out.join("\n");
}
