/** One server-sent event as a test reads it. */
export interface SseEvent {
  event: string;
  data: unknown;
  id?: string;
}

/** Parses a whole SSE body (comments such as heartbeats are dropped). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split("\n\n")) {
    const lines = block.split("\n").filter((line) => line && !line.startsWith(":"));
    if (lines.length === 0) continue;
    const field = (name: string) => lines.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
    const data = field("data").join("\n");
    events.push({ event: field("event")[0] ?? "message", data: data ? JSON.parse(data) : null, id: field("id")[0] });
  }
  return events;
}
