import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { bodyEncoding, decodedBytes } from "../core/content-encoding.ts";
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

/** A JSON media type: `application/json`, or any `application/<x>+json`. */
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * A JSON body sent with a `Content-Encoding` is decoded here, once, for every JSON route: the
 * validators read the decoded bytes, held to MAX_BODY_BYTES after decoding (the limit above only
 * saw the compressed size). An encoding this server cannot decode is a 415 naming it, not
 * "malformed JSON". Multipart bodies decode themselves (src/tracing/multipart.ts).
 */
export const decodeJsonBody = createMiddleware<AppEnv>(async (c, next) => {
  const request = c.req.raw;
  const encoding = bodyEncoding(request);
  if (
    encoding === "identity" ||
    !request.body ||
    request.method === "GET" ||
    request.method === "HEAD" ||
    !JSON_TYPE.test(request.headers.get("content-type") ?? "")
  )
    return next();
  const bytes = await decodedBytes(request.body, encoding, maxBodyBytes(c.env));
  const headers = new Headers(request.headers);
  headers.delete("content-encoding");
  headers.set("content-length", String(bytes.byteLength));
  c.req.raw = new Request(request, { headers, body: bytes });
  return next();
});
