import { ApiError, readableError } from "../api.ts";

/** An error as a person reads it: the API's `detail`, with its status (the SDK's errors too). */
export function ErrorBox({ error: raw, title }: { error: unknown; title?: string }) {
  if (!raw) return null;
  const error = readableError(raw);
  const status = error instanceof ApiError ? error.status : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      {title ? <strong>{title}: </strong> : null}
      {status ? <span className="muted">HTTP {status} · </span> : null}
      <span data-testid="error-message">{message}</span>
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return <div className="muted loading">{what}…</div>;
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <div className="empty muted">{children}</div>;
}
