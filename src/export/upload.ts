import type { S3Client } from "./s3.ts";

/**
 * Streaming a byte stream into a bucket as one object, in parts of one size: the same for an S3
 * bucket over HTTP (S3Client) and a Worker R2 binding (R2BindingBucket).
 */

/** What export code needs of a bucket: S3 over HTTP (S3Client) or a Worker R2 binding (R2BindingBucket). */
export type ObjectBucket = Pick<
  S3Client,
  | "putObject"
  | "deleteObject"
  | "getObject"
  | "listObjects"
  | "createMultipartUpload"
  | "uploadPart"
  | "completeMultipartUpload"
  | "abortMultipartUpload"
>;

/** S3's (and R2's) multipart bounds: parts of 5 MiB to 5 GiB, at most 10,000 of them. */
const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;
const MAX_PARTS = 10_000;
const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

/**
 * Uploads a byte stream as one object: a single PUT when it fits in one part, else a multipart upload
 * whose parts all have exactly `partSize` bytes except the last (R2 requires equal-size parts ≥ 5 MiB).
 * Aborts the multipart upload on failure. `parts` is 1 for a single PUT. Parts go up one at a time,
 * so memory stays at about one part.
 */
export async function uploadStream(
  client: ObjectBucket,
  key: string,
  stream: ReadableStream<Uint8Array>,
  options: { partSize?: number; contentType?: string } = {},
): Promise<{ bytes: number; parts: number }> {
  const partSize = options.partSize ?? DEFAULT_PART_SIZE;
  if (!Number.isInteger(partSize) || partSize < MIN_PART_SIZE || partSize > MAX_PART_SIZE) {
    throw new RangeError(
      `partSize must be an integer between ${MIN_PART_SIZE} and ${MAX_PART_SIZE} bytes, got ${partSize}`,
    );
  }
  const reader = stream.getReader();
  let buffer = new Uint8Array(partSize);
  let filled = 0;
  let bytes = 0;
  let pending: Uint8Array | null = null; // read but not yet copied into `buffer`
  let uploadId: string | null = null;
  const parts: { partNumber: number; etag: string }[] = [];

  /** Fills `buffer`; false when the stream ended before it was full. */
  const fill = async (): Promise<boolean> => {
    while (filled < partSize) {
      if (!pending) {
        const { done, value } = await reader.read();
        if (done) return false;
        pending = value;
        bytes += value.byteLength;
      }
      const take = Math.min(pending.byteLength, partSize - filled);
      buffer.set(pending.subarray(0, take), filled);
      filled += take;
      pending = take < pending.byteLength ? pending.subarray(take) : null;
    }
    return true;
  };
  /** Whether anything follows a full buffer (reads one chunk ahead when needed). */
  const more = async (): Promise<boolean> => {
    while (!pending) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) {
        pending = value;
        bytes += value.byteLength;
      }
    }
    return true;
  };

  try {
    if (!(await fill()) || !(await more())) {
      await client.putObject(key, buffer.subarray(0, filled), options.contentType);
      return { bytes, parts: 1 };
    }
    uploadId = await client.createMultipartUpload(key, options.contentType);
    for (;;) {
      const partNumber = parts.length + 1;
      if (partNumber > MAX_PARTS)
        throw new RangeError(`The stream needs more than ${MAX_PARTS} parts of ${partSize} bytes`);
      const full = filled === partSize;
      parts.push({ partNumber, etag: await client.uploadPart(key, uploadId, partNumber, buffer.subarray(0, filled)) });
      if (!full || !(await more())) break;
      // A fresh buffer: the last request may still hold the previous one.
      buffer = new Uint8Array(partSize);
      filled = 0;
      await fill();
    }
    await client.completeMultipartUpload(key, uploadId, parts);
    return { bytes, parts: parts.length };
  } catch (error) {
    await reader.cancel(error).catch(() => {});
    if (uploadId !== null) await client.abortMultipartUpload(key, uploadId).catch(() => {});
    throw error;
  }
}
