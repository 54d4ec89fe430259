import { type DependencyList, useCallback, useEffect, useRef, useState } from "react";

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change and on `reload()`. A reload keeps the last result on screen until the
 * new one arrives; new inputs (another thread, another run) drop it at once, so nothing of the previous
 * object is shown, or acted on, under the new one. A stale answer (inputs changed while it was in
 * flight) is dropped.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const depsRef = useRef<DependencyList>(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps decide when to reload.
  useEffect(() => {
    const controller = new AbortController();
    const inputsChanged =
      deps.length !== depsRef.current.length || deps.some((d, i) => !Object.is(d, depsRef.current[i]));
    depsRef.current = deps;
    if (inputsChanged) {
      setData(undefined);
      setError(undefined);
    }
    setLoading(true);
    loadRef
      .current(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      })
      .catch((reason: unknown) => {
        if (controller.signal.aborted) return;
        setError(reason instanceof Error ? reason : new Error(String(reason)));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [...deps, nonce]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** Re-runs `tick` every `ms` while `active`, skipping ticks while the tab is hidden. */
export function useInterval(tick: () => void, ms: number, active = true): void {
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => {
      if (!document.hidden) tickRef.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms, active]);
}
