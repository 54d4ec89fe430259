// zstd multipart ingestion inside workerd, with bodies built byte for byte as the Python langsmith SDK
// writes them (_operations.encode_multipart_parts_and_context, one zstd frame per batch).

import { env } from "cloudflare:test";
import { zstdCompressSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

/** The Python SDK's boundary is `uuid4().hex`; each part ends with CRLF, the body with the closing boundary. */
function pythonMultipart(boundary: string, parts: [name: string, contentType: string, data: string][]): string {
  let body = "";
  for (const [name, contentType, data] of parts)
    body += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: ${contentType}\r\n\r\n${data}\r\n`;
  return `${body}--${boundary}--\r\n`;
}

const jsonPart = (name: string, value: unknown): [string, string, string] => {
  const data = JSON.stringify(value);
  return [name, `application/json; length=${new TextEncoder().encode(data).byteLength}`, data];
};

function sendZstd(boundary: string, compressed: Uint8Array, plainSize: number): Promise<Response> {
  return call("/api/v1/runs/multipart", {
    method: "POST",
    body: compressed,
    headers: {
      "Content-Type": `multipart/form-data; boundary=${boundary}`,
      "Content-Encoding": "zstd",
      "X-Pre-Compressed-Size": String(plainSize),
      "X-Post-Compressed-Size": String(compressed.byteLength),
    },
  });
}

describe("zstd multipart ingestion", () => {
  it("advertises zstd_compression_enabled, so the Python SDK compresses instead of warning", async () => {
    const info = await json<{ instance_flags: Record<string, boolean> }>(await call("/api/v1/info", { key: null }));
    expect(info.instance_flags).toEqual(
      expect.objectContaining({ gzip_body_enabled: true, zstd_compression_enabled: true }),
    );
  });

  it("stores the runs of a zstd-compressed batch as the Python SDK sends it", async () => {
    const id = crypto.randomUUID();
    const boundary = crypto.randomUUID().replaceAll("-", "");
    const run = {
      id,
      name: "python-zstd",
      run_type: "chain",
      start_time: "2026-11-22T08:30:00.123456+00:00",
      trace_id: id,
      dotted_order: `20261122T083000123456Z${id}`,
      session_name: "zstd-python",
    };
    const text = pythonMultipart(boundary, [
      jsonPart(`post.${id}`, run),
      jsonPart(`post.${id}.inputs`, { question: "compressed?" }),
      jsonPart(`post.${id}.outputs`, { answer: "yes" }),
      ["attachment." + id + ".notes", "text/plain; length=5", "hello"],
    ]);
    const plain = new TextEncoder().encode(text);
    const compressed = new Uint8Array(zstdCompressSync(plain));
    expect(compressed.byteLength).toBeLessThan(plain.byteLength);
    const response = await sendZstd(boundary, compressed, plain.byteLength);
    expect(response.status, await response.clone().text()).toBe(202);
    expect(await json(response)).toEqual({ accepted: 2, errors: [] });
    const stored = await json(await call(`/api/v1/runs/${id}`));
    expect(stored).toMatchObject({
      name: "python-zstd",
      inputs: { question: "compressed?" },
      outputs: { answer: "yes" },
      session_id: expect.any(String),
    });
    expect(await (await call(`/api/v1/runs/${id}/attachments/notes`)).text()).toBe("hello");
  });

  it("refuses a zstd bomb by its decompressed size (413) and a body that is not zstd (400)", async () => {
    const boundary = "zstdbomb";
    // Twice the body limit of spaces compresses to a few hundred bytes.
    const huge = `--${boundary}\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\n\r\n${" ".repeat(2 * Number(env.MAX_BODY_BYTES))}{}\r\n--${boundary}--\r\n`;
    const plain = new TextEncoder().encode(huge);
    const compressed = new Uint8Array(zstdCompressSync(plain));
    expect(compressed.byteLength).toBeLessThan(Number(env.MAX_BODY_BYTES) / 10);
    const bomb = await sendZstd(boundary, compressed, plain.byteLength);
    expect(bomb.status).toBe(413);
    expect((await json<{ detail: string }>(bomb)).detail).toMatch(/Decompressed request body is larger than the limit/);

    const garbage = await sendZstd(boundary, new TextEncoder().encode("not zstd at all"), 15);
    expect(garbage.status).toBe(400);
    expect((await json<{ detail: string }>(garbage)).detail).toMatch(/zstd body could not be decompressed/);
  });
});
