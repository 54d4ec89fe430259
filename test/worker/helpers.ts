import { exports } from "cloudflare:workers";

export const BOOTSTRAP_KEY = "lgp_test_bootstrap_key";

/** Sends a request through the Worker's own fetch handler. */
export function call(
  path: string,
  init: RequestInit & { key?: string | null; json?: unknown } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? BOOTSTRAP_KEY : init.key;
  if (key) headers.set("X-Api-Key", key);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return exports.default.fetch(new Request(`http://platform.test${path}`, { ...init, headers, body }));
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
