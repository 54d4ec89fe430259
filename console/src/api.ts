import { Client } from "@langchain/langgraph-sdk";
import { authHeaders, getSession } from "./session.ts";

/** A failed API call, with the server's `detail` (or its body) as the message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | undefined | null | string[]>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}

/** The message a person should read for an error body: FastAPI's `detail` in its forms, or the text. */
export function describeErrorBody(status: number, body: unknown): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) {
      return detail
        .map((item) => {
          const entry = item as { loc?: unknown[]; msg?: string };
          return entry.loc ? `${entry.loc.join(".")}: ${entry.msg}` : (entry.msg ?? JSON.stringify(item));
        })
        .join("; ");
    }
    return JSON.stringify(detail);
  }
  if (typeof body === "string" && body) return body;
  return `HTTP ${status}`;
}

/**
 * The SDK's client throws `HTTP 404: {"detail": …}`; turn that into an ApiError with the server's
 * `detail`, so ErrorBox shows what the API said rather than raw JSON.
 */
export function readableError(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof ApiError) return error;
  const { status, text } = error as Error & { status?: unknown; text?: unknown };
  if (typeof status !== "number" || typeof text !== "string") return error;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the message
  }
  return new ApiError(status, describeErrorBody(status, body), body);
}

export interface ApiOptions {
  method?: string;
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** Extra request headers (sign-in checks credentials before keeping them). */
  headers?: Record<string, string>;
}

/** Calls the platform's public API as the signed-in user; throws ApiError on any non-2xx answer. */
export async function apiResponse(path: string, options: ApiOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...authHeaders(), ...options.headers };
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  const response = await fetch(withQuery(path, options.query), {
    method: options.method ?? (body ? "POST" : "GET"),
    headers,
    body,
    signal: options.signal,
  });
  if (!response.ok) {
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text is the message
    }
    throw new ApiError(response.status, describeErrorBody(response.status, parsed), parsed);
  }
  return response;
}

export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const response = await apiResponse(path, options);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The official LangGraph SDK client, pointed at this deployment with the session's credentials. */
export function langGraphClient(): Client {
  const session = getSession();
  return new Client({
    apiUrl: window.location.origin,
    apiKey: session?.apiKey ?? null,
    defaultHeaders: {
      ...(session?.bearerToken ? { Authorization: `Bearer ${session.bearerToken}` } : {}),
      ...(session?.tenantId ? { "X-Tenant-Id": session.tenantId } : {}),
    },
  });
}
