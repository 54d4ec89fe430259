import { S3Error } from "./s3.ts";
import type { ObjectBucket } from "./upload.ts";

/**
 * A destination reached through a Worker R2 binding instead of S3 over HTTP: no credentials, no
 * signing, the same calls. Multipart uploads keep R2's rule (equal-size parts ≥ 5 MiB, the last
 * smaller) because uploadStream makes them that way for both kinds of bucket.
 */

/** The R2 binding of this name in `env`, or null when there is none. */
export function r2Binding(env: object, name: string): R2Bucket | null {
  const candidate = (env as Record<string, unknown>)[name] as Partial<R2Bucket> | undefined;
  return candidate && typeof candidate.put === "function" && typeof candidate.createMultipartUpload === "function"
    ? (candidate as R2Bucket)
    : null;
}

/** R2 binding calls throw plain Errors; as S3Errors they take the same retry and reporting paths. */
async function wrapped<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof S3Error) throw error;
    throw new S3Error(`R2 ${operation} failed: ${error instanceof Error ? error.message : String(error)}`, {
      status: null,
      code: "InternalError",
      retryable: true,
    });
  }
}

export class R2BindingBucket implements ObjectBucket {
  constructor(private readonly bucket: R2Bucket) {}

  putObject(key: string, body: Uint8Array | string, contentType?: string): Promise<{ etag: string | null }> {
    return wrapped("PutObject", async () => {
      const object = await this.bucket.put(key, body, contentType ? { httpMetadata: { contentType } } : undefined);
      return { etag: object?.httpEtag ?? null };
    });
  }

  deleteObject(key: string): Promise<void> {
    return wrapped("DeleteObject", () => this.bucket.delete(key));
  }

  getObject(key: string): Promise<Uint8Array | null> {
    return wrapped("GetObject", async () => {
      const object = await this.bucket.get(key);
      return object ? new Uint8Array(await object.arrayBuffer()) : null;
    });
  }

  listObjects(prefix: string): Promise<{ key: string; size: number }[]> {
    return wrapped("ListObjects", async () => {
      const objects: { key: string; size: number }[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.bucket.list({ prefix, cursor });
        objects.push(...page.objects.map((object) => ({ key: object.key, size: object.size })));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return objects;
    });
  }

  createMultipartUpload(key: string, contentType?: string): Promise<string> {
    return wrapped(
      "CreateMultipartUpload",
      async () =>
        (await this.bucket.createMultipartUpload(key, contentType ? { httpMetadata: { contentType } } : undefined))
          .uploadId,
    );
  }

  uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string> {
    return wrapped(
      "UploadPart",
      async () => (await this.bucket.resumeMultipartUpload(key, uploadId).uploadPart(partNumber, body)).etag,
    );
  }

  completeMultipartUpload(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<void> {
    return wrapped(
      "CompleteMultipartUpload",
      async () => void (await this.bucket.resumeMultipartUpload(key, uploadId).complete(parts)),
    );
  }

  abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    return wrapped("AbortMultipartUpload", () => this.bucket.resumeMultipartUpload(key, uploadId).abort());
  }
}
