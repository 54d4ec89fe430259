const encoder = new TextEncoder();

/**
 * One server-sent event, the only SSE framer of the platform (runs, protocol v2, A2A): an `event:`
 * line when it is named, the `data:` line (one line: JSON), an `id:` line when it has one.
 */
export function sseFrame(event: string | undefined, data: string, id?: number | string): Uint8Array {
  const name = event === undefined ? "" : `event: ${event}\n`;
  return encoder.encode(`${name}data: ${data}\n${id === undefined ? "" : `id: ${id}\n`}\n`);
}
