import { type FormEvent, useState } from "react";
import { ApiError, api } from "../api.ts";
import { ErrorBox } from "../components/ErrorBox.tsx";
import { authHeaders, type Session, setSession } from "../session.ts";

/**
 * Sign in with an API key, a bearer token for the deployment's custom auth, or both (with custom
 * auth the Agent Server takes the token and the tracing and export API still take the key). Each is
 * checked against the API before the console keeps it for this tab.
 */
export function SignIn() {
  const [apiKey, setApiKey] = useState("");
  const [bearerToken, setBearerToken] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const session: Session = {
      apiKey: apiKey.trim() || undefined,
      bearerToken: bearerToken.trim() || undefined,
    };
    if (!session.apiKey && !session.bearerToken) {
      setError(new Error("Enter an API key or a bearer token"));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await verify(session);
      setSession(session);
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="sign-in">
      <form className="card" onSubmit={submit} aria-label="Sign in">
        <h1>Agent Platform console</h1>
        <p className="muted">
          The key stays in this tab only (session storage) and is sent to this deployment's API, nowhere else.
        </p>
        <label>
          API key
          <input
            name="api-key"
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
            placeholder="lsv2_… or the deployment's key"
          />
        </label>
        <label>
          Bearer token <span className="muted">(deployments with custom auth)</span>
          <input
            name="bearer-token"
            type="password"
            autoComplete="off"
            value={bearerToken}
            onChange={(event) => setBearerToken(event.target.value)}
          />
        </label>
        <ErrorBox error={error} title="Sign-in failed" />
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </div>
  );
}

/** A credential the API refuses is refused here too, with the API's reason. */
async function verify(session: Session): Promise<void> {
  const headers = authHeaders(session);
  // Agent Server routes take the bearer token under custom auth, the key otherwise.
  await api("/assistants/search", { body: { limit: 1 }, headers });
  if (session.apiKey) {
    // The tracing API always takes the key.
    try {
      await api("/api/v1/sessions", { query: { limit: 1 }, headers });
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) throw error;
    }
  }
}
