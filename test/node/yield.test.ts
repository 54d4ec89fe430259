// Cooperative scheduling in one isolate (src/core/yield.ts): run setups go before other runs' execution.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { urgently, yieldToUrgentWork } from "../../src/core/yield.ts";

/** Ends the setups a test left open, so no test sees another's. */
const openSetups: (() => void)[] = [];
/** A run setup that lasts until the test ends it (or forever, as far as the code under test knows). */
function openSetup(): Promise<void> {
  return urgently(() => new Promise<void>((resolve) => openSetups.push(resolve)));
}

beforeEach(() => vi.useFakeTimers());
afterEach(async () => {
  for (const end of openSetups.splice(0)) end();
  await vi.advanceTimersByTimeAsync(0);
  vi.useRealTimers();
});

/** Resolves `promise` into a flag that tests can read while fake time advances. */
function track(promise: Promise<unknown>) {
  const state = { done: false };
  void promise.then(() => (state.done = true));
  return state;
}

describe("yieldToUrgentWork", () => {
  it("returns after one turn of the event loop when no run is being set up", async () => {
    const yielded = track(yieldToUrgentWork());
    await vi.advanceTimersByTimeAsync(0);
    expect(yielded.done).toBe(true);
  });

  it("waits while a run setup is under way, and goes on soon after it ends", async () => {
    let finishSetup!: () => void;
    const setup = urgently(() => new Promise<void>((resolve) => (finishSetup = resolve)));
    const yielded = track(yieldToUrgentWork());
    await vi.advanceTimersByTimeAsync(200);
    expect(yielded.done).toBe(false);
    finishSetup();
    await setup;
    await vi.advanceTimersByTimeAsync(40);
    expect(yielded.done).toBe(true);
  });

  it("waits at most a second at one yield point, so new runs cannot starve one already running", async () => {
    void openSetup();
    const yielded = track(yieldToUrgentWork());
    await vi.advanceTimersByTimeAsync(900);
    expect(yielded.done).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(yielded.done).toBe(true);
  });

  it("stops waiting as soon as the run is cancelled", async () => {
    void openSetup();
    const cancel = new AbortController();
    const yielded = track(yieldToUrgentWork(cancel.signal));
    await vi.advanceTimersByTimeAsync(100);
    expect(yielded.done).toBe(false);
    cancel.abort();
    await vi.advanceTimersByTimeAsync(40);
    expect(yielded.done).toBe(true);
  });

  it("ignores a setup that never ended (a request dropped with its client) once it is stale", async () => {
    // Not settled before the yield, like the continuation of a request workerd cancelled.
    void openSetup();
    await vi.advanceTimersByTimeAsync(6_000);
    const yielded = track(yieldToUrgentWork());
    await vi.advanceTimersByTimeAsync(40);
    expect(yielded.done).toBe(true);
  });

  it("still counts a setup that failed as ended", async () => {
    await expect(urgently(() => Promise.reject(new Error("no such assistant")))).rejects.toThrow("no such assistant");
    const yielded = track(yieldToUrgentWork());
    await vi.advanceTimersByTimeAsync(0);
    expect(yielded.done).toBe(true);
  });
});
