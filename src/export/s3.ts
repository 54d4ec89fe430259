import { AwsClient } from "aws4fetch";
import { backoff, sleep } from "../core/retry.ts";

/**
 * A small S3 client for export destinations (AWS S3, R2, MinIO, GCS interop…): SigV4 from aws4fetch,
 * path- or virtual-hosted addressing, retries with backoff for transient answers, and error codes
 * read from the S3 XML body so destination checks can name what went wrong ("Access denied", ...).
 */

export type S3Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

export type S3Location = {
  bucket: string;
  /** null = AWS: https://s3.<region>.amazonaws.com */
  endpointUrl: string | null;
  /** Default "us-east-1" for AWS; "auto" when the endpoint is R2 (*.r2.cloudflarestorage.com) and none is given. */
  region: string | null;
  /** auto: virtual-hosted for AWS, path-style for custom endpoints. */
  addressingStyle: "auto" | "path" | "virtual";
};

export type S3ClientOptions = {
  fetch?: typeof fetch;
  /** Tries per request, the first included (default 3). */
  attempts?: number;
  /** First backoff delay; doubles per retry, with jitter (default 200 ms). */
  baseDelayMs?: number;
  /** Per attempt, including reading the answer (default 60 s: a part is several MiB). */
  timeoutMs?: number;
  /** Called after each failed attempt that will be retried. */
  onRetry?: (attempt: number, error: S3Error) => void;
};

/** `code` is the S3 error Code from the XML body, or NetworkError / Timeout / InvalidEndpoint / InvalidResponse. */
export class S3Error extends Error {
  readonly status: number | null;
  readonly code: string;
  readonly retryable: boolean;

  constructor(message: string, options: { status: number | null; code: string; retryable: boolean }) {
    super(message);
    this.name = "S3Error";
    this.status = options.status;
    this.code = options.code;
    this.retryable = options.retryable;
  }
}

/** Codes worth another try even when the status alone would not say so (RequestTimeout is a 400). */
const RETRYABLE_CODES = new Set([
  "SlowDown",
  "RequestTimeout",
  "InternalError",
  "ServiceUnavailable",
  "NetworkError",
  "Timeout",
]);

/** 5xx and 429 are transient, except 501 NotImplemented (an unsupported header or operation stays so). */
const isRetryable = (status: number | null, code: string) =>
  RETRYABLE_CODES.has(code) || status === 429 || (status !== null && status >= 500 && status !== 501);

/** Codes for error answers without a body (HEAD, some proxies), named like S3 names them. */
const STATUS_CODES: Record<number, string> = {
  301: "PermanentRedirect",
  307: "TemporaryRedirect",
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  412: "PreconditionFailed",
  429: "SlowDown",
  500: "InternalError",
  503: "ServiceUnavailable",
};

// --- XML: S3 answers are small and regular, and Workers has no DOMParser ---

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, entity: string) =>
    entity.startsWith("#x")
      ? String.fromCodePoint(parseInt(entity.slice(2), 16))
      : entity.startsWith("#")
        ? String.fromCodePoint(Number(entity.slice(1)))
        : ENTITIES[entity],
  );
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function xmlValue(xml: string, tag: string): string | null {
  const match = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml);
  return match ? unescapeXml(match[1]) : null;
}

function xmlBlocks(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((match) => match[1]);
}

/** The <Error> of an S3 answer body, or null when the body is not one (empty, HTML from a non-S3 server…). */
function s3ErrorBody(text: string): { code: string; message: string } | null {
  const error = /<Error>([\s\S]*?)<\/Error>/.exec(text);
  const code = error && xmlValue(error[1], "Code");
  return error && code ? { code, message: xmlValue(error[1], "Message") ?? "" } : null;
}

// --- Addressing ---

/** RFC 3986 encoding as SigV4 canonicalises it: the wire form is then the canonical form. */
const encodeRfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/** Each segment encoded, `/` kept (`year=2026/…` becomes `year%3D2026/…`). */
function encodeKey(key: string): string {
  const segments = key.split("/");
  // The URL parser would resolve these (even percent-encoded), signing a different path than the key.
  if (key === "" || segments.some((segment) => segment === "." || segment === "..")) {
    throw new S3Error(`Invalid object key ${JSON.stringify(key)}: empty, or a "." or ".." segment`, {
      status: null,
      code: "InvalidObjectName",
      retryable: false,
    });
  }
  return segments.map(encodeRfc3986).join("/");
}

const isR2Host = (hostname: string) => hostname.endsWith(".r2.cloudflarestorage.com");

/** A bucket name usable as a DNS label (no dots: a dotted name breaks TLS for *.s3.amazonaws.com). */
const isVirtualHostable = (bucket: string) => /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(bucket);

type Addressing = { origin: string; bucketPath: string; region: string };

function invalidEndpoint(message: string): S3Error {
  return new S3Error(message, { status: null, code: "InvalidEndpoint", retryable: false });
}

function resolveAddressing(location: S3Location): Addressing {
  let url: URL;
  if (location.endpointUrl === null) {
    url = new URL(`https://s3.${location.region ?? "us-east-1"}.amazonaws.com`);
  } else {
    try {
      url = new URL(location.endpointUrl);
    } catch {
      throw invalidEndpoint("The endpoint URL is not a valid URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:")
      throw invalidEndpoint(`The endpoint URL must be http(s), not ${url.protocol}`);
    // User info would be sent as-is and could end up in messages; credentials belong in `credentials`.
    if (url.username || url.password) throw invalidEndpoint("The endpoint URL must not contain user info");
    if (url.search || url.hash) throw invalidEndpoint("The endpoint URL must not have a query or fragment");
  }
  const region = location.region ?? (isR2Host(url.hostname) ? "auto" : "us-east-1");
  const basePath = url.pathname.replace(/\/+$/, "");
  const style =
    location.addressingStyle === "auto"
      ? location.endpointUrl === null && isVirtualHostable(location.bucket)
        ? "virtual"
        : "path"
      : location.addressingStyle;
  return style === "virtual"
    ? { origin: `${url.protocol}//${location.bucket}.${url.host}`, bucketPath: basePath, region }
    : { origin: url.origin, bucketPath: `${basePath}/${encodeRfc3986(location.bucket)}`, region };
}

// --- Client ---

type Call = {
  operation: string;
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  key?: string;
  query?: [string, string][];
  body?: Uint8Array | string;
  headers?: Record<string, string>;
  /** Error statuses/codes the caller handles itself (e.g. HEAD 404): returned instead of thrown. */
  allow?: (status: number, code: string) => boolean;
  /** CompleteMultipartUpload can answer 200 with an <Error> body. */
  errorInOkBody?: boolean;
};

type Answer = { status: number; headers: Headers; body: Uint8Array; code: string | null };

export class S3Client {
  readonly bucket: string;
  private readonly addressing: Addressing;
  private readonly aws: AwsClient;
  private readonly secrets: string[];
  private readonly fetcher: typeof fetch;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly onRetry?: (attempt: number, error: S3Error) => void;

  /** Throws an S3Error with code InvalidEndpoint when `endpointUrl` is not a usable http(s) URL. */
  constructor(location: S3Location, credentials: S3Credentials, options: S3ClientOptions = {}) {
    this.bucket = location.bucket;
    this.addressing = resolveAddressing(location);
    // retries: 0 — aws4fetch would otherwise retry 5xx itself, blind to S3 error codes and onRetry.
    const { accessKeyId, secretAccessKey, sessionToken } = credentials;
    this.aws = new AwsClient({
      accessKeyId,
      secretAccessKey,
      sessionToken,
      service: "s3",
      region: this.addressing.region,
      retries: 0,
    });
    this.secrets = [credentials.secretAccessKey, credentials.sessionToken ?? ""].filter((secret) => secret.length >= 4);
    const globalFetch: typeof fetch = (input, init) => fetch(input, init);
    this.fetcher = options.fetch ?? globalFetch;
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.baseDelayMs = options.baseDelayMs ?? 200;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.onRetry = options.onRetry;
  }

  async putObject(key: string, body: Uint8Array | string, contentType?: string): Promise<{ etag: string | null }> {
    const answer = await this.send({
      operation: "PutObject",
      method: "PUT",
      key,
      body,
      headers: contentType ? { "content-type": contentType } : {},
    });
    return { etag: answer.headers.get("etag") };
  }

  /** Succeeds for a key that does not exist (S3 answers 204 either way). */
  async deleteObject(key: string): Promise<void> {
    await this.send({
      operation: "DeleteObject",
      method: "DELETE",
      key,
      allow: (status, code) => status === 404 && code === "NoSuchKey",
    });
  }

  /** null when the object does not exist (a HEAD answer has no body to tell a missing bucket apart). */
  async headObject(key: string): Promise<{ size: number; etag: string | null } | null> {
    const answer = await this.send({ operation: "HeadObject", method: "HEAD", key, allow: (status) => status === 404 });
    if (answer.status === 404) return null;
    return { size: Number(answer.headers.get("content-length") ?? 0), etag: answer.headers.get("etag") };
  }

  async getObject(key: string): Promise<Uint8Array | null> {
    const answer = await this.send({
      operation: "GetObject",
      method: "GET",
      key,
      allow: (status, code) => status === 404 && code === "NoSuchKey",
    });
    return answer.status === 404 ? null : answer.body;
  }

  /** ListObjectsV2 under `prefix`, following continuation tokens. */
  async listObjects(prefix: string): Promise<{ key: string; size: number }[]> {
    const objects: { key: string; size: number }[] = [];
    let token: string | null = null;
    do {
      const query: [string, string][] = [
        ["list-type", "2"],
        ["prefix", prefix],
      ];
      if (token !== null) query.push(["continuation-token", token]);
      const xml = await this.text({ operation: "ListObjectsV2", method: "GET", query });
      if (!xml.includes("<ListBucketResult")) throw this.invalidResponse("ListObjectsV2", "no <ListBucketResult>");
      for (const block of xmlBlocks(xml, "Contents")) {
        const key = xmlValue(block, "Key");
        if (key !== null) objects.push({ key, size: Number(xmlValue(block, "Size") ?? 0) });
      }
      const truncated = xmlValue(xml, "IsTruncated") === "true";
      token = truncated ? xmlValue(xml, "NextContinuationToken") : null;
      if (truncated && !token) throw this.invalidResponse("ListObjectsV2", "truncated without a NextContinuationToken");
    } while (token !== null);
    return objects;
  }

  async createMultipartUpload(key: string, contentType?: string): Promise<string> {
    const xml = await this.text({
      operation: "CreateMultipartUpload",
      method: "POST",
      key,
      query: [["uploads", ""]],
      headers: contentType ? { "content-type": contentType } : {},
    });
    const uploadId = xmlValue(xml, "UploadId");
    if (!uploadId) throw this.invalidResponse("CreateMultipartUpload", "no <UploadId>");
    return uploadId;
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string> {
    const answer = await this.send({
      operation: "UploadPart",
      method: "PUT",
      key,
      query: [
        ["partNumber", String(partNumber)],
        ["uploadId", uploadId],
      ],
      body,
    });
    const etag = answer.headers.get("etag");
    if (!etag) throw this.invalidResponse("UploadPart", "no ETag header");
    return etag;
  }

  async completeMultipartUpload(
    key: string,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
  ): Promise<void> {
    const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
    const body =
      "<CompleteMultipartUpload>" +
      sorted
        .map((part) => `<Part><PartNumber>${part.partNumber}</PartNumber><ETag>${escapeXml(part.etag)}</ETag></Part>`)
        .join("") +
      "</CompleteMultipartUpload>";
    let retried = false;
    try {
      await this.send(
        {
          operation: "CompleteMultipartUpload",
          method: "POST",
          key,
          query: [["uploadId", uploadId]],
          body,
          headers: { "content-type": "application/xml" },
          errorInOkBody: true,
        },
        () => (retried = true),
      );
    } catch (error) {
      // A retry after a completion whose answer was lost finds the upload gone: the object tells.
      if (retried && error instanceof S3Error && error.code === "NoSuchUpload") {
        const head = await this.headObject(key);
        if (head?.etag?.replace(/"/g, "").endsWith(`-${sorted.length}`)) return;
      }
      throw error;
    }
  }

  /** Succeeds when the upload is already gone. */
  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    await this.send({
      operation: "AbortMultipartUpload",
      method: "DELETE",
      key,
      query: [["uploadId", uploadId]],
      allow: (status, code) => status === 404 && code === "NoSuchUpload",
    });
  }

  // --- transport ---

  private url(key: string | undefined, query: [string, string][] = []): string {
    const path =
      key === undefined ? this.addressing.bucketPath || "/" : `${this.addressing.bucketPath}/${encodeKey(key)}`;
    // Encoded the way SigV4 canonicalises it, so the signed and the sent query are the same bytes.
    const search = query.map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`).join("&");
    return `${this.addressing.origin}${path}${search ? `?${search}` : ""}`;
  }

  private async text(call: Call): Promise<string> {
    return new TextDecoder().decode((await this.send(call)).body);
  }

  /** One call with retries; `retrying` is told before each retry (besides options.onRetry). */
  private async send(call: Call, retrying?: () => void): Promise<Answer> {
    const url = this.url(call.key, call.query);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(call, url);
      } catch (error) {
        if (!(error instanceof S3Error) || !error.retryable || attempt >= this.attempts) throw error;
        this.onRetry?.(attempt, error);
        retrying?.();
        await sleep(backoff(attempt - 1, { base: this.baseDelayMs, jitter: "equal" }));
      }
    }
  }

  private async attempt(call: Call, url: string): Promise<Answer> {
    // Signed per attempt: the signature carries the time, and S3 refuses one older than 15 minutes.
    const request = await this.aws.sign(url, { method: call.method, headers: call.headers, body: call.body });
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    let status: number;
    let headers: Headers;
    let body: Uint8Array;
    try {
      // Never follow a redirect: it would resend the signed request elsewhere; S3 redirects are errors.
      const response = await this.fetcher(request, { signal: controller.signal, redirect: "manual" });
      status = response.status;
      headers = response.headers;
      body = new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      if (timedOut)
        throw new S3Error(`S3 ${call.operation} failed: no answer within ${this.timeoutMs} ms`, {
          status: null,
          code: "Timeout",
          retryable: true,
        });
      throw new S3Error(`S3 ${call.operation} failed: network error (${this.scrub(networkReason(error))})`, {
        status: null,
        code: "NetworkError",
        retryable: true,
      });
    } finally {
      clearTimeout(timer);
    }

    const ok = status >= 200 && status < 300;
    const text = ok && !call.errorInOkBody ? "" : new TextDecoder().decode(body.subarray(0, 64 * 1024));
    const parsed = text ? s3ErrorBody(text) : null;
    if (ok && !parsed) {
      // S3 never answers HTML: a web server at the endpoint would otherwise look like a success.
      if ((headers.get("content-type") ?? "").toLowerCase().startsWith("text/html"))
        throw this.invalidResponse(call.operation, `an HTML page (HTTP ${status})`);
      return { status, headers, body, code: null };
    }
    const code = parsed?.code ?? (text.trim() === "" ? (STATUS_CODES[status] ?? `HTTP${status}`) : "InvalidResponse");
    if (!ok && call.allow?.(status, code)) return { status, headers, body, code };
    const detail = parsed?.message
      ? `: ${parsed.message}`
      : code === "InvalidResponse"
        ? ": the endpoint did not answer like S3"
        : "";
    throw new S3Error(this.scrub(`S3 ${call.operation} failed with ${code}${detail} (HTTP ${status})`), {
      status,
      code,
      retryable: isRetryable(status, code),
    });
  }

  private invalidResponse(operation: string, what: string): S3Error {
    return new S3Error(`S3 ${operation} failed: unexpected answer, ${what}`, {
      status: null,
      code: "InvalidResponse",
      retryable: false,
    });
  }

  /** Defence in depth: a secret never appears in an error message, whatever a server echoes back. */
  private scrub(message: string): string {
    return this.secrets.reduce((text, secret) => text.split(secret).join("[redacted]"), message);
  }
}

/** The most specific reason a fetch rejected with (Node puts ECONNREFUSED & co. in `cause`). */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (cause && typeof cause === "object") {
    if (typeof cause.code === "string")
      return typeof cause.message === "string" && cause.message ? cause.message : cause.code;
    if (typeof cause.message === "string" && cause.message) return cause.message;
  }
  return error.message;
}
