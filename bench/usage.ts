/**
 * The platform's usage meter (src/limits-guard/usage.ts), read by the bench around each measured
 * window: reset before, read after, divided by the window's successful operations.
 */
import { USAGE_PATH, type UsageSnapshot } from "../src/limits-guard/usage.ts";
import { type Ceiling, ceilingOf, D1, placementOf } from "./ceilings.ts";
import type { UnitsPerOp } from "./prices.ts";
import type { PartStorage } from "./storage.ts";

export type { UsageSnapshot };

export interface UsageMeter {
  reset(): Promise<void>;
  read(): Promise<UsageSnapshot>;
}

/** The meter of the server at `baseUrl`, or undefined when it has none (limits guard off, not the platform). */
export async function connectMeter(baseUrl: string, apiKey: string | undefined): Promise<UsageMeter | undefined> {
  if (!apiKey) return undefined;
  const call = async (method: "GET" | "POST") => {
    const response = await fetch(`${baseUrl}${USAGE_PATH}`, {
      method,
      headers: { "X-Api-Key": apiKey },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`usage meter: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as UsageSnapshot;
  };
  try {
    await call("GET");
  } catch {
    return undefined;
  }
  return { reset: async () => void (await call("POST")), read: () => call("GET") };
}

/** What one operation of a scenario used, from the meter's counts over `ops` operations. */
export interface ScenarioUnits {
  /** The counts themselves, over the measured window. */
  window: UsageSnapshot;
  ops: number;
  /** Per operation. */
  perOp: UnitsPerOp & {
    /** Cron ticks and queue batches the Worker ran (requests too, but not the client's). */
    backgroundInvocations: number;
    objects: Record<string, { calls: number; rowsRead: number; rowsWritten: number }>;
    d1Reads: number;
    d1Writes: number;
  };
  /** Largest subrequests (and D1 queries) of one invocation in the window: a maximum, not per operation. */
  peak: UsageSnapshot["peak"];
  /** Bytes stored over the window by part, when the bench could read the server's files. */
  storage?: Record<string, PartStorage>;
}

export function unitsPerOp(
  window: UsageSnapshot,
  ops: number,
  cpuMsPerOp: number | undefined,
  storage?: Map<string, PartStorage>,
): ScenarioUnits {
  const per = (n: number) => (ops > 0 ? n / ops : Number.NaN);
  const objects = Object.fromEntries(
    Object.entries(window.durableObjects).map(([name, usage]) => [
      name,
      { calls: per(usage.calls), rowsRead: per(usage.rowsRead), rowsWritten: per(usage.rowsWritten) },
    ]),
  );
  const sum = (pick: (usage: UsageSnapshot["durableObjects"][string]) => number) =>
    Object.values(window.durableObjects).reduce((total, usage) => total + pick(usage), 0);
  const { worker, d1 } = window;
  return {
    window,
    ops,
    perOp: {
      workerRequests: per(worker.fetch + worker.scheduled + worker.queue),
      backgroundInvocations: per(worker.scheduled + worker.queue),
      ...(cpuMsPerOp !== undefined ? { cpuMs: cpuMsPerOp } : {}),
      objectRequests: per(sum((usage) => usage.calls)),
      objectRowsRead: per(sum((usage) => usage.rowsRead)),
      objectRowsWritten: per(sum((usage) => usage.rowsWritten)),
      objects,
      d1Reads: per(d1.reads),
      d1Writes: per(d1.writes),
      d1RowsRead: per(d1.rowsRead),
      d1RowsWritten: per(d1.rowsWritten),
      queueMessages: per(window.queue.messages),
      r2ClassA: per(window.r2.classA),
      r2ClassB: per(window.r2.classB),
    },
    peak: window.peak,
    ...(storage ? { storage: Object.fromEntries(storage) } : {}),
  };
}

/** The ceiling of every part one operation loads: each Durable Object class, D1, and D1's writes alone. */
export function ceilings(units: ScenarioUnits): Ceiling[] {
  // Per-entity objects (a thread) take only their own entity's operations: a window's growth is not theirs per op.
  const growth = (part: string) => {
    const stored = units.storage?.[part];
    return stored && placementOf(part).scope !== "entity" && stored.largestObjectGrownBytes > 0 && units.ops > 0
      ? { largestObjectBytesPerOp: stored.largestObjectGrownBytes / units.ops }
      : {};
  };
  const { perOp } = units;
  return [
    ...Object.entries(perOp.objects).map(([part, load]) => ceilingOf({ part, perOp: load.calls, ...growth(part) })),
    ceilingOf({ part: D1, perOp: perOp.d1Reads + perOp.d1Writes, ...growth(D1) }),
    // With read replication, reads leave the primary: its writes are the part no replica takes.
    ceilingOf({ part: `${D1} writes`, perOp: perOp.d1Writes }),
  ].filter((ceiling) => ceiling.perOp > 0 || ceiling.opsToFull !== undefined);
}
