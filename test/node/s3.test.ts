// The export S3 client against a real S3 peer (wrangler's local R2 S3 endpoint, which verifies
// SigV4), and through a fault-injecting proxy for retries and AWS-style denials.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "../../scripts/lib/s3-peer/fault-proxy.ts";
import { type S3Peer, startS3Peer } from "../../scripts/lib/s3-peer/index.ts";
import { freePort } from "../../scripts/lib/wrangler.ts";
import { destinationErrorMessage } from "../../src/export/destination-errors.ts";
import { S3Client, type S3Credentials, S3Error, type S3Location } from "../../src/export/s3.ts";
import { uploadStream } from "../../src/export/upload.ts";

const MiB = 1024 * 1024;
const WRONG_SECRET = "wrong-secret-that-must-never-leak";

let peer: S3Peer;
let proxy: FaultProxy;
/** Every error the tests saw, checked at the end for leaked secrets. */
const errors: unknown[] = [];

beforeAll(async () => {
  peer = await startS3Peer();
  proxy = await startFaultProxy(peer.endpoint);
});

afterAll(async () => {
  await proxy?.stop();
  await peer?.stop();
});

async function failure(promise: Promise<unknown>): Promise<S3Error> {
  const error = await promise.then(
    () => new Error("expected the call to fail"),
    (error: unknown) => error,
  );
  errors.push(error);
  expect(error).toBeInstanceOf(S3Error);
  return error as S3Error;
}

const location = (overrides: Partial<S3Location> = {}): S3Location => ({
  bucket: peer.bucket,
  endpointUrl: peer.endpoint,
  region: null,
  addressingStyle: "auto",
  ...overrides,
});

/** Deterministic bytes that differ from part to part (a swapped part would not read back equal). */
function bytes(size: number): Uint8Array {
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + (i >>> 13)) & 0xff;
  return data;
}

function streamOf(data: Uint8Array, chunk = 64 * 1024 + 7): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= data.byteLength) return controller.close();
      controller.enqueue(data.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

describe("S3 client against the real peer", () => {
  it("puts, heads, gets, lists and deletes Hive-style keys", async () => {
    const client = peer.client();
    const prefix = "exports/ws 1/export_id=abc/";
    const keys = [
      `${prefix}year=2026/month=11/day=21/part-0.parquet`,
      `${prefix}year=2026/month=11/day=22/a+b (1).txt`,
    ];
    const put = await client.putObject(keys[0], bytes(1000), "application/vnd.apache.parquet");
    expect(put.etag).toMatch(/^"[0-9a-f]{32}"$/);
    await client.putObject(keys[1], "hello");

    expect(await client.headObject(keys[0])).toEqual({ size: 1000, etag: put.etag });
    expect(await client.getObject(keys[0])).toEqual(bytes(1000));
    expect(new TextDecoder().decode((await client.getObject(keys[1]))!)).toBe("hello");
    expect(await client.listObjects(prefix)).toEqual([
      { key: keys[0], size: 1000 },
      { key: keys[1], size: 5 },
    ]);

    await client.deleteObject(keys[0]);
    await client.deleteObject(keys[0]); // already gone: still fine
    expect(await client.headObject(keys[0])).toBeNull();
    expect(await client.getObject(keys[0])).toBeNull();
    expect((await client.listObjects(prefix)).map((object) => object.key)).toEqual([keys[1]]);
  });

  it("uploads a 12 MiB+ stream as 5/5/2+ MiB parts that read back byte-identical", async () => {
    const client = peer.client();
    const data = bytes(12 * MiB + 12_345);
    const key = "exports/big/year=2026/runs.parquet";
    expect(await uploadStream(client, key, streamOf(data), { partSize: 5 * MiB })).toEqual({
      bytes: data.byteLength,
      parts: 3,
    });
    const head = await client.headObject(key);
    expect(head?.size).toBe(data.byteLength);
    expect(head?.etag).toMatch(/-3"$/); // a multipart object's ETag counts its parts
    expect(Buffer.from((await client.getObject(key))!).equals(Buffer.from(data))).toBe(true);
  });

  it("uploads a stream that fits in one part with a single PUT", async () => {
    const client = new S3Client(location({ endpointUrl: proxy.url }), peer, { attempts: 1 });
    const before = proxy.requests().length;
    const data = bytes(5 * MiB); // exactly one part
    expect(await uploadStream(client, "exports/small/one.bin", streamOf(data), { partSize: 5 * MiB })).toEqual({
      bytes: data.byteLength,
      parts: 1,
    });
    expect(proxy.requests().slice(before)).toEqual([
      { method: "PUT", path: "/cdn-cgi/local/r2/s3/export-peer/exports/small/one.bin" },
    ]);
    expect((await client.headObject("exports/small/one.bin"))?.etag).not.toContain("-");
  });

  it("refuses parts under 5 MiB (EntityTooSmall), like R2", async () => {
    const client = peer.client();
    const key = "exports/too-small.bin";
    const uploadId = await client.createMultipartUpload(key);
    const parts = [
      { partNumber: 1, etag: await client.uploadPart(key, uploadId, 1, bytes(1024)) },
      { partNumber: 2, etag: await client.uploadPart(key, uploadId, 2, bytes(10)) },
    ];
    const error = await failure(client.completeMultipartUpload(key, uploadId, parts));
    expect([error.status, error.code, error.retryable]).toEqual([400, "EntityTooSmall", false]);
    await client.abortMultipartUpload(key, uploadId);
    expect(await client.headObject(key)).toBeNull();
  });

  it("a wrong secret is SignatureDoesNotMatch, reported as access denied", async () => {
    const client = new S3Client(location(), { accessKeyId: peer.accessKeyId, secretAccessKey: WRONG_SECRET });
    const error = await failure(client.putObject("exports/tmp/check.txt", "x"));
    expect([error.status, error.code, error.retryable]).toEqual([403, "SignatureDoesNotMatch", false]);
    expect(destinationErrorMessage(error)).toBe("Access denied (SignatureDoesNotMatch)");
  });

  it("an unknown key id does not exist", async () => {
    const client = new S3Client(location(), { accessKeyId: "no-such-key-id", secretAccessKey: WRONG_SECRET });
    const error = await failure(client.putObject("exports/tmp/check.txt", "x"));
    expect([error.status, error.code]).toEqual([401, "Unauthorized"]);
    expect(destinationErrorMessage(error)).toBe("Key ID you provided does not exist (Unauthorized)");
  });

  it("an unknown bucket is not valid", async () => {
    const client = new S3Client(location({ bucket: "no-such-bucket" }), peer);
    const error = await failure(client.putObject("exports/tmp/check.txt", "x"));
    expect([error.status, error.code]).toEqual([404, "NoSuchBucket"]);
    expect(destinationErrorMessage(error)).toBe("Bucket is not valid (NoSuchBucket)");
  });

  it("a closed port is an invalid endpoint, after retries", async () => {
    const retries: string[] = [];
    const port = await freePort();
    const client = new S3Client(location({ endpointUrl: `http://127.0.0.1:${port}` }), peer, {
      baseDelayMs: 1,
      onRetry: (_, error) => retries.push(error.code),
    });
    const error = await failure(client.putObject("exports/tmp/check.txt", "x"));
    expect([error.status, error.code, error.retryable]).toEqual([null, "NetworkError", true]);
    expect(error.message).toContain("ECONNREFUSED");
    expect(retries).toEqual(["NetworkError", "NetworkError"]);
    expect(destinationErrorMessage(error)).toBe("Invalid endpoint (NetworkError)");
  });

  it("an endpoint that is not an http(s) URL is an invalid endpoint", async () => {
    for (const endpointUrl of ["not a url", "ftp://example.com", `http://user:${WRONG_SECRET}@127.0.0.1`]) {
      const error = await failure(Promise.resolve().then(() => new S3Client(location({ endpointUrl }), peer)));
      expect(destinationErrorMessage(error)).toBe("Invalid endpoint (InvalidEndpoint)");
    }
  });
});

describe("S3 client through the fault proxy", () => {
  const viaProxy = (options: ConstructorParameters<typeof S3Client>[2] = {}) =>
    new S3Client(location({ endpointUrl: proxy.url }), peer, { baseDelayMs: 5, ...options });

  it("the peer still verifies signatures through the proxy (Host is forwarded unchanged)", async () => {
    await viaProxy().putObject("exports/proxied.txt", "ok");
    expect(await peer.client().getObject("exports/proxied.txt")).toEqual(new TextEncoder().encode("ok"));
    const forged = new S3Client(location({ endpointUrl: proxy.url }), {
      accessKeyId: peer.accessKeyId,
      secretAccessKey: WRONG_SECRET,
    });
    expect((await failure(forged.putObject("exports/proxied.txt", "no"))).code).toBe("SignatureDoesNotMatch");
  });

  it("retries two 503 SlowDown answers and then succeeds", async () => {
    const retries: { attempt: number; code: string; status: number | null }[] = [];
    const client = viaProxy({
      onRetry: (attempt, error) => retries.push({ attempt, code: error.code, status: error.status }),
    });
    proxy.failNext(2, { status: 503, code: "SlowDown" });
    const before = proxy.requests().length;
    expect((await client.putObject("exports/retry/year=2026/a.txt", "after two 503s")).etag).toBeTruthy();
    expect(retries).toEqual([
      { attempt: 1, code: "SlowDown", status: 503 },
      { attempt: 2, code: "SlowDown", status: 503 },
    ]);
    expect(proxy.requests().length - before).toBe(3);
    expect(await peer.client().headObject("exports/retry/year=2026/a.txt")).toMatchObject({ size: 14 });
  });

  it("gives up after `attempts` and throws the last error", async () => {
    const retries: number[] = [];
    proxy.failNext(3, { status: 500, code: "InternalError" });
    const error = await failure(
      viaProxy({ attempts: 3, onRetry: (attempt) => retries.push(attempt) }).putObject("exports/retry/b.txt", "x"),
    );
    expect([error.status, error.code, error.retryable]).toEqual([500, "InternalError", true]);
    expect(retries).toEqual([1, 2]);
    expect(destinationErrorMessage(error)).toBeNull();
  });

  it("retries a connection reset", async () => {
    const retries: string[] = [];
    proxy.failNext(1, "reset");
    const client = viaProxy({ onRetry: (_, error) => retries.push(error.code) });
    await client.putObject("exports/retry/reset.txt", "after a reset");
    expect(retries).toEqual(["NetworkError"]);
    expect(new TextDecoder().decode((await client.getObject("exports/retry/reset.txt"))!)).toBe("after a reset");
  });

  it("retries a failed part inside a multipart upload and completes it", async () => {
    const retries: string[] = [];
    const client = viaProxy({ onRetry: (_, error) => retries.push(error.code) });
    const data = bytes(5 * MiB + 3);
    const before = proxy.requests().length;
    proxy.failNext(1, { status: 503, code: "SlowDown" }, (request) => request.path.includes("partNumber=1&"));
    expect(await uploadStream(client, "exports/retry/multi.bin", streamOf(data), { partSize: 5 * MiB })).toEqual({
      bytes: data.byteLength,
      parts: 2,
    });
    const seen = proxy.requests().slice(before);
    expect(seen.map((request) => request.method)).toEqual(["POST", "PUT", "PUT", "PUT", "POST"]);
    expect(seen[0].path).toBe("/cdn-cgi/local/r2/s3/export-peer/exports/retry/multi.bin?uploads=");
    expect(retries).toEqual(["SlowDown"]);
    expect(Buffer.from((await client.getObject("exports/retry/multi.bin"))!).equals(Buffer.from(data))).toBe(true);
  });

  it("treats a 200 CompleteMultipartUpload answer with an <Error> body as an error (and retries InternalError)", async () => {
    const retries: { code: string; status: number | null }[] = [];
    const client = viaProxy({ onRetry: (_, error) => retries.push({ code: error.code, status: error.status }) });
    const data = bytes(5 * MiB + 3);
    const isComplete = (request: { method: string; path: string }) =>
      request.method === "POST" && request.path.includes("?uploadId=");
    proxy.failNext(1, { status: 200, code: "InternalError" }, isComplete);
    expect(await uploadStream(client, "exports/retry/complete.bin", streamOf(data), { partSize: 5 * MiB })).toEqual({
      bytes: data.byteLength,
      parts: 2,
    });
    expect(retries).toEqual([{ code: "InternalError", status: 200 }]);
    expect((await client.headObject("exports/retry/complete.bin"))?.size).toBe(data.byteLength);

    // A non-retryable error in a 200 body fails the upload, which is then aborted.
    proxy.failNext(1, { status: 200, code: "InvalidPart" }, isComplete);
    const before = proxy.requests().length;
    const error = await failure(
      uploadStream(client, "exports/retry/complete-bad.bin", streamOf(data), { partSize: 5 * MiB }),
    );
    expect([error.status, error.code, error.retryable]).toEqual([200, "InvalidPart", false]);
    expect(
      proxy
        .requests()
        .slice(before)
        .map((request) => request.method),
    ).toEqual(["POST", "PUT", "PUT", "POST", "DELETE"]);
    expect(await client.headObject("exports/retry/complete-bad.bin")).toBeNull();
  });

  it("aborts the multipart upload when a part keeps failing", async () => {
    const client = viaProxy({ attempts: 2 });
    const before = proxy.requests().length;
    proxy.failNext(2, { status: 503, code: "ServiceUnavailable" }, (request) => request.path.includes("partNumber=1&"));
    const error = await failure(
      uploadStream(client, "exports/retry/aborted.bin", streamOf(bytes(5 * MiB + 3)), { partSize: 5 * MiB }),
    );
    expect([error.status, error.code]).toEqual([503, "ServiceUnavailable"]);
    const seen = proxy.requests().slice(before);
    expect(seen.map((request) => request.method)).toEqual(["POST", "PUT", "PUT", "DELETE"]);
    expect(seen[3].path).toMatch(/\/exports\/retry\/aborted\.bin\?uploadId=/);
    expect(await peer.client().headObject("exports/retry/aborted.bin")).toBeNull();
  });

  it("a denied key is access denied, without retries", async () => {
    const retries: number[] = [];
    const denied = "denied-key-id";
    proxy.denyAccessKey(denied);
    const client = new S3Client(
      location({ endpointUrl: proxy.url }),
      { accessKeyId: denied, secretAccessKey: WRONG_SECRET },
      { onRetry: (attempt) => retries.push(attempt) },
    );
    const before = proxy.requests().length;
    const error = await failure(client.putObject("exports/tmp/check.txt", "x"));
    expect([error.status, error.code, error.retryable]).toEqual([403, "AccessDenied", false]);
    expect(destinationErrorMessage(error)).toBe("Access denied (AccessDenied)");
    expect(retries).toEqual([]);
    expect(proxy.requests().length - before).toBe(1);
  });

  it("records requests without headers", () => {
    const recorded = proxy.requests();
    expect(recorded.length).toBeGreaterThan(0);
    for (const request of recorded) expect(Object.keys(request).sort()).toEqual(["method", "path"]);
    expect(JSON.stringify(recorded)).not.toContain("Signature=");
  });
});

describe("addressing and signing (no network)", () => {
  /** A client whose fetch records the signed request and answers 200. */
  function recording(
    location: S3Location,
    credentials: S3Credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret-example" },
  ) {
    const seen: Request[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      seen.push(input as Request);
      return new Response(null, { status: 200, headers: { etag: '"abc"' } });
    };
    return { client: new S3Client(location, credentials, { fetch }), seen };
  }

  it("uses virtual-hosted AWS URLs by default, path style for dotted buckets and custom endpoints", async () => {
    const cases: [S3Location, string, string][] = [
      [
        { bucket: "lake", endpointUrl: null, region: null, addressingStyle: "auto" },
        "https://lake.s3.us-east-1.amazonaws.com/a/year%3D2026/x%20y.parquet",
        "/us-east-1/s3/",
      ],
      [
        { bucket: "my.lake", endpointUrl: null, region: "eu-west-1", addressingStyle: "auto" },
        "https://s3.eu-west-1.amazonaws.com/my.lake/a/year%3D2026/x%20y.parquet",
        "/eu-west-1/s3/",
      ],
      [
        {
          bucket: "lake",
          endpointUrl: "https://acct.r2.cloudflarestorage.com/",
          region: null,
          addressingStyle: "auto",
        },
        "https://acct.r2.cloudflarestorage.com/lake/a/year%3D2026/x%20y.parquet",
        "/auto/s3/",
      ],
      [
        { bucket: "lake", endpointUrl: "https://minio.example:9000/base", region: null, addressingStyle: "virtual" },
        "https://lake.minio.example:9000/base/a/year%3D2026/x%20y.parquet",
        "/us-east-1/s3/",
      ],
    ];
    for (const [location, url, scope] of cases) {
      const { client, seen } = recording(location);
      await client.putObject("a/year=2026/x y.parquet", "x");
      expect(seen[0].url).toBe(url);
      expect(seen[0].headers.get("authorization")).toContain(scope);
    }
  });

  it("sends a session token, and refuses keys the URL parser would rewrite", async () => {
    const { client, seen } = recording(location(), {
      accessKeyId: "AKID",
      secretAccessKey: "secret-example",
      sessionToken: "session-token-example",
    });
    await client.putObject("k", "x");
    expect(seen[0].headers.get("x-amz-security-token")).toBe("session-token-example");
    for (const key of ["", "a/../b", "./a"])
      expect((await failure(client.putObject(key, "x"))).code).toBe("InvalidObjectName");
  });

  it("times out a silent server and retries", async () => {
    const retries: string[] = [];
    const hang: typeof fetch = (_input, init) =>
      new Promise((_, reject) =>
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
      );
    const client = new S3Client(location(), peer, {
      fetch: hang,
      timeoutMs: 50,
      baseDelayMs: 1,
      onRetry: (_, error) => retries.push(error.code),
    });
    const error = await failure(client.putObject("k", "x"));
    expect([error.code, error.retryable]).toEqual(["Timeout", true]);
    expect(retries).toEqual(["Timeout", "Timeout"]);
    expect(destinationErrorMessage(error)).toBe("Invalid endpoint (Timeout)");
  });

  it("reads a non-S3 (HTML) answer as an invalid endpoint", async () => {
    const html: typeof fetch = async () =>
      new Response("<html><body>Welcome</body></html>", { status: 200, headers: { "content-type": "text/html" } });
    const error = await failure(new S3Client(location(), peer, { fetch: html }).putObject("k", "x"));
    expect(destinationErrorMessage(error)).toBe("Invalid endpoint (InvalidResponse)");
    const notFound: typeof fetch = async () =>
      new Response("<html>404</html>", { status: 404, headers: { "content-type": "text/html" } });
    const missing = await failure(new S3Client(location(), peer, { fetch: notFound }).putObject("k", "x"));
    expect([missing.status, missing.code]).toEqual([404, "InvalidResponse"]);
  });
});

describe("error messages", () => {
  it("never contain a secret", () => {
    expect(errors.length).toBeGreaterThan(10);
    for (const error of errors) {
      const text = `${(error as Error).message}\n${(error as Error).stack}`;
      expect(text).not.toContain(WRONG_SECRET);
      expect(text).not.toContain(peer.secretAccessKey);
      expect(text).not.toContain("session-token-example");
    }
  });

  it("maps AWS-style codes to the export's error classes", () => {
    const of = (code: string, status: number | null) =>
      destinationErrorMessage(new S3Error("x", { status, code, retryable: false }));
    expect(of("AccessDenied", 403)).toBe("Access denied (AccessDenied)");
    expect(of("AllAccessDisabled", 403)).toBe("Access denied (AllAccessDisabled)");
    expect(of("Forbidden", 403)).toBe("Access denied (Forbidden)");
    expect(of("InvalidAccessKeyId", 403)).toBe("Key ID you provided does not exist (InvalidAccessKeyId)");
    expect(of("InvalidBucketName", 400)).toBe("Bucket is not valid (InvalidBucketName)");
    expect(of("PermanentRedirect", 301)).toBe("Bucket is not valid (PermanentRedirect)");
    expect(of("AuthorizationHeaderMalformed", 400)).toBe("Bucket is not valid (AuthorizationHeaderMalformed)");
    expect(of("InvalidResponse", 403)).toBe("Invalid endpoint (InvalidResponse)");
    expect(of("SlowDown", 503)).toBeNull();
    expect(destinationErrorMessage(new Error("boom"))).toBeNull();
  });
});
