import { badRequest, DomainError, invalid, notFound } from "../core/errors.ts";
import type { Database } from "../db/client.ts";
import type { ExportDestinationRow } from "../db/schema.ts";
import { log } from "../observability/log.ts";
import { decryptJson, encryptJson } from "./crypto.ts";
import { destinationErrorMessage } from "./destination-errors.ts";
import { R2BindingBucket, r2Binding } from "./r2-bucket.ts";
import { S3Client, type S3Credentials, type S3Location } from "./s3.ts";
import type { BulkExportDestination, DestinationConfig, DestinationCredentials, DestinationInput } from "./schemas.ts";
import { destinationRows, findDestination, insertDestination, updateDestinationCredentialsRow } from "./store.ts";
import type { ObjectBucket } from "./upload.ts";

/**
 * Bulk-export destinations: S3-compatible buckets per workspace. Creating or re-keying one proves
 * write access with a test object; credentials are stored encrypted and never leave this module
 * except as `credentials_keys` (their names).
 */

type SecretsEnv = Pick<
  Env,
  | "EXPORT_ENCRYPTION_KEY"
  | "EXPORT_DEFAULT_ACCESS_KEY_ID"
  | "EXPORT_DEFAULT_SECRET_ACCESS_KEY"
  | "EXPORT_DEFAULT_SESSION_TOKEN"
  | "EXPORT_DEFAULT_ENDPOINT_URL"
>;

function toDestination(row: ExportDestinationRow): BulkExportDestination {
  return {
    id: row.id,
    tenant_id: row.workspaceId,
    destination_type: "s3",
    display_name: row.displayName,
    config: row.config as DestinationConfig,
    credentials_keys: row.credentialsKeys,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Where requests go: AWS by region when there is no endpoint, else the endpoint itself. */
export function s3Location(config: DestinationConfig): S3Location {
  return {
    bucket: config.bucket_name,
    endpointUrl: config.endpoint_url,
    region: config.region,
    addressingStyle: config.config_kwargs_s3?.addressing_style ?? "auto",
  };
}

/** An object key under the destination: `[bucket/]<prefix>/<path>` (the bucket only when the config asks for it). */
export function objectKey(config: DestinationConfig, path: string): string {
  const segments = [
    config.include_bucket_in_prefix ? config.bucket_name : "",
    config.workspace_root ?? "",
    config.prefix.replace(/^\/+|\/+$/g, ""),
    path,
  ];
  return segments.filter(Boolean).join("/");
}

/**
 * The bucket a destination writes to: its R2 binding, or S3 over HTTP with the given credentials.
 * A missing binding is reported like a missing bucket.
 */
export function openBucket(
  env: object,
  config: DestinationConfig,
  credentials: S3Credentials | null,
  fetcher?: typeof fetch,
  attempts?: number,
): ObjectBucket {
  if (config.r2_binding) {
    const bucket = r2Binding(env, config.r2_binding);
    if (!bucket)
      throw badRequest(
        `Failed to validate S3 destination: Bucket is not valid (NoSuchBinding): this deployment has no R2 binding named ${config.r2_binding}`,
      );
    return new R2BindingBucket(bucket);
  }
  if (!credentials) throw new Error("an S3 destination needs credentials");
  return new S3Client(s3Location(config), credentials, { fetch: fetcher, attempts });
}

/** The deployment's default credentials (the self-hosted rule: omitted credentials use the platform's own). */
function defaultCredentials(env: SecretsEnv): S3Credentials | null {
  if (!env.EXPORT_DEFAULT_ACCESS_KEY_ID || !env.EXPORT_DEFAULT_SECRET_ACCESS_KEY) return null;
  return {
    accessKeyId: env.EXPORT_DEFAULT_ACCESS_KEY_ID,
    secretAccessKey: env.EXPORT_DEFAULT_SECRET_ACCESS_KEY,
    sessionToken: env.EXPORT_DEFAULT_SESSION_TOKEN || undefined,
  };
}

const toS3Credentials = (credentials: DestinationCredentials): S3Credentials => ({
  accessKeyId: credentials.access_key_id,
  secretAccessKey: credentials.secret_access_key,
  sessionToken: credentials.session_token || undefined,
});

function resolveCredentials(
  env: SecretsEnv,
  config: DestinationConfig,
  given: DestinationCredentials | null | undefined,
): S3Credentials | null {
  if (config.r2_binding) {
    if (given)
      throw invalid([
        {
          type: "value_error",
          loc: ["body", "credentials"],
          msg: "credentials are not used with config.r2_binding: omit them",
        },
      ]);
    return null;
  }
  if (given) return toS3Credentials(given);
  const fallback = defaultCredentials(env);
  // The deployment's keys only ever go to the deployment's bucket: never signed for an endpoint a caller picks.
  if (fallback && (config.endpoint_url ?? null) !== (env.EXPORT_DEFAULT_ENDPOINT_URL || null)) {
    throw badRequest(
      "Without credentials a destination uses the deployment's bucket store: omit endpoint_url (or give EXPORT_DEFAULT_ENDPOINT_URL), or send credentials",
    );
  }
  if (!fallback) {
    throw badRequest(
      "credentials are required: this deployment has no default bucket credentials (EXPORT_DEFAULT_ACCESS_KEY_ID and EXPORT_DEFAULT_SECRET_ACCESS_KEY)",
    );
  }
  return fallback;
}

/**
 * Proves the destination takes writes: puts a small object under `<prefix>/tmp/` and deletes it
 * when allowed (delete permission is optional). A failure is a bad_request with LangSmith's documented message.
 */
async function checkWriteAccess(
  env: object,
  config: DestinationConfig,
  credentials: S3Credentials | null,
  fetcher?: typeof fetch,
): Promise<void> {
  const key = objectKey(config, `tmp/destination-check-${crypto.randomUUID()}.txt`);
  let bucket: ObjectBucket;
  try {
    bucket = openBucket(env, config, credentials, fetcher, 2);
    await bucket.putObject(
      key,
      "Written by the agent platform to check bulk-export write access; safe to delete.\n",
      "text/plain",
    );
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const known = destinationErrorMessage(error);
    throw badRequest(
      `Failed to validate S3 destination: ${known ?? (error instanceof Error ? error.message : String(error))}`,
    );
  }
  await bucket.deleteObject(key).catch((error) =>
    log.info("destination check object left behind (no delete permission?)", {
      key,
      error: String(destinationErrorMessage(error) ?? error),
    }),
  );
}

/** The names of the credential fields given (secrets are never returned, their names are). */
const credentialsKeys = (credentials: DestinationCredentials | null | undefined): string[] =>
  credentials
    ? Object.entries(credentials)
        .filter(([, value]) => value)
        .map(([key]) => key)
    : [];

export async function createDestination(
  db: Database,
  env: SecretsEnv,
  workspaceId: string,
  input: DestinationInput,
  fetcher?: typeof fetch,
): Promise<BulkExportDestination> {
  // Without credentials the deployment's own bucket is used: confine the workspace to its own root.
  const config: DestinationConfig = {
    ...input.config,
    workspace_root: input.credentials ? null : `workspaces/${workspaceId}`,
  };
  input = { ...input, config };
  const credentials = resolveCredentials(env, input.config, input.credentials);
  // Fail on a missing encryption key before touching the bucket.
  const sealed = input.credentials ? await encryptJson(env, input.credentials) : null;
  await checkWriteAccess(env, input.config, credentials, fetcher);
  const now = new Date().toISOString();
  const row = {
    id: crypto.randomUUID(),
    workspaceId,
    destinationType: "s3",
    displayName: input.display_name,
    config: input.config,
    credentials: sealed,
    credentialsKeys: credentialsKeys(input.credentials),
    createdAt: now,
    updatedAt: now,
  };
  await insertDestination(db, row);
  return toDestination(row);
}

/** Rotates credentials (or switches to the deployment's defaults with `credentials: null`), re-checking write access. */
export async function updateDestinationCredentials(
  db: Database,
  env: SecretsEnv,
  workspaceId: string,
  id: string,
  credentials: DestinationCredentials | null,
  fetcher?: typeof fetch,
): Promise<BulkExportDestination> {
  const row = await destinationRow(db, workspaceId, id);
  const config = row.config as DestinationConfig;
  if (!credentials && !config.workspace_root) {
    throw badRequest(
      "This destination was created with its own credentials; rotate them, or create a new destination without credentials to use the deployment's store",
    );
  }
  const resolved = resolveCredentials(env, config, credentials);
  const sealed = credentials ? await encryptJson(env, credentials) : null;
  await checkWriteAccess(env, config, resolved, fetcher);
  const updated = {
    ...row,
    credentials: sealed,
    credentialsKeys: credentialsKeys(credentials),
    updatedAt: new Date().toISOString(),
  };
  await updateDestinationCredentialsRow(db, workspaceId, id, {
    credentials: updated.credentials,
    credentialsKeys: updated.credentialsKeys,
    updatedAt: updated.updatedAt,
  });
  return toDestination(updated);
}

async function destinationRow(db: Database, workspaceId: string, id: string): Promise<ExportDestinationRow> {
  const row = await findDestination(db, workspaceId, id);
  if (!row) throw notFound(`Bulk export destination ${id} not found`);
  return row;
}

export async function getDestination(db: Database, workspaceId: string, id: string): Promise<BulkExportDestination> {
  return toDestination(await destinationRow(db, workspaceId, id));
}

export async function listDestinations(db: Database, workspaceId: string): Promise<BulkExportDestination[]> {
  return (await destinationRows(db, workspaceId)).map(toDestination);
}

/** What the partition writer needs to upload: the destination's config and its bucket, opened with the decrypted credentials. */
export async function destinationTarget(
  db: Database,
  env: SecretsEnv,
  workspaceId: string,
  id: string,
  fetcher?: typeof fetch,
): Promise<{ config: DestinationConfig; bucket: ObjectBucket }> {
  const row = await destinationRow(db, workspaceId, id);
  const config = row.config as DestinationConfig;
  if (config.r2_binding) return { config, bucket: openBucket(env, config, null) };
  const credentials = row.credentials
    ? toS3Credentials(await decryptJson<DestinationCredentials>(env, row.credentials))
    : defaultCredentials(env);
  if (!credentials)
    throw new Error("the destination has no stored credentials and the deployment no default bucket credentials");
  return { config, bucket: openBucket(env, config, credentials, fetcher) };
}
