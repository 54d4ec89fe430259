import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { forbidden, unauthorized } from "../core/errors.ts";
import { API_KEY_CACHE_ENTRIES, API_KEY_CACHE_TTL_MS } from "../core/limits.ts";
import { TtlCache } from "../core/ttl-cache.ts";
import { database, readReplicated } from "../db/client.ts";
import { authenticateUser, customAuthEnabled, STUDIO_USER, studioAuthDisabled } from "../deployment/custom-auth.ts";
import type { AppEnv } from "../http/app-env.ts";
import type { Principal } from "../http/principal.ts";
import { hashApiKey } from "../tenancy/keys.ts";
import {
  DEFAULT_ORGANIZATION_ID,
  DEFAULT_WORKSPACE_ID,
  defaultWorkspace,
  ensureDefaultTenancy,
  findApiKeyByHash,
  findWorkspace,
  touchApiKey,
} from "../tenancy/store.ts";

/** `last_used_at` is refreshed at most this often per key, off the request path. */
const TOUCH_INTERVAL_MS = 60_000;

/** Verified keys, by key hash and X-Tenant-Id: failures are never cached (see API_KEY_CACHE_TTL_MS). */
const cache = new TtlCache<Principal>(API_KEY_CACHE_ENTRIES);
let defaultTenancyReady = false;

/** Forget every cached verification (tests). */
export function clearApiKeyCache(): void {
  cache.clear();
}

/** Forget a key's verifications in this isolate (it was revoked here): its next request is checked again. */
export function forgetApiKey(keyHash: string): void {
  cache.deleteWhere((cacheKey) => cacheKey.startsWith(`${keyHash}:`));
}

/**
 * A credential header's one value. A header sent twice arrives joined as `k, k` (the Python SDK's
 * generated v2 client sends both `X-API-Key` and `x-api-key`): identical repeats count once, and
 * different ones stay joined, so they fail as a wrong key would.
 */
export function singleHeaderValue(value: string | undefined): string | undefined {
  if (value === undefined || !value.includes(",")) return value;
  const [first, ...rest] = value.split(",").map((part) => part.trim());
  return rest.every((part) => part === first) ? first : value;
}

/**
 * The principal of an API key (cached for API_KEY_CACHE_TTL_MS, never past the key's expiry); throws
 * 401/403 for a bad key or tenant.
 */
async function principalForKey(c: Context<AppEnv>, key: string): Promise<Principal> {
  const tenant = singleHeaderValue(c.req.header("x-tenant-id")) ?? "";
  const keyHash = await hashApiKey(key);
  const cacheKey = `${keyHash}:${tenant}`;
  const now = Date.now();
  const cached = cache.get(cacheKey, now);
  if (cached) return cached;
  const { principal, keyExpiresAt } = await verify(c.env, key, keyHash, tenant, c.executionCtx);
  cache.set(cacheKey, principal, Math.min(now + API_KEY_CACHE_TTL_MS, keyExpiresAt ?? Number.POSITIVE_INFINITY));
  return principal;
}

/** The administration and tracing API: `/api/v1`, and the v2 runs routes of the SDKs' generated client. */
const isLangSmithApiPath = (path: string) => path.startsWith("/api/v1/") || path.startsWith("/api/v2/");

/**
 * Authenticates every non-public request.
 * - API keys: verified wherever one is sent (a wrong key is 401 on any path, known or not); the
 *   tenant is the key's workspace, or the one named by `X-Tenant-Id` for an organization key.
 * - With custom auth (`auth.path`), the deployment's handler authenticates the Agent Server routes
 *   instead, acting in the default workspace; the administration and tracing API (/api/v1, /api/v2) and
 *   /metrics (organization admins only) keep API keys. A studio request (`x-auth-scheme: langsmith`)
 *   needs a valid key as well.
 */
export function authenticate(isPublic: (path: string, method: string) => boolean) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (isPublic(c.req.path, c.req.method)) return next();
    const key = singleHeaderValue(c.req.header("x-api-key"));
    if (!customAuthEnabled || isLangSmithApiPath(c.req.path) || c.req.path === "/metrics") {
      if (key) c.set("principal", await principalForKey(c, key));
      return next();
    }
    if (c.req.header("x-auth-scheme") === "langsmith" && !studioAuthDisabled) {
      if (!key) throw unauthorized("Studio access needs a valid X-Api-Key header");
      c.set("principal", await principalForKey(c, key));
      c.set("user", STUDIO_USER);
      return next();
    }
    const user = await authenticateUser(c.req.raw);
    if (!defaultTenancyReady) {
      await ensureDefaultTenancy(database(c.env));
      defaultTenancyReady = true;
    }
    c.set("user", user);
    c.set("principal", {
      keyId: user.identity,
      organizationId: DEFAULT_ORGANIZATION_ID,
      workspaceId: DEFAULT_WORKSPACE_ID,
      keyWorkspaceId: DEFAULT_WORKSPACE_ID,
      role: "member",
    });
    return next();
  });
}

/**
 * Checks a key against D1. The reads may come from a read replica (see `readReplicated`): a key or
 * workspace the replica does not have yet is looked up on the primary before it is refused.
 */
async function verify(
  env: Env,
  key: string,
  keyHash: string,
  tenant: string,
  executionCtx: { waitUntil(promise: Promise<unknown>): void },
): Promise<{ principal: Principal; keyExpiresAt: number | null }> {
  if (env.BOOTSTRAP_API_KEY && (await sameSecret(key, env.BOOTSTRAP_API_KEY))) {
    if (!defaultTenancyReady) {
      await ensureDefaultTenancy(database(env));
      defaultTenancyReady = true;
    }
    const workspaceId = await resolveWorkspace(env, DEFAULT_ORGANIZATION_ID, null, tenant);
    const principal: Principal = {
      keyId: "bootstrap",
      organizationId: DEFAULT_ORGANIZATION_ID,
      workspaceId,
      keyWorkspaceId: null,
      role: "admin",
    };
    return { principal, keyExpiresAt: null };
  }

  const row = await readReplicated(env, (db) => findApiKeyByHash(db, keyHash));
  if (!row) throw unauthorized("Invalid API key");
  if (row.revokedAt) throw unauthorized("API key has been revoked");
  const now = Date.now();
  const keyExpiresAt = row.expiresAt ? Date.parse(row.expiresAt) : null;
  if (keyExpiresAt !== null && keyExpiresAt <= now) throw unauthorized("API key has expired");

  const workspaceId = await resolveWorkspace(env, row.organizationId, row.workspaceId, tenant);
  if (!row.lastUsedAt || Date.parse(row.lastUsedAt) < now - TOUCH_INTERVAL_MS) {
    executionCtx.waitUntil(touchApiKey(database(env), row.id, new Date(now).toISOString()));
  }
  const principal: Principal = {
    keyId: row.id,
    organizationId: row.organizationId,
    workspaceId,
    keyWorkspaceId: row.workspaceId,
    role: row.role,
  };
  return { principal, keyExpiresAt };
}

async function resolveWorkspace(
  env: Env,
  organizationId: string,
  keyWorkspaceId: string | null,
  tenant: string,
): Promise<string> {
  if (keyWorkspaceId) {
    if (tenant && tenant !== keyWorkspaceId) {
      throw forbidden(`This API key is scoped to workspace ${keyWorkspaceId} and cannot act in workspace ${tenant}`);
    }
    return keyWorkspaceId;
  }
  if (tenant) {
    const workspace = await readReplicated(env, (db) => findWorkspace(db, organizationId, tenant));
    if (!workspace) throw forbidden(`Workspace ${tenant} (X-Tenant-Id) does not exist in this key's organization`);
    return workspace.id;
  }
  const fallback = await readReplicated(env, (db) => defaultWorkspace(db, organizationId));
  if (!fallback) throw forbidden("This key's organization has no workspace yet; create one first");
  return fallback.id;
}

/** Compares two secrets through their digests, so the comparison time does not depend on the input. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([hashApiKey(a), hashApiKey(b)]);
  let diff = 0;
  for (let i = 0; i < ha.length; i++) diff |= ha.charCodeAt(i) ^ hb.charCodeAt(i);
  return diff === 0;
}
