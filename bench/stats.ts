/** Pure statistics helpers for the benchmark: no I/O, so they are easy to reason about and test. */

/**
 * Nearest-rank percentile over ascending-sorted values: the smallest value such that at least
 * `p` percent of the values are <= it. Always returns an observed value (no interpolation).
 * NaN for an empty list.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[rank - 1];
}

export interface LatencySummary {
  /** Successful operations (the latencies summarised). */
  ops: number;
  errors: number;
  /** Successful operations per second of measured wall time. */
  throughput: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * Summarises one scenario. `latenciesMs` need not be sorted; a sorted copy is made so the caller's
 * buffer is left alone. `elapsedMs` is the measured wall time, including in-flight operations
 * that finished after the deadline.
 */
export function summarize(latenciesMs: ArrayLike<number>, errors: number, elapsedMs: number): LatencySummary {
  // A typed array sorts numerically (a plain Array#sort would compare as strings).
  const sorted = Float64Array.from(latenciesMs).sort();
  const ops = sorted.length;
  let total = 0;
  for (const value of sorted) total += value;
  return {
    ops,
    errors,
    throughput: elapsedMs > 0 ? ops / (elapsedMs / 1000) : 0,
    mean: ops ? total / ops : Number.NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: ops ? sorted[ops - 1] : Number.NaN,
  };
}

/** Fixed two decimals; "-" for NaN so empty scenarios read clearly in the table. */
export function fixed2(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : "-";
}
