/**
 * Lets the isolate's pending I/O run before continuing. A graph run is a long chain of promise
 * continuations that never reaches the event loop on its own, so without this one run's execution
 * would hold back every other request of the isolate (their first stream events included) until it ends.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
