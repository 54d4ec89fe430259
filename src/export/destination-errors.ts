import { S3Error } from "./s3.ts";

/**
 * What a bucket's error means for a destination: LangSmith's message for a destination check that
 * failed, and whether another attempt could succeed.
 */

const ACCESS_DENIED = new Set([
  "AccessDenied",
  "AllAccessDisabled",
  "AccountProblem",
  "Forbidden",
  "InvalidToken",
  "ExpiredToken",
  "InvalidSecurity",
  "SignatureDoesNotMatch",
]);
const BUCKET_INVALID = new Set([
  "NoSuchBucket",
  "InvalidBucketName",
  "PermanentRedirect",
  "TemporaryRedirect",
  "AuthorizationHeaderMalformed",
  "IllegalLocationConstraintException",
]);
const KEY_UNKNOWN = new Set(["InvalidAccessKeyId", "Unauthorized"]);
const ENDPOINT_INVALID = new Set(["InvalidEndpoint", "NetworkError", "Timeout", "InvalidResponse"]);

/** Errors that another attempt cannot fix: the bucket or the credentials are wrong. */
export function isPermanentDestinationError(error: unknown): boolean {
  return error instanceof S3Error ? !error.retryable : destinationErrorMessage(error) !== null;
}

/**
 * LangSmith's documented message for a destination check failure — "Access denied", "Bucket is not valid", "Key ID
 * you provided does not exist", "Invalid endpoint" — followed by the S3 error code, e.g.
 * "Access denied (AccessDenied)"; null when the error is not one of those classes.
 *
 * SignatureDoesNotMatch counts as "Access denied": the key id exists (S3 checks it first) but the
 * secret is wrong, so the key pair is not allowed. AuthorizationHeaderMalformed is AWS's answer to a
 * wrong region, and PermanentRedirect to a bucket in another region: both mean the bucket as
 * configured is not usable.
 */
export function destinationErrorMessage(error: unknown): string | null {
  if (!(error instanceof S3Error)) return null;
  const { code, status } = error;
  // The code decides first; the status only when the code is not one S3 documents for these cases.
  const label = KEY_UNKNOWN.has(code)
    ? "Key ID you provided does not exist"
    : BUCKET_INVALID.has(code)
      ? "Bucket is not valid"
      : ACCESS_DENIED.has(code)
        ? "Access denied"
        : ENDPOINT_INVALID.has(code)
          ? "Invalid endpoint"
          : status === 401
            ? "Key ID you provided does not exist"
            : status === 301
              ? "Bucket is not valid"
              : status === 403
                ? "Access denied"
                : null;
  return label && `${label} (${code})`;
}
