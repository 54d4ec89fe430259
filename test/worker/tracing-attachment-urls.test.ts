// Pre-signed attachment URLs: what the Python SDK's read_run downloads with a plain requests.get, no API key.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ATTACHMENT_URL_TTL_SECONDS, attachmentS3Urls } from "../../src/tracing/attachment-urls.ts";
import { call, json } from "./helpers.ts";

type S3Urls = Record<string, { presigned_url: string; mime_type: string; size: number }>;

/** A run with two attachments, posted as the SDKs do (multipart), and its s3_urls as GET /runs/{id} returns them. */
async function runWithAttachments(): Promise<{ runId: string; s3_urls: S3Urls; workspaceId: string }> {
  const runId = crypto.randomUUID();
  const data = new FormData();
  const run = {
    id: runId,
    name: "with-files",
    run_type: "chain",
    start_time: "2026-11-21T09:00:00.000Z",
    trace_id: runId,
    dotted_order: `20261121T090000000000Z${runId}`,
    session_name: "signed-urls",
  };
  data.append(`post.${runId}`, new Blob([JSON.stringify(run)], { type: "application/json" }));
  data.append(`attachment.${runId}.photo`, new Blob([new Uint8Array([1, 2, 3, 250])], { type: "image/png" }));
  data.append(`attachment.${runId}.notes`, new Blob(["secret notes"], { type: "text/plain" }));
  const encoded = new Response(data);
  const posted = await call("/api/v1/runs/multipart", {
    method: "POST",
    body: await encoded.arrayBuffer(),
    headers: { "Content-Type": encoded.headers.get("content-type")! },
  });
  expect(await json(posted)).toEqual({ accepted: 3, errors: [] });
  const stored = await json<{ s3_urls: S3Urls; session_id: string }>(await call(`/api/v1/runs/${runId}`));
  const workspaceId = new URL(stored.s3_urls["attachment.photo"].presigned_url).pathname.split("/")[4];
  return { runId, s3_urls: stored.s3_urls, workspaceId };
}

/** A GET as `requests.get(presigned_url)` sends it: no API key. */
const anonymous = (url: string) => call(url.replace("http://platform.test", ""), { key: null });

describe("pre-signed attachment URLs", () => {
  it("download without an API key, scoped to the one attachment", async () => {
    const { runId, s3_urls } = await runWithAttachments();
    const photo = new URL(s3_urls["attachment.photo"].presigned_url);
    expect(photo.pathname).toMatch(new RegExp(`^/api/v1/attachments/[0-9a-f-]{36}/${runId}/photo$`));
    const expires = Number(photo.searchParams.get("expires"));
    expect(expires).toBeGreaterThan(Date.now() / 1000 + ATTACHMENT_URL_TTL_SECONDS - 60);
    expect(expires).toBeLessThanOrEqual(Date.now() / 1000 + ATTACHMENT_URL_TTL_SECONDS + 1);
    expect(photo.searchParams.get("signature")).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const download = await anonymous(photo.href);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/png");
    expect(download.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''photo");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3, 250]));
    expect(await (await anonymous(s3_urls["attachment.notes"].presigned_url)).text()).toBe("secret notes");
    expect(s3_urls["attachment.notes"]).toMatchObject({ mime_type: "text/plain", size: 12 });
  });

  it("refuses a tampered, borrowed or missing signature with 403 and a detail", async () => {
    const { runId, s3_urls, workspaceId } = await runWithAttachments();
    const photo = new URL(s3_urls["attachment.photo"].presigned_url);
    const refused = async (url: string, detail: RegExp) => {
      const response = await anonymous(url);
      expect(response.status, url).toBe(403);
      expect((await json<{ detail: string }>(response)).detail).toMatch(detail);
    };
    // Another attachment of the same run, with the photo's query.
    await refused(photo.href.replace("/photo?", "/notes?"), /signature does not match/);
    // Another run, or another workspace.
    await refused(photo.href.replace(runId, crypto.randomUUID()), /signature does not match/);
    await refused(photo.href.replace(workspaceId, crypto.randomUUID()), /signature does not match/);
    // A later expiry under the same signature.
    const extended = new URL(photo.href);
    extended.searchParams.set("expires", String(Number(photo.searchParams.get("expires")) + 3600));
    await refused(extended.href, /signature does not match/);
    // One character of the signature changed: the first, or the last to any other character (three
    // of which differ only in the 2 unused low bits, and decode to the same 32 bytes).
    const signature = photo.searchParams.get("signature")!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const withSignature = (text: string) => {
      const url = new URL(photo.href);
      url.searchParams.set("signature", text);
      return url.href;
    };
    await refused(
      withSignature(`${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`),
      /signature does not match/,
    );
    for (const last of alphabet.replace(signature.at(-1)!, ""))
      await refused(withSignature(`${signature.slice(0, -1)}${last}`), /signature does not match/);
    // The same expiry spelled with a leading zero, or with a sign.
    const expires = photo.searchParams.get("expires")!;
    for (const spelling of [`0${expires}`, `+${expires}`, `${expires}.0`]) {
      const url = new URL(photo.href);
      url.searchParams.set("expires", spelling);
      await refused(url.href, /signature does not match/);
    }
    // The same ids in upper case, or the name percent-encoded where it need not be.
    await refused(photo.href.replace(runId, runId.toUpperCase()), /signature does not match/);
    const lettered = "abcdef01-2345-4678-89ab-cdef01234567"; // the test workspace's id has no letters
    const [issued] = Object.values(
      await attachmentS3Urls(env, "http://platform.test", lettered, runId, [
        { name: "photo", mime_type: "image/png", size: 4 },
      ]),
    );
    await refused(issued.presigned_url.replace(lettered, lettered.toUpperCase()), /signature does not match/);
    await refused(photo.href.replace("/photo?", "/%70hoto?"), /signature does not match/);
    await refused(`${photo.origin}${photo.pathname}`, /not signed/);
    await refused(`${photo.href}x`, /signature does not match/);
    // The authenticated route still takes the API key, and only the key.
    expect((await call(`/api/v1/runs/${runId}/attachments/photo`)).status).toBe(200);
    expect((await call(`/api/v1/runs/${runId}/attachments/photo`, { key: null })).status).toBe(401);
  });

  it("refuses an expired URL with 403 saying when it expired", async () => {
    const { runId, workspaceId } = await runWithAttachments();
    const issued = Date.now() - (ATTACHMENT_URL_TTL_SECONDS + 5) * 1000;
    const urls = await attachmentS3Urls(
      env,
      "http://platform.test",
      workspaceId,
      runId,
      [{ name: "photo", mime_type: "image/png", size: 4 }],
      issued,
    );
    const response = await anonymous(urls["attachment.photo"].presigned_url);
    expect(response.status).toBe(403);
    expect((await json<{ detail: string }>(response)).detail).toMatch(/expired at .*read the run again/);
  });

  it("answers 404 for a signed URL whose attachment does not exist", async () => {
    const { runId, workspaceId } = await runWithAttachments();
    const urls = await attachmentS3Urls(env, "http://platform.test", workspaceId, runId, [
      { name: "gone", mime_type: "text/plain", size: 1 },
    ]);
    expect((await anonymous(urls["attachment.gone"].presigned_url)).status).toBe(404);
  });
});
