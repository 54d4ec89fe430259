import type { ZodError } from "zod";

/**
 * What went wrong, in the domain's words. Domain code throws `DomainError`s and never picks an
 * HTTP status: the edge (`http/error-handler.ts`) maps each kind to one, in one table.
 */
export type ErrorKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "uri_too_long"
  | "unsupported_media_type"
  | "invalid"
  | "upgrade_required"
  | "unavailable";

/** One entry of an `invalid` error's detail list, shaped like FastAPI's so Python-server clients read it unchanged. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

export type ErrorDetail = string | ValidationIssue[];

/** The one error type of the platform: it leaves the API as `{"detail": ...}`. */
export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly detail: ErrorDetail;

  constructor(kind: ErrorKind, detail: ErrorDetail) {
    super(typeof detail === "string" ? detail : detail.map((issue) => issue.msg).join("; "));
    this.name = "DomainError";
    this.kind = kind;
    this.detail = detail;
  }
}

export const badRequest = (detail: ErrorDetail) => new DomainError("bad_request", detail);
export const unauthorized = (detail: string) => new DomainError("unauthorized", detail);
export const forbidden = (detail: string) => new DomainError("forbidden", detail);
export const notFound = (detail: string) => new DomainError("not_found", detail);
export const conflict = (detail: string) => new DomainError("conflict", detail);
export const tooLarge = (detail: ErrorDetail) => new DomainError("too_large", detail);
export const invalid = (detail: ErrorDetail) => new DomainError("invalid", detail);
export const unavailable = (detail: string) => new DomainError("unavailable", detail);

/**
 * The `DomainError` an error is, or was raised under (a library such as drizzle wraps what its
 * driver throws, keeping it as `cause`), so its kind still picks the status.
 */
export function domainErrorOf(error: unknown): DomainError | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++)
    if (at instanceof DomainError) return at;
  return undefined;
}

/** True for a `DomainError` of the given kind. */
export const isDomainError = (error: unknown, kind?: ErrorKind): error is DomainError =>
  error instanceof DomainError && (kind === undefined || error.kind === kind);

/** Turns zod issues into field-level validation details, located by request part (body, query, path…). */
export function validationIssues(error: ZodError, target: string): ValidationIssue[] {
  return error.issues.map((issue) => ({
    type: issue.code,
    loc: [target, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: issue.message,
  }));
}
