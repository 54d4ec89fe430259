/**
 * Peak JS heap of the Worker's isolate, read through workerd's V8 inspector (`npm start
 * --inspector-port`): `Runtime.getHeapUsage` every SAMPLE_MS. A Worker isolate has 128 MB; locally
 * the Durable Objects share the Worker's isolate, so this is the whole platform's heap.
 */

const SAMPLE_MS = 200;

export interface HeapSampler {
  /** Starts a new peak (the next scenario). */
  reset(): void;
  /** The largest used heap since the last reset, in MB; undefined before the first answer. */
  peakMb(): number | undefined;
  close(): void;
}

/** The inspector target of the Worker in workerd (Miniflare names it core:user:<worker name>). */
export function workerInspectorUrl(port: number, worker = "agent-platform"): string {
  return `ws://127.0.0.1:${port}/core:user:${worker}`;
}

export async function sampleIsolateHeap(url: string): Promise<HeapSampler> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`cannot reach the Worker's inspector at ${url}`)), {
      once: true,
    });
  });
  let peak: number | undefined;
  let id = 0;
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { result?: { usedSize?: number } };
    const used = message.result?.usedSize;
    if (typeof used === "number") peak = Math.max(peak ?? 0, used);
  });
  const poll = () => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ id: ++id, method: "Runtime.getHeapUsage" }));
  };
  poll();
  const timer = setInterval(poll, SAMPLE_MS);
  return {
    reset: () => {
      peak = undefined;
      poll();
    },
    peakMb: () => (peak === undefined ? undefined : peak / 1024 / 1024),
    close: () => {
      clearInterval(timer);
      socket.close();
    },
  };
}
