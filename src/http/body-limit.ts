import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { tooLarge } from "../core/errors.ts";
import { maxBodyBytes } from "../core/limits.ts";
import type { AppEnv } from "./app-env.ts";

/** Routes that read a body themselves (multipart) size it by the same limit. */
export { maxBodyBytes };

const limiters = new Map<number, ReturnType<typeof bodyLimit>>();

/** Rejects bodies over `MAX_BODY_BYTES` with 413, by Content-Length or while streaming a chunked body. */
export const limitBodySize = createMiddleware<AppEnv>((c, next) => {
  const maxSize = maxBodyBytes(c.env);
  let limiter = limiters.get(maxSize);
  if (!limiter) {
    limiter = bodyLimit({
      maxSize,
      onError: () => {
        throw tooLarge(`Request body is larger than the limit of ${maxSize} bytes`);
      },
    });
    limiters.set(maxSize, limiter);
  }
  return limiter(c, next);
});
