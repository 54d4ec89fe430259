/**
 * Cooperative scheduling inside one isolate. A graph run is a long chain of promise continuations
 * that never reaches the event loop on its own; without these, one run's execution would hold back
 * every other request of the isolate, their first stream events included. On Cloudflare each thread's
 * Durable Object may share its isolate with others; locally every one of them shares the Worker's.
 */

/** Lets the isolate's pending I/O run before continuing. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Run setups (up to the run's first event) under way in this isolate, by start time. workerd may drop
 * the continuations of a request whose client went away, so a setup's `finally` is not guaranteed to
 * run: one older than STALE_SETUP_MS no longer counts.
 */
const setups = new Map<symbol, number>();
const STALE_SETUP_MS = 5_000;

/** A run execution waits at most this long at one yield point, so a flood of new runs cannot starve it. */
const MAX_DEFERRAL_MS = 1_000;
/**
 * How long a deferred execution waits before looking again (a promise resolved from another request's
 * context never settles in workerd, so it polls): first at the next turns of the event loop, since the
 * urgent work is often the very request that started the run, about to get its answer; then backing off.
 */
const POLL_DELAYS_MS = [0, 0, 1, 2, 4, 8, 16];
const MAX_POLL_MS = 32;

/**
 * Marks `work` as answering a client that waits for its first byte (creating a run): executions of
 * runs already started wait for it at their next yield point. `work` must never wait for a run's
 * execution itself.
 */
export async function urgently<T>(work: () => Promise<T>): Promise<T> {
  const token = Symbol("run setup");
  setups.set(token, Date.now());
  try {
    return await work();
  } finally {
    setups.delete(token);
  }
}

function urgentWorkPending(): boolean {
  const staleBefore = Date.now() - STALE_SETUP_MS;
  for (const [token, since] of setups) {
    if (since >= staleBefore) return true;
    setups.delete(token);
  }
  return false;
}

/**
 * A run execution's yield point: the event loop turns, and urgent work (see `urgently`) goes first.
 * An aborted `signal` (the run was cancelled) ends the wait at once.
 */
export async function yieldToUrgentWork(signal?: AbortSignal): Promise<void> {
  await yieldToEventLoop();
  const deadline = Date.now() + MAX_DEFERRAL_MS;
  for (let poll = 0; urgentWorkPending() && !signal?.aborted && Date.now() < deadline; poll++)
    await new Promise((resolve) => setTimeout(resolve, POLL_DELAYS_MS[poll] ?? MAX_POLL_MS));
}
