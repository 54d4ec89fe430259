import type { ZodError } from "zod";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One entry of a 422 `detail` list, shaped like FastAPI's so Python-server clients read it unchanged. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

export type ErrorDetail = string | ValidationIssue[];

/** An error that leaves the API as `{"detail": ...}` with its status code. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly detail: ErrorDetail;
  readonly headers: Record<string, string>;

  constructor(status: ContentfulStatusCode, detail: ErrorDetail, headers: Record<string, string> = {}) {
    super(typeof detail === "string" ? detail : detail.map((issue) => issue.msg).join("; "));
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export const notFound = (detail: string) => new ApiError(404, detail);
export const conflict = (detail: string) => new ApiError(409, detail);
export const forbidden = (detail: string) => new ApiError(403, detail);
export const unauthorized = (detail: string) => new ApiError(401, detail);

/** Turns zod issues into field-level validation details, located by request part (body, query, path…). */
export function validationIssues(error: ZodError, target: string): ValidationIssue[] {
  return error.issues.map((issue) => ({
    type: issue.code,
    loc: [target, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: issue.message,
  }));
}
