/**
 * The tables of what operations cost in Cloudflare's units: the units counted per operation, their
 * price beside the anchor's, and the ceilings they put on each part (see usage.ts, prices.ts, ceilings.ts).
 */
import { type Ceiling, deploymentCeiling, LIMITS } from "./ceilings.ts";
import type { ScenarioResult } from "./load.ts";
import { ANCHOR, anchorCost, CLOUDFLARE, cloudflareCost, PRICES_READ, type Work } from "./prices.ts";
import { ceilings } from "./usage.ts";

/**
 * Below this per operation, a count is background work that happened to fall in the window (the minute
 * tick, a metrics flush every 5 s), not the operation's: the tables leave it out (the JSON keeps it).
 */
const NOISE = 0.005;

/** A figure for a table: up to 2 decimals when small, grouped digits when large. */
export function figure(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "-";
  if (!Number.isFinite(value)) return "unbounded";
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2).replace(/\.?0+$/, "") || "0";
}

function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((cells) => (cells[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? (cell ?? "").padEnd(widths[i]) : (cell ?? "").padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const metered = (results: readonly ScenarioResult[]) =>
  results.filter((result): result is ScenarioResult & Required<Pick<ScenarioResult, "units">> => !!result.units);

const pair = (a: number, b: number) => `${figure(a)}/${figure(b)}`;

/** Units per operation, one row per scenario and one indented row per Durable Object class it called. */
export function formatUnitsTable(results: readonly ScenarioResult[]): string {
  const rows: string[][] = [];
  for (const result of metered(results)) {
    const { perOp, peak } = result.units;
    rows.push([
      result.scenario,
      String(result.units.ops),
      figure(perOp.workerRequests),
      figure(perOp.objectRequests),
      pair(perOp.objectRowsRead, perOp.objectRowsWritten),
      pair(perOp.d1Reads, perOp.d1Writes),
      pair(perOp.d1RowsRead, perOp.d1RowsWritten),
      figure(perOp.queueMessages),
      pair(perOp.r2ClassA, perOp.r2ClassB),
      peak.subrequests ? `${peak.subrequests} ${peak.subrequestsEntry ?? ""}` : "0",
      figure(perOp.cpuMs),
    ]);
    for (const [name, object] of Object.entries(perOp.objects).sort()) {
      if (Math.max(object.calls, object.rowsRead, object.rowsWritten) < NOISE) continue;
      rows.push([`  ${name}`, "", "", figure(object.calls), pair(object.rowsRead, object.rowsWritten)]);
    }
  }
  return table(
    [
      "scenario",
      "ops",
      "req/op",
      "DO calls/op",
      "DO rows r/w",
      "D1 q r/w",
      "D1 rows r/w",
      "queue msg",
      "R2 A/B",
      "max subreq/inv",
      "cpu ms/op",
    ],
    rows,
  );
}

/** Per-operation figures in the work's own unit: per agent run or per traced run. */
function perWork(work: Work | undefined): { unit: string; per: number } | undefined {
  if (work?.agentRuns) return { unit: "run", per: work.agentRuns };
  if (work?.tracedRuns) return { unit: "traced run", per: work.tracedRuns };
  return undefined;
}

/** Dollars per million operations at Cloudflare's list prices, beside the anchor's price for the same work. */
export function formatCostTable(results: readonly ScenarioResult[]): string {
  const rows = metered(results).map((result) => {
    const cost = cloudflareCost(result.units.perOp);
    const anchor = anchorCost(result.work);
    const anchorFigure = anchor.perRun ?? anchor.perTrace;
    const { lines } = cost;
    const work = perWork(result.work);
    const rowsWritten = result.units.perOp.objectRowsWritten + result.units.perOp.d1RowsWritten;
    return [
      result.scenario,
      figure(cost.total),
      figure(lines["worker requests"] + lines["worker CPU"]),
      figure(lines["DO requests"]),
      figure(lines["DO rows written"] + lines["DO rows read"]),
      figure(lines["D1 rows written"] + lines["D1 rows read"]),
      figure(lines.queues + lines["R2 class A"] + lines["R2 class B"]),
      work ? `${figure(rowsWritten / work.per)}/${work.unit}` : figure(rowsWritten),
      anchor.perRun !== undefined ? figure(anchor.perRun) : "-",
      anchor.perNode !== undefined ? figure(anchor.perNode) : "-",
      anchor.perTrace !== undefined ? figure(anchor.perTrace) : "-",
      anchorFigure ? `${((cost.total / anchorFigure) * 100).toFixed(2)}%` : "-",
    ];
  });
  return [
    table(
      [
        "scenario",
        "$/M ops",
        "Workers",
        "DO req",
        "DO rows",
        "D1 rows",
        "Queues+R2",
        "rows written",
        "anchor $/M: per run",
        "per node",
        "per trace",
        "ours ÷ anchor",
      ],
      rows,
    ),
    `Dollars per million operations at Cloudflare's list prices (Workers Paid, beyond the monthly allowances; read ${PRICES_READ}, sources in bench/prices.ts):`,
    `requests $${CLOUDFLARE.workerRequests.usdPerMillion}/M, CPU $${CLOUDFLARE.workerCpuMs.usdPerMillion}/M ms (the cpu ms/op above: the whole local runtime, an upper bound),`,
    `DO requests $${CLOUDFLARE.objectRequests.usdPerMillion}/M, SQLite rows read $${CLOUDFLARE.objectRowsRead.usdPerMillion}/M and written $${CLOUDFLARE.objectRowsWritten.usdPerMillion}/M (D1 the same), queue messages x3 operations at $${CLOUDFLARE.queueOperations.usdPerMillion}/M, R2 A $${CLOUDFLARE.r2ClassA.usdPerMillion}/M, B $${CLOUDFLARE.r2ClassB.usdPerMillion}/M.`,
    `Not included: Durable Object duration ($${CLOUDFLARE.objectDuration.usdPerMillion}/M GB-s: $1.5625 per million operations per second an object stays active), storage, the $5/month plan.`,
    `Anchor: LangSmith Deployment $${ANCHOR.agentRun.usdPerMillion / 1e6} per agent run (${ANCHOR.agentRun.asOf}; a resume is a new run), LangGraph Platform Plus $${ANCHOR.nodeExecuted.usdPerMillion / 1e6} per node executed (${ANCHOR.nodeExecuted.asOf}),`,
    `LangSmith $${ANCHOR.baseTrace.usdPerMillion / 1e6} per base trace (${ANCHOR.baseTrace.asOf}); per million operations of the scenario (ingest: one trace of 100 runs per operation). Operations the anchor bills by uptime only show "-".`,
  ].join("\n");
}

function scopeText(ceiling: Ceiling): string {
  const { placement } = ceiling;
  const where = placement.scope === "deployment" ? "whole deployment" : `per ${placement.per}`;
  return placement.known ? `${placement.scope}: ${where}` : "unknown (as one for all)";
}

/** The ceiling table: each part's load per operation, where it lands, and the rate at its documented limit. */
export function formatCeilingTable(results: readonly ScenarioResult[]): string {
  const rows: string[][] = [];
  const summaries: string[] = [];
  for (const result of metered(results)) {
    const parts = ceilings(result.units).filter((c) => c.perOp >= NOISE || c.opsToFull !== undefined);
    const work = perWork(result.work);
    const inWork = (ops: number) =>
      work && Number.isFinite(ops) ? ` (${figure(ops * work.per)} ${work.unit}s/s)` : "";
    parts.forEach((ceiling, i) => {
      const stored = result.units.storage?.[ceiling.part.split(" ")[0]];
      const growth = ceiling.opsToFull !== undefined ? LIMITS.storageBytes / ceiling.opsToFull : undefined;
      rows.push([
        i === 0 ? result.scenario : "",
        ceiling.part,
        scopeText(ceiling),
        figure(ceiling.perOp),
        `${figure(ceiling.opsPerS)}${inWork(ceiling.opsPerS)}`,
        growth !== undefined
          ? `${figure(growth)} B`
          : stored?.newObjects && ceiling.placement.scope === "entity"
            ? `${figure(stored.grownBytes / stored.newObjects)} B/new object`
            : "-",
        ceiling.placement.splitsAtBytes
          ? `never: splits at ${figure(ceiling.placement.splitsAtBytes / 2 ** 30)} GiB`
          : ceiling.sustainedOpsPerS !== undefined
            ? `${figure(ceiling.sustainedOpsPerS)} ops/s sustained`
            : ceiling.opsToFull !== undefined
              ? `after ${figure(ceiling.opsToFull)} ops`
              : "-",
      ]);
    });
    const low = deploymentCeiling(parts);
    summaries.push(
      low
        ? `${result.scenario}: lowest deployment-wide ceiling ${figure(low.opsPerS)} ops/s${inWork(low.opsPerS)}, at ${low.part}`
        : `${result.scenario}: no deployment-wide part on its path`,
    );
  }
  return [
    table(["scenario", "part", "placement", "load/op", "ceiling ops/s", "largest object +/op", "10 GB reached"], rows),
    `load/op: Durable Object requests (calls, fetches, alarms) or D1 queries per operation. ceiling: the operation rate at which one object of the part`,
    `reaches ${LIMITS.objectRequestsPerS.toLocaleString("en-US")} requests/s (Durable Objects) or the database ${LIMITS.d1QueriesPerS.toLocaleString("en-US")} queries/s (D1 at 1 ms a query); "D1 writes" is the primary's share`,
    `if reads go to replicas. Per entity or tenant, the ceiling is that entity's or tenant's; deployment-wide parts cap everyone together.`,
    `largest object +/op: bytes its largest object gained per operation (SQLite live pages of the local state), 10 GB reached: after how many`,
    `operations (or, for an object that rolls over daily, the sustained rate that fills it within its day). Sources in bench/ceilings.ts.`,
    ...summaries,
  ].join("\n");
}
