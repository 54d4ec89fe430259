import { createMiddleware } from "hono/factory";
import { database, type Database } from "../db/client.ts";
import type { AppEnv } from "../http/app-env.ts";
import { forbidden, unauthorized } from "../http/errors.ts";
import { hashApiKey } from "../tenancy/keys.ts";
import {
  DEFAULT_ORGANIZATION_ID,
  defaultWorkspace,
  ensureDefaultTenancy,
  findApiKeyByHash,
  findWorkspace,
  touchApiKey,
} from "../tenancy/store.ts";
import type { Principal } from "./principal.ts";

/** How long a verified key is trusted without asking D1 again; bounds how late a revocation bites. */
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 1_000;
/** `last_used_at` is refreshed at most this often per key, off the request path. */
const TOUCH_INTERVAL_MS = 60_000;

interface CachedPrincipal {
  principal: Principal;
  expiresAt: number;
}

const cache = new Map<string, CachedPrincipal>();
let defaultTenancyReady = false;

/** Forget every cached verification (tests, and after a key is revoked in this isolate). */
export function clearApiKeyCache(): void {
  cache.clear();
}

/**
 * Verifies an `X-Api-Key` wherever one is sent (a wrong key is 401 on any path, known or not) and
 * resolves the tenant: a workspace-scoped key acts in its workspace; an organization-scoped key acts in
 * the workspace named by `X-Tenant-Id`, or its organization's oldest workspace.
 */
export function authenticateApiKey(isPublic: (path: string) => boolean) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header("x-api-key");
    if (!key || isPublic(c.req.path)) return next();
    const tenant = c.req.header("x-tenant-id") ?? "";
    const keyHash = await hashApiKey(key);
    const cacheKey = `${keyHash}:${tenant}`;
    const now = Date.now();
    const cached = cache.get(cacheKey);
    if (cached && cached.expiresAt > now) {
      c.set("principal", cached.principal);
      return next();
    }
    const principal = await verify(database(c.env), c.env, key, keyHash, tenant, c.executionCtx);
    if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
    cache.set(cacheKey, { principal, expiresAt: now + CACHE_TTL_MS });
    c.set("principal", principal);
    return next();
  });
}

/** Route guard: the request must carry a key that `authenticateApiKey` accepted. */
export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("principal")) throw unauthorized("Missing API key: send it in the X-Api-Key header");
  return next();
});

async function verify(
  db: Database,
  env: Env,
  key: string,
  keyHash: string,
  tenant: string,
  executionCtx: { waitUntil(promise: Promise<unknown>): void },
): Promise<Principal> {
  if (env.BOOTSTRAP_API_KEY && (await sameSecret(key, env.BOOTSTRAP_API_KEY))) {
    if (!defaultTenancyReady) {
      await ensureDefaultTenancy(db);
      defaultTenancyReady = true;
    }
    const workspaceId = await resolveWorkspace(db, DEFAULT_ORGANIZATION_ID, null, tenant);
    return { keyId: "bootstrap", organizationId: DEFAULT_ORGANIZATION_ID, workspaceId, keyWorkspaceId: null, role: "admin" };
  }

  const row = await findApiKeyByHash(db, keyHash);
  if (!row) throw unauthorized("Invalid API key");
  if (row.revokedAt) throw unauthorized("API key has been revoked");
  const nowIso = new Date().toISOString();
  if (row.expiresAt && row.expiresAt <= nowIso) throw unauthorized("API key has expired");

  const workspaceId = await resolveWorkspace(db, row.organizationId, row.workspaceId, tenant);
  if (!row.lastUsedAt || Date.parse(row.lastUsedAt) < Date.now() - TOUCH_INTERVAL_MS) {
    executionCtx.waitUntil(touchApiKey(db, row.id, nowIso));
  }
  return {
    keyId: row.id,
    organizationId: row.organizationId,
    workspaceId,
    keyWorkspaceId: row.workspaceId,
    role: row.role,
  };
}

async function resolveWorkspace(
  db: Database,
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
    const workspace = await findWorkspace(db, organizationId, tenant);
    if (!workspace) throw forbidden(`Workspace ${tenant} (X-Tenant-Id) does not exist in this key's organization`);
    return workspace.id;
  }
  const fallback = await defaultWorkspace(db, organizationId);
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
