// POST /api/v1/runs/multipart with bodies shaped like the langsmith JS SDK's (split fields, gzip).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "./helpers.ts";

function sdkRun(name: string, start: string) {
  const id = crypto.randomUUID();
  const dotted_order = `${start.replace(/[-:]/g, "").replace(".", "").replace("Z", "")}000Z${id}`;
  return { id, name, run_type: "chain", start_time: start, dotted_order, trace_id: id, session_name: "multipart" };
}

/** Parts the way the SDK writes them: JSON blobs with a length parameter, large fields split out. */
function form(parts: [string, unknown][]): FormData {
  const data = new FormData();
  for (const [name, value] of parts) {
    const body = JSON.stringify(value);
    data.append(name, new Blob([body], { type: `application/json; length=${body.length}` }));
  }
  return data;
}

async function send(data: FormData, gzip = false): Promise<Response> {
  const encoded = new Response(data);
  const headers: Record<string, string> = { "Content-Type": encoded.headers.get("content-type")! };
  let body: BodyInit = await encoded.arrayBuffer();
  if (gzip) {
    headers["Content-Encoding"] = "gzip";
    body = await new Response(new Blob([body]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
  }
  return call("/api/v1/runs/multipart", { method: "POST", body, headers });
}

describe("multipart ingestion", () => {
  it("advertises multipart and gzip in /api/v1/info without a key", async () => {
    const response = await call("/api/v1/info", { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      version: "0.16.0",
      batch_ingest_config: {
        use_multipart_endpoint: true,
        size_limit: 100,
        size_limit_bytes: Number(env.MAX_BODY_BYTES),
      },
      instance_flags: { gzip_body_enabled: true },
    });
  });

  it("assembles posts and patches from their parts, plain and gzip-compressed", async () => {
    for (const gzip of [false, true]) {
      const run = sdkRun(`mp-${gzip}`, "2026-11-20T10:00:00.000Z");
      const post = await send(
        form([
          [`post.${run.id}`, run],
          [`post.${run.id}.inputs`, { question: "hi" }],
          [`post.${run.id}.extra`, { metadata: { thread_id: "t-9" } }],
        ]),
        gzip,
      );
      expect(post.status).toBe(202);
      expect(await json(post)).toEqual({ accepted: 1, errors: [] });
      const patch = await send(
        form([
          [
            `patch.${run.id}`,
            {
              id: run.id,
              trace_id: run.id,
              dotted_order: run.dotted_order,
              end_time: Date.parse("2026-11-20T10:00:01Z"),
            },
          ],
          [`patch.${run.id}.outputs`, { answer: "hello" }],
        ]),
        gzip,
      );
      expect(patch.status).toBe(202);
      const stored = await json(await call(`/api/v1/runs/${run.id}`));
      expect(stored).toMatchObject({
        name: run.name,
        inputs: { question: "hi" },
        outputs: { answer: "hello" },
        thread_id: "t-9",
        status: "success",
        latency: 1,
      });
    }
  });

  it("stores the good runs and feedback and reports bad parts and unknown fields", async () => {
    const good = sdkRun("mp-good", "2026-11-20T11:00:00.000Z");
    const feedbackId = crypto.randomUUID();
    const bad = { ...sdkRun("mp-bad", "2026-11-20T11:00:00.000Z"), dotted_order: "nonsense" };
    const response = await send(
      form([
        [`post.${good.id}`, good],
        [`post.${bad.id}`, bad],
        [`post.${good.id}.secret`, 1],
        [`feedback.${feedbackId}`, { run_id: good.id, trace_id: good.id, key: "x", score: 1 }],
        [`feedback.${crypto.randomUUID()}`, { key: "x" }],
        [`post.${crypto.randomUUID()}.inputs`, {}],
      ]),
    );
    expect(response.status).toBe(202);
    const result = await json<{ accepted: number; errors: { run_id: string; detail: string }[] }>(response);
    expect(result.accepted).toBe(2);
    const details = result.errors.map((e) => e.detail).join("\n");
    expect(details).toMatch(/is not post.<id>/);
    expect(details).toMatch(/Feedback needs a run_id or a session_id/);
    expect(details).toMatch(/has no post\./);
    expect(details).toMatch(/dotted_order segment 1/);
    const run = await json<{ feedback_stats: unknown }>(await call(`/api/v1/runs/${good.id}`));
    expect(run.feedback_stats).toEqual({ x: { n: 1, avg: 1, stdev: 0, values: {} } });
    expect(await json(await call(`/api/v1/feedback/${feedbackId}`))).toMatchObject({
      run_id: good.id,
      key: "x",
      score: 1,
    });
  });

  it("lists a run with a field over MAX_TRACED_RUN_BYTES in errors with 413 and stores the others", async () => {
    // The workerd tests run with MAX_TRACED_RUN_BYTES = 32768 (vitest.config.ts).
    const good = sdkRun("mp-fits", "2026-11-20T13:00:00.000Z");
    const big = sdkRun("mp-too-big", "2026-11-20T13:00:00.000Z");
    const response = await send(
      form([
        [`post.${good.id}`, good],
        [`post.${good.id}.inputs`, { q: "small" }],
        [`post.${big.id}`, big],
        [`post.${big.id}.outputs`, { text: "y".repeat(50_000) }],
      ]),
      true,
    );
    expect(response.status).toBe(202);
    expect(await json(response)).toEqual({
      accepted: 1,
      errors: [
        {
          operation: "post",
          run_id: big.id,
          status: 413,
          detail: `Run ${big.id}: outputs is 50011 bytes of JSON; the limit for each field of a traced run is 32768 bytes (MAX_TRACED_RUN_BYTES)`,
        },
      ],
    });
    expect(await json(await call(`/api/v1/runs/${good.id}`))).toMatchObject({ inputs: { q: "small" } });
    expect((await call(`/api/v1/runs/${big.id}`)).status).toBe(404);
  });

  it("stores attachments with their run, lists them on the run and serves their bytes", async () => {
    const run = sdkRun("mp-attach", "2026-11-20T12:00:00.000Z");
    const data = form([[`post.${run.id}`, run]]);
    // Small: the test config caps bodies at 64 KiB (chunking of large files is tested on the store).
    const image = new Uint8Array(40_000).map((_, i) => i % 251);
    data.append(
      `attachment.${run.id}.screenshot`,
      new Blob([image], { type: `image/png; length=${image.byteLength}` }),
    );
    data.append(`attachment.${run.id}.notes`, new Blob(["hello"], { type: "text/plain; length=5" }));
    data.append(`attachment.${run.id}.bad.name`, new Blob(["x"], { type: "text/plain" }));
    data.append(`attachment.${run.id}.odd`, new Blob(["x"], { type: "text/html\r\nX-Evil: 1" }));
    data.append(`attachment.${crypto.randomUUID()}.orphan`, new Blob(["x"], { type: "text/plain" }));
    const response = await send(data);
    const result = await json<{ accepted: number; errors: { detail: string; status: number }[] }>(response);
    expect(result.accepted).toBe(4);
    expect(result.errors.map((e) => e.detail).join("\n")).toMatch(
      /a file whose name has no dots[\s\S]*run .* not found/,
    );
    expect(result.errors.find((e) => e.detail.includes("not found"))?.status).toBe(404);

    const stored = await json<{
      s3_urls: Record<string, { presigned_url: string; mime_type: string; size: number }>;
    }>(await call(`/api/v1/runs/${run.id}`));
    const listed = Object.entries(stored.s3_urls).map(([key, { mime_type, size }]) => ({ key, mime_type, size }));
    expect(listed).toEqual([
      { key: "attachment.notes", mime_type: "text/plain", size: 5 },
      // A declared type that is not a plain media type is not served back as one.
      { key: "attachment.odd", mime_type: "application/octet-stream", size: 1 },
      { key: "attachment.screenshot", mime_type: "image/png", size: image.byteLength },
    ]);
    const url = stored.s3_urls["attachment.screenshot"].presigned_url;
    expect(url).toMatch(new RegExp(`^http://platform.test/api/v1/attachments/[0-9a-f-]{36}/${run.id}/screenshot\\?`));
    const download = await call(url.replace("http://platform.test", ""), { key: null });
    expect(download.headers.get("content-type")).toBe("image/png");
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    expect(download.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''screenshot");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(image);
    expect(await (await call(`/api/v1/runs/${run.id}/attachments/notes`)).text()).toBe("hello");
    expect((await call(`/api/v1/runs/${run.id}/attachments/missing`)).status).toBe(404);
    // Another workspace cannot download it.
    const workspace = await json<{ id: string }>(
      await call("/api/v1/workspaces", { method: "POST", json: { display_name: "Attachment outsider" } }),
    );
    const outsider = (
      await json<{ key: string }>(
        await call("/api/v1/api-key", { method: "POST", json: { workspace_id: workspace.id } }),
      )
    ).key;
    expect((await call(`/api/v1/runs/${run.id}/attachments/notes`, { key: outsider })).status).toBe(404);

    // A later request may attach a file to a run already stored; the same name replaces it.
    const later = new FormData();
    later.append(`attachment.${run.id}.notes`, new Blob(["second"], { type: "text/markdown" }));
    expect(await json(await send(later))).toEqual({ accepted: 1, errors: [] });
    const notes = await call(`/api/v1/runs/${run.id}/attachments/notes`);
    expect([notes.headers.get("content-type"), await notes.text()]).toEqual(["text/markdown", "second"]);
  });

  it("refuses what is not multipart, unknown encodings and gzip bombs", async () => {
    expect((await call("/api/v1/runs/multipart", { method: "POST", json: {} })).status).toBe(415);
    const data = form([["post.x", {}]]);
    const encoded = new Response(data);
    const brotli = await call("/api/v1/runs/multipart", {
      method: "POST",
      body: await encoded.arrayBuffer(),
      headers: { "Content-Type": encoded.headers.get("content-type")!, "Content-Encoding": "br" },
    });
    expect(brotli.status).toBe(415);
    // 20 MB of spaces compresses to a few KB but inflates past the body limit.
    const boundary = "----bomb";
    const huge = `--${boundary}\r\nContent-Disposition: form-data; name="post.x"\r\nContent-Type: application/json\r\n\r\n${" ".repeat(20 * 1024 * 1024)}{}\r\n--${boundary}--\r\n`;
    const compressed = await new Response(
      new Blob([huge]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer();
    const bomb = await call("/api/v1/runs/multipart", {
      method: "POST",
      body: compressed,
      headers: { "Content-Type": `multipart/form-data; boundary=${boundary}`, "Content-Encoding": "gzip" },
    });
    expect(bomb.status).toBe(413);
    expect((await json<{ detail: string }>(bomb)).detail).toMatch(/Decompressed request body is larger/);
  });
});
