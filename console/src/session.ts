/**
 * Who the console acts as: an API key (X-Api-Key), and/or a bearer token for a deployment with custom
 * auth, plus the workspace picked with X-Tenant-Id. Kept in sessionStorage, so it lives as long as the
 * tab and is never written anywhere else.
 */
export interface Session {
  apiKey?: string;
  bearerToken?: string;
  tenantId?: string;
}

const STORAGE_KEY = "agent-platform-console-session";
const listeners = new Set<() => void>();
let current: Session | null = read();

function read(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function getSession(): Session | null {
  return current;
}

export function setSession(session: Session | null): void {
  current = session;
  if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

export function subscribeSession(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The headers every API call carries for the session. */
export function authHeaders(session: Session | null = current): Record<string, string> {
  const headers: Record<string, string> = {};
  if (session?.apiKey) headers["X-Api-Key"] = session.apiKey;
  if (session?.bearerToken) headers.Authorization = `Bearer ${session.bearerToken}`;
  if (session?.tenantId) headers["X-Tenant-Id"] = session.tenantId;
  return headers;
}
