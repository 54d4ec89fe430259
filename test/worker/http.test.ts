import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/app-env.ts";
import { onError } from "../../src/http/error-handler.ts";
import { call, json } from "./helpers.ts";

type Detail = { detail: { type: string; loc: (string | number)[]; msg: string }[] };

describe("HTTP conventions", () => {
  it("answers unknown routes with a JSON 404, with or without a key", async () => {
    for (const key of [null, undefined]) {
      const response = await call("/no/such/route", { key });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(await response.json()).toEqual({ detail: "Not Found" });
    }
  });

  it("refuses a wrong key with 401 on any path, known or not, but not on the public ones", async () => {
    for (const path of ["/no/such/route", "/metrics", "/api/v1/workspaces"]) {
      const response = await call(path, { key: "lgp_wrong" });
      expect(response.status, path).toBe(401);
      expect(await response.json()).toEqual({ detail: "Invalid API key" });
    }
    expect((await call("/ok", { key: "lgp_wrong" })).status).toBe(200);
    expect((await call("/docs/swagger-ui.css", { key: "lgp_wrong" })).status).toBe(200);
  });

  it("reports an invalid body field with 422 and its location", async () => {
    const response = await call("/api/v1/workspaces", { method: "POST", json: { display_name: 42 } });
    expect(response.status).toBe(422);
    const body = await json<Detail>(response);
    expect(body.detail).toEqual([
      { type: "invalid_type", loc: ["body", "display_name"], msg: expect.stringContaining("expected string") },
    ]);
  });

  it("reports a missing required field with 422", async () => {
    const response = await call("/api/v1/workspaces", { method: "POST", json: {} });
    expect(response.status).toBe(422);
    expect((await json<Detail>(response)).detail[0].loc).toEqual(["body", "display_name"]);
  });

  it("reports malformed JSON with 422", async () => {
    const response = await call("/api/v1/workspaces", {
      method: "POST",
      body: '{"display_name": ',
      headers: { "Content-Type": "application/json" },
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: [{ type: "json_invalid", loc: ["body"], msg: "Malformed JSON in request body" }],
    });
  });

  it("reports invalid path and query parameters with 422", async () => {
    const path = await call("/api/v1/api-key/not-a-uuid", { method: "DELETE" });
    expect(path.status).toBe(422);
    expect((await json<Detail>(path)).detail[0].loc).toEqual(["path", "api_key_id"]);
    const query = await call("/api/v1/api-key?workspace_id=nope");
    expect(query.status).toBe(422);
    expect((await json<Detail>(query)).detail[0].loc).toEqual(["query", "workspace_id"]);
  });

  it("refuses a query parameter whose bytes are not UTF-8 with 422 naming it, and takes valid UTF-8", async () => {
    // %ED%A0%80 is a lone surrogate (U+D800) spelled in UTF-8: decoded loosely it reads as U+FFFD x3.
    for (const [query, name] of [
      ["namespace=a&key=%ED%A0%80", "key"],
      ["namespace=%ED%A0%80&key=k", "namespace"],
      ["namespace=a&key=%FF", "key"],
      // A name that does not percent-decode (a stray %) is named as sent.
      ["namespace=a&x%=%FF", "x%"],
    ]) {
      const response = await call(`/store/items?${query}`);
      expect(response.status, query).toBe(422);
      const body = await json<Detail>(response);
      expect(body.detail[0].loc, query).toEqual(["query", name]);
      expect(body.detail[0].msg).toContain("not valid UTF-8");
    }
    const valid = await call(`/store/items?namespace=a&key=${encodeURIComponent("✓ é 😀")}`);
    expect(valid.status).toBe(200);
  });

  it("rejects a body over MAX_BODY_BYTES with 413, by length or while streaming", async () => {
    const big = JSON.stringify({ display_name: "x".repeat(70_000) });
    const declared = await call("/api/v1/workspaces", {
      method: "POST",
      body: big,
      headers: { "Content-Type": "application/json" },
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ detail: "Request body is larger than the limit of 65536 bytes" });

    const chunks = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < chunks.length; i += 8192) controller.enqueue(chunks.slice(i, i + 8192));
        controller.close();
      },
    });
    const streamed = await call("/api/v1/workspaces", {
      method: "POST",
      body: stream,
      headers: { "Content-Type": "application/json" },
      // @ts-expect-error: workerd needs duplex for a streamed request body
      duplex: "half",
    });
    expect(streamed.status).toBe(413);
    // Nothing was created by the rejected requests.
    const names = (await json<{ display_name: string }[]>(await call("/api/v1/workspaces"))).map((w) => w.display_name);
    expect(names.some((n) => n.startsWith("xxx"))).toBe(false);
  });

  it("decodes gzip and deflate JSON bodies, holds the decoded size to MAX_BODY_BYTES, and refuses other encodings", async () => {
    const compressed = async (text: string, format: "gzip" | "deflate") =>
      new Uint8Array(
        await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream(format))).arrayBuffer(),
      );
    const put = (body: BodyInit, encoding?: string) =>
      call("/store/items", {
        method: "PUT",
        body,
        headers: { "Content-Type": "application/json", ...(encoding ? { "Content-Encoding": encoding } : {}) },
      });
    const item = (key: string) => ({ namespace: ["encoded"], key, value: { text: "é ✓ 😀", n: [1, 2, 3] } });
    const read = async (key: string) =>
      (await json<{ value: unknown } | null>(await call(`/store/items?namespace=encoded&key=${key}`)))?.value ?? null;

    expect((await put(JSON.stringify(item("plain")))).status).toBe(204);
    expect((await put(await compressed(JSON.stringify(item("gzip")), "gzip"), "gzip")).status).toBe(204);
    expect((await put(await compressed(JSON.stringify(item("deflate")), "deflate"), "deflate")).status).toBe(204);
    expect((await put(await compressed(JSON.stringify(item("upper")), "gzip"), " GZIP ")).status).toBe(204);
    expect(await read("gzip")).toEqual(await read("plain"));
    expect(await read("deflate")).toEqual(await read("plain"));
    expect(await read("upper")).toEqual(await read("plain"));

    // 1 MB of JSON that gzips to ~1 KB: under the limit as sent, over it once decoded.
    const bomb = await compressed(JSON.stringify({ ...item("bomb"), value: { pad: " ".repeat(1_000_000) } }), "gzip");
    expect(bomb.byteLength).toBeLessThan(65536);
    const inflated = await put(bomb, "gzip");
    expect(inflated.status).toBe(413);
    expect(await inflated.json()).toEqual({
      detail: "Decompressed request body is larger than the limit of 65536 bytes",
    });

    const compress = await put(JSON.stringify(item("compress")), "compress");
    expect(compress.status).toBe(415);
    expect(await compress.json()).toEqual({
      detail: "Content-Encoding compress is not supported; send gzip, deflate, zstd or no encoding",
    });
    const corrupt = await put("not gzip at all", "gzip");
    expect(corrupt.status).toBe(400);
    expect(((await corrupt.json()) as { detail: string }).detail).toMatch(/^The gzip body could not be decompressed/);
    expect(await read("bomb")).toBeNull();
    expect(await read("compress")).toBeNull();
  });

  it("answers 500 with a generic detail and never leaks the error", async () => {
    const app = new Hono<AppEnv>();
    app.get("/boom", () => {
      throw new Error("secret database password in message");
    });
    app.onError(onError);
    const response = await app.request("/boom");
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ detail: "Internal Server Error" });
    expect(text).not.toContain("secret");
  });

  it("answers CORS preflights before auth and exposes the SDK's headers", async () => {
    const preflight = await call("/api/v1/workspaces", {
      method: "OPTIONS",
      key: null,
      headers: { Origin: "https://studio.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const response = await call("/ok", { key: null, headers: { Origin: "https://studio.example" } });
    const exposed = response.headers.get("access-control-expose-headers") ?? "";
    for (const header of ["content-location", "location", "x-pagination-total", "x-pagination-next"]) {
      expect(exposed).toContain(header);
    }
  });
});
