// A protocol v2 client for the end-to-end tests: commands over HTTP, the SSE event stream and the
// WebSocket, each collecting what arrives in an inbox a test waits on.
import { expect } from "vitest";

export interface ProtocolEvent {
  type: "event";
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: Record<string, unknown> };
}

export interface Envelope {
  type: "success" | "error";
  id: number | null;
  result?: Record<string, unknown>;
  error?: string;
  message?: string;
  meta?: { thread_id: string; applied_through_seq: number };
}

/** A live collection of messages, with a wait for one that matches. */
export class Inbox<T> {
  readonly items: T[] = [];
  #waiters: (() => void)[] = [];

  push(item: T): void {
    this.items.push(item);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async waitFor(predicate: (items: T[]) => boolean, timeoutMs = 20_000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.items)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; got ${JSON.stringify(this.items).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.items;
  }
}

export const rootLifecycle = (events: ProtocolEvent[]) =>
  events.filter((e) => e.method === "lifecycle" && e.params.namespace.length === 0).map((e) => e.params.data.event);

/**
 * Commands, event streams and sockets against `target()` (read at each call, so a test may point it at
 * a restarted server). `close()` ends every stream and socket it opened.
 */
export function protocolClient(target: () => { url: string; apiKey: string }) {
  const sockets: WebSocket[] = [];
  const aborts: AbortController[] = [];

  const headers = (key = target().apiKey) => ({ "X-Api-Key": key, "Content-Type": "application/json" });

  async function command(
    threadId: string,
    body: unknown,
    key?: string,
  ): Promise<{ status: number; body: Envelope & { detail?: unknown } }> {
    const response = await fetch(`${target().url}/threads/${threadId}/commands`, {
      method: "POST",
      headers: headers(key),
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Envelope & { detail?: unknown } };
  }

  /** Opens the SSE stream and collects its events (with each frame's `event:` and `id:`). */
  async function openEvents(threadId: string, filter: Record<string, unknown>, key?: string) {
    const abort = new AbortController();
    aborts.push(abort);
    const response = await fetch(`${target().url}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: headers(key),
      body: JSON.stringify(filter),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const inbox = new Inbox<ProtocolEvent & { frame: { event: string; id: string } }>();
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end = buffer.indexOf("\n\n");
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf("\n\n");
            const field = (name: string) =>
              block
                .split("\n")
                .find((line) => line.startsWith(`${name}: `))
                ?.slice(name.length + 2);
            const data = field("data");
            if (data === undefined) continue; // a heartbeat comment
            inbox.push({ ...(JSON.parse(data) as ProtocolEvent), frame: { event: field("event")!, id: field("id")! } });
          }
        }
      } catch {
        // aborted
      }
    })();
    return { inbox, close: () => abort.abort() };
  }

  async function openSocket(threadId: string, key = target().apiKey) {
    // Node's WebSocket (undici) takes headers as an extension; browsers cannot (see docs/protocol-v2.md).
    const ws = new WebSocket(`${target().url.replace("http", "ws")}/threads/${threadId}/stream/events`, {
      headers: { "X-Api-Key": key },
    } as unknown as string[]);
    sockets.push(ws);
    const inbox = new Inbox<ProtocolEvent | Envelope>();
    ws.addEventListener("message", (message) => inbox.push(JSON.parse(String(message.data))));
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve());
      ws.addEventListener("error", () => reject(new Error("socket failed to open")));
    });
    let next = 100;
    const send = async (method: string, params?: Record<string, unknown>) => {
      const id = next++;
      ws.send(JSON.stringify({ id, method, ...(params ? { params } : {}) }));
      const items = await inbox.waitFor((all) => all.some((m) => m.type !== "event" && m.id === id));
      return items.find((m) => m.type !== "event" && m.id === id) as Envelope;
    };
    return { ws, inbox, send };
  }

  const close = () => {
    for (const abort of aborts) abort.abort();
    for (const ws of sockets) ws.close();
  };
  return { headers, command, openEvents, openSocket, close };
}
