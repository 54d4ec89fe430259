/**
 * Exponential backoff, for every retry the platform makes: S3 calls, webhooks, export runs on the
 * queue, failed queue messages and thread index writes. Each caller keeps its own scale (base, cap,
 * jitter) as parameters; only the doubling is shared.
 */

export interface Backoff {
  /** The wait before the first retry, in the caller's unit (milliseconds or seconds). */
  base: number;
  /** The longest wait, whatever the step (none by default). */
  cap?: number;
  /** "equal": a random wait between half the delay and the delay, so retries of many callers spread. */
  jitter?: "none" | "equal";
}

/** The wait before retry `step` (0 for the first retry): `base` doubled `step` times, capped, jittered. */
export function backoff(step: number, { base, cap = Number.POSITIVE_INFINITY, jitter = "none" }: Backoff): number {
  const delay = Math.min(cap, base * 2 ** Math.max(0, step));
  return jitter === "equal" ? delay / 2 + (Math.random() * delay) / 2 : delay;
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
