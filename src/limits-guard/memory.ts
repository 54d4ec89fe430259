/**
 * The part of an isolate's memory the Worker can measure: WebAssembly memories (parquet-wasm's, which
 * grows to its peak and never shrinks). workerd reports zeros for `process.memoryUsage()` and has no
 * heap statistics, so the JS heap cannot be checked; Wasm memory alone over 128 MB would end the
 * isolate on Cloudflare, so the guard fails the invocation that grew it there.
 */

/**
 * Workers limits: "Memory 128 MB" per isolate, WebAssembly memory included (read as MiB: V8's limit).
 * developers.cloudflare.com/workers/platform/limits/#memory
 */
export const MAX_ISOLATE_MEMORY_BYTES = 128 * 1024 * 1024;

const probes = new Map<string, () => number>();

/** Registers a measurable memory of the isolate (by name: registering again replaces it); returns its removal. */
export function registerMemoryProbe(name: string, bytes: () => number): () => void {
  probes.set(name, bytes);
  return () => {
    if (probes.get(name) === bytes) probes.delete(name);
  };
}

/** The error of an isolate whose measured memory is over the limit, or null. */
export function memoryError(): Error | null {
  let total = 0;
  const parts: string[] = [];
  for (const [name, bytes] of probes) {
    const size = bytes();
    total += size;
    if (size) parts.push(`${name} ${size} bytes`);
  }
  if (total <= MAX_ISOLATE_MEMORY_BYTES) return null;
  return new Error("Worker exceeded memory limit.", {
    cause: `limits guard: ${parts.join(", ")} measured, over the isolate's ${MAX_ISOLATE_MEMORY_BYTES} bytes`,
  });
}

/** `result` (a value or a promise), failed when the invocation left the isolate's memory over the limit. */
export function checkMemoryAfter<T>(result: T): T {
  if (result instanceof Promise) {
    return result.then((value) => {
      const error = memoryError();
      if (error) throw error;
      return value;
    }) as T;
  }
  const error = memoryError();
  if (error) throw error;
  return result;
}
