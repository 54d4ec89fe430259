/**
 * An outside call given a time limit: `run`'s answer, or `onExpiry()`'s error once `ms` pass, when
 * `run`'s signal is aborted so that a fetch in flight is dropped. One home for the limits a hung
 * provider or binding must not exceed (a put, a search or a run would otherwise wait for it forever).
 */
export async function withDeadline<T>(
  ms: number,
  onExpiry: () => Error,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(onExpiry());
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** `ms` as a person reads it: whole seconds as `30 s`, anything else as `250 ms`. */
export const shownDuration = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
