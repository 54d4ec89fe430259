import { createMiddleware } from "hono/factory";
import { DomainError, invalid } from "../core/errors.ts";
import { MAX_URL_BYTES } from "../core/limits.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Checks on the URL before anything parses the query: its length (MAX_URL_BYTES, a JSON 414), and
 * query parameters whose percent-encoded bytes are not UTF-8 (a 422 naming the parameter). The URL
 * of a Request is already percent-encoded ASCII, so its length is its size in bytes.
 */
export const checkRequestUrl = createMiddleware<AppEnv>(async (c, next) => {
  const url = c.req.url;
  if (url.length > MAX_URL_BYTES)
    throw new DomainError(
      "uri_too_long",
      `The request URL is ${url.length} bytes; the limit is ${MAX_URL_BYTES} bytes`,
    );
  const name = malformedQueryParameter(url);
  if (name !== null)
    throw invalid([
      {
        type: "value_error",
        loc: ["query", name],
        msg: "is not valid UTF-8 once percent-decoded (a lone surrogate, say), so it would be read as another string",
      },
    ]);
  await next();
});

/**
 * The name of the first query parameter whose name or value does not decode to UTF-8 ("?" when the
 * name itself does not): decoding such bytes silently gives U+FFFD, so `?key=%ED%A0%80` would read
 * another key. Null when every parameter decodes; the common case costs one regex test.
 */
function malformedQueryParameter(url: string): string | null {
  const start = url.indexOf("?");
  if (start < 0) return null;
  const query = url.slice(start + 1).split("#", 1)[0];
  // Only a byte of 0x80 or more can be invalid UTF-8.
  if (!/%[89a-fA-F][0-9a-fA-F]/.test(query)) return null;
  for (const pair of query.split("&")) {
    const split = pair.indexOf("=");
    const name = split < 0 ? pair : pair.slice(0, split);
    const value = split < 0 ? "" : pair.slice(split + 1);
    if (!isUtf8(name)) return "?";
    if (!isUtf8(value)) return readableName(name);
  }
  return null;
}

/** A parameter's name as the client meant it, or as sent when it does not decode (a stray `%`). */
function readableName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

/** Whether a percent-encoded query component decodes to valid UTF-8. */
function isUtf8(component: string): boolean {
  const bytes: number[] = [];
  for (let i = 0; i < component.length; i++) {
    const hex = component[i] === "%" ? component.slice(i + 1, i + 3) : "";
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(component.charCodeAt(i) & 0x7f);
  }
  return isUtf8Bytes(bytes);
}

/**
 * Well-formed UTF-8 (RFC 3629): no stray continuation byte, no overlong form, no surrogate
 * (ED A0..BF), nothing above U+10FFFF. Checked by hand so that the rule does not depend on how
 * lenient the runtime's decoder is.
 */
function isUtf8Bytes(bytes: number[]): boolean {
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i];
    let extra: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead < 0x80) extra = 0;
    else if (lead >= 0xc2 && lead <= 0xdf) extra = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      extra = 2;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      extra = 3;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return false;
    for (let k = 1; k <= extra; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return false;
    }
    i += extra + 1;
  }
  return true;
}
