import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";
import { tooLarge } from "../core/errors.ts";

const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
const limiters = new Map<number, ReturnType<typeof bodyLimit>>();

/** Rejects bodies over `MAX_BODY_BYTES` with 413, by Content-Length or while streaming a chunked body. */
/** The configured `MAX_BODY_BYTES`, or 10 MiB. */
export function maxBodyBytes(env: Pick<Env, "MAX_BODY_BYTES">): number {
  const configured = Number(env.MAX_BODY_BYTES);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_MAX_BODY_BYTES;
}

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
