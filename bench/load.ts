/** The closed-loop load generator: N workers, each issuing the next operation when its last one ends. */
import { performance } from "node:perf_hooks";
import type { BenchContext, Scenario } from "./context.ts";
import type { Work } from "./prices.ts";
import { treeCpuMs } from "./proc-cpu.ts";
import { type LatencySummary, summarize } from "./stats.ts";
import { probeStorage } from "./storage.ts";
import { type ScenarioUnits, unitsPerOp } from "./usage.ts";

export interface LoadOptions {
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  /** Hard cap on measured operations, so a very fast target still ends with bounded memory. */
  maxOps: number;
  /** Aborted on Ctrl-C: workers finish their current operation and stop. */
  signal: AbortSignal;
}

export interface ScenarioResult extends LatencySummary {
  scenario: string;
  description: string;
  concurrency: number;
  /** Measured wall time in seconds (warm-up excluded). */
  elapsedS: number;
  /** The first error seen, to tell a broken scenario from a slow one. */
  firstError?: string;
  /** Set when setup or the preflight operation failed and no load was generated. */
  failed?: string;
  /** Figures a one-shot scenario reported. */
  notes?: string[];
  /**
   * Server CPU (the whole process tree under ctx.serverPid) over the measured window, per successful
   * operation; absent when the bench does not know the server's PID.
   */
  cpuMsPerOp?: number;
  /** The largest JS heap of the Worker isolate during the scenario (warm-up included), in MB; see isolate-heap.ts. */
  heapPeakMb?: number;
  /** What one operation is in the anchor's billing units (see Scenario.work). */
  work?: Work;
  /** The scenario's absolute targets (see Scenario.targets). */
  targets?: Scenario["targets"];
  /** What the server's usage meter counted over the measured window, per operation (the platform only). */
  units?: ScenarioUnits;
  /** In --compare runs: which server the row was measured on, and in which round. */
  server?: "platform" | "reference";
  round?: number;
}

/** Server CPU per operation between two treeCpuMs readings, or nothing when either is missing. */
function cpuPerOp(before: number | undefined, after: number | undefined, ops: number): { cpuMsPerOp?: number } {
  if (before === undefined || after === undefined || ops <= 0) return {};
  return { cpuMsPerOp: (after - before) / ops };
}

const readCpu = (ctx: BenchContext) => (ctx.serverPid ? treeCpuMs(ctx.serverPid) : undefined);

/**
 * Opens the usage meter's window (reset, and a reading of the stored bytes); its `close` reads what the
 * window's operations used. Nothing when the server has no meter.
 */
async function usageWindow(ctx: BenchContext) {
  const meter = ctx.usage;
  if (!meter) return undefined;
  await meter.reset();
  const storage = ctx.persistDir ? probeStorage(ctx.persistDir) : undefined;
  return {
    close: async (ops: number, cpuMsPerOp: number | undefined): Promise<{ units?: ScenarioUnits }> => ({
      units: unitsPerOp(await meter.read(), ops, cpuMsPerOp, storage?.after()),
    }),
  };
}

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Runs `scenario.run` from `concurrency` workers until `until` (a performance.now() deadline), the
 * operation budget or the abort signal. Latencies are only recorded when `record` is given.
 */
async function loop(
  scenario: Scenario,
  ctx: BenchContext,
  options: LoadOptions,
  until: number,
  record?: {
    latencies: Float64Array;
    count: number;
    errors: number;
    firstError?: string;
    marks: Record<string, number[]>;
  },
): Promise<void> {
  let issued = 0;
  const worker = async () => {
    while (!options.signal.aborted && performance.now() < until && issued < options.maxOps) {
      issued++;
      const start = performance.now();
      try {
        const marks = await scenario.run(ctx);
        if (record) {
          record.latencies[record.count++] = performance.now() - start;
          for (const [name, ms] of Object.entries(marks ?? {})) (record.marks[name] ??= []).push(ms);
        }
      } catch (error) {
        if (record) {
          record.errors++;
          record.firstError ??= describeError(error);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
}

/**
 * Runs a scenario under load. Returns its own row, plus one row per mark its operations reported
 * (e.g. `stream:first-event`, time from request to the first event).
 */
export async function runScenario(
  scenario: Scenario,
  ctx: BenchContext,
  options: LoadOptions,
): Promise<ScenarioResult[]> {
  const base = {
    scenario: scenario.name,
    description: scenario.description,
    concurrency: options.concurrency,
    ...(scenario.work ? { work: scenario.work } : {}),
    ...(scenario.targets ? { targets: scenario.targets } : {}),
  };
  if (scenario.once) return [await runOnce(scenario, ctx, base)];
  // One unmeasured operation first: a scenario that cannot succeed at all is reported as failed
  // instead of spinning through its whole budget of fast errors.
  try {
    await scenario.setup?.(ctx);
    await scenario.run(ctx);
  } catch (error) {
    return [{ ...base, ...summarize([], 0, 0), elapsedS: 0, failed: describeError(error), notes: [...ctx.notes] }];
  }

  // A scenario with a fixed number of operations (`ops`) has no warm-up and no deadline: exactly that
  // many operations, all started at once when its concurrency equals `ops`.
  const fixedOps = scenario.ops;
  if (fixedOps === undefined && options.warmupMs > 0)
    await loop(scenario, ctx, options, performance.now() + options.warmupMs);
  const measured = fixedOps === undefined ? options : { ...options, maxOps: fixedOps };

  const record = {
    latencies: new Float64Array(measured.maxOps),
    count: 0,
    errors: 0,
    firstError: undefined as string | undefined,
    marks: {} as Record<string, number[]>,
  };
  const window = await usageWindow(ctx);
  const cpuBefore = readCpu(ctx);
  const start = performance.now();
  await loop(scenario, ctx, measured, fixedOps === undefined ? start + options.durationMs : Infinity, record);
  const elapsedMs = performance.now() - start;
  const cpuAfter = readCpu(ctx);

  const summary = summarize(record.latencies.subarray(0, record.count), record.errors, elapsedMs);
  const cpu = cpuPerOp(cpuBefore, cpuAfter, summary.ops);
  const main = {
    ...base,
    ...summary,
    ...(ctx.notes.length ? { notes: [...ctx.notes] } : {}),
    elapsedS: elapsedMs / 1000,
    ...cpu,
    ...(record.firstError ? { firstError: record.firstError } : {}),
    ...(await window?.close(summary.ops, cpu.cpuMsPerOp)),
  };
  const marks = Object.entries(record.marks).map(([name, values]) => ({
    ...base,
    scenario: `${scenario.name}:${name}`,
    ...summarize(Float64Array.from(values), 0, elapsedMs),
    elapsedS: elapsedMs / 1000,
  }));
  return [main, ...marks];
}

/** A one-shot scenario: setup, then one measured operation; its figures are in `ctx.notes`. */
async function runOnce(
  scenario: Scenario,
  ctx: BenchContext,
  base: { scenario: string; description: string; concurrency: number; work?: Work; targets?: Scenario["targets"] },
): Promise<ScenarioResult> {
  try {
    await scenario.setup?.(ctx);
    const window = await usageWindow(ctx);
    const cpuBefore = readCpu(ctx);
    const start = performance.now();
    await scenario.run(ctx);
    const elapsedMs = performance.now() - start;
    const cpuAfter = readCpu(ctx);
    const cpu = cpuPerOp(cpuBefore, cpuAfter, 1);
    return {
      ...base,
      ...summarize(Float64Array.of(elapsedMs), 0, elapsedMs),
      elapsedS: elapsedMs / 1000,
      ...cpu,
      notes: [...ctx.notes],
      ...(await window?.close(1, cpu.cpuMsPerOp)),
    };
  } catch (error) {
    return { ...base, ...summarize([], 0, 0), elapsedS: 0, failed: describeError(error), notes: [...ctx.notes] };
  }
}
