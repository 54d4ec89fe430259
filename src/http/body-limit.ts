import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { tooLarge } from "../core/errors.ts";
import { maxBodyBytes } from "../core/limits.ts";
import type { AppEnv } from "./app-env.ts";

/** Routes that read a body themselves (multipart) size it by the same limit. */
export { maxBodyBytes };

const limiters = new Map<number, ReturnType<typeof bodyLimit>>();

/**
 * Bodies up to this size are read to the end before a 413 goes out. workerd closes the connection
 * after answering a request whose body it has not read, and an HTTP client still sending then sees a
 * broken pipe instead of the 413. Larger bodies are not worth the reading: the connection just closes.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

async function drainUnread(request: Request): Promise<void> {
  const body = request.body;
  if (!body || body.locked || request.bodyUsed) return;
  if (Number(request.headers.get("content-length") ?? Number.POSITIVE_INFINITY) > DRAIN_LIMIT_BYTES) return;
  await body.pipeTo(new WritableStream()).catch(() => undefined);
}

/** Rejects bodies over `MAX_BODY_BYTES` with 413, by Content-Length or while streaming a chunked body. */
export const limitBodySize = createMiddleware<AppEnv>((c, next) => {
  const maxSize = maxBodyBytes(c.env);
  let limiter = limiters.get(maxSize);
  if (!limiter) {
    limiter = bodyLimit({
      maxSize,
      onError: async (c) => {
        await drainUnread(c.req.raw);
        throw tooLarge(`Request body is larger than the limit of ${maxSize} bytes`);
      },
    });
    limiters.set(maxSize, limiter);
  }
  return limiter(c, next);
});
