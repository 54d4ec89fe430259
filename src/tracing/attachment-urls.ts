import { forbidden } from "../core/errors.ts";

/**
 * Pre-signed attachment URLs, as `s3_urls["attachment.<name>"].presigned_url` of a run: the SDKs
 * download them with a plain GET, without the API key. A URL names one object (workspace, run,
 * attachment name) and an expiry, and carries an HMAC-SHA256 of exactly those under the deployment's
 * `ATTACHMENT_URL_SECRET` (else `EXPORT_ENCRYPTION_KEY`). Changing the object, the expiry or the
 * signature makes it a 403; the secret never leaves the server.
 */

type SigningEnv = Pick<Env, "ATTACHMENT_URL_SECRET" | "EXPORT_ENCRYPTION_KEY">;

/** How long a pre-signed URL stays valid: long enough for a client that reads a run and then its files. */
export const ATTACHMENT_URL_TTL_SECONDS = 3600;

/** The public download path of an attachment; the query carries `expires` and `signature`. */
export const signedAttachmentPath = (workspaceId: string, runId: string, name: string) =>
  `/api/v1/attachments/${workspaceId}/${runId}/${encodeURIComponent(name)}`;

/** Requests of signed downloads need no API key (see isPublicRequest in app.ts). */
export const SIGNED_ATTACHMENT_PATH = /^\/api\/v1\/attachments\/[^/]+\/[^/]+\/[^/]+$/;

const MIN_SECRET_LENGTH = 16;
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function secretOf(env: SigningEnv): string | null {
  for (const secret of [env.ATTACHMENT_URL_SECRET, env.EXPORT_ENCRYPTION_KEY])
    if (secret && secret.length >= MIN_SECRET_LENGTH) return secret;
  return null;
}

function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keys.set(secret, key);
  }
  return key;
}

/**
 * What is signed. The label keeps these MACs apart from any other use of the same secret, and JSON
 * keeps the fields apart (an attachment name may hold any character but a dot or a slash).
 */
const signedText = (workspaceId: string, runId: string, name: string, expires: number) =>
  encoder.encode(JSON.stringify(["agent-platform attachment url v1", workspaceId, runId, name, expires]));

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** Equal strings, compared in time that depends only on their length (which is public: 43). */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

type Attachment = { name: string; mime_type: string; size: number };

/**
 * A run's `s3_urls`: one `attachment.<name>` entry per attachment. Without a secret the URL is the
 * authenticated download route (it then needs the API key, as before).
 */
export async function attachmentS3Urls(
  env: SigningEnv,
  origin: string,
  workspaceId: string,
  runId: string,
  attachments: Attachment[],
  now = Date.now(),
): Promise<Record<string, { presigned_url: string; mime_type: string; size: number }>> {
  const secret = secretOf(env);
  const key = secret ? await keyFor(secret) : null;
  const expires = Math.floor(now / 1000) + ATTACHMENT_URL_TTL_SECONDS;
  const entries = await Promise.all(
    attachments.map(async (a) => {
      let url = `${origin}/api/v1/runs/${runId}/attachments/${encodeURIComponent(a.name)}`;
      if (key) {
        const mac = await crypto.subtle.sign("HMAC", key, signedText(workspaceId, runId, a.name, expires));
        url = `${origin}${signedAttachmentPath(workspaceId, runId, a.name)}?expires=${expires}&signature=${base64url(new Uint8Array(mac))}`;
      }
      return [`attachment.${a.name}`, { presigned_url: url, mime_type: a.mime_type, size: a.size }] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * Checks a signed download's path and query; throws a 403 that says what is wrong. Only the exact URL
 * that was issued passes: the path as `signedAttachmentPath` writes it (lower-case ids, the name
 * encoded once), `expires` in plain decimal, and the signature as the server writes it. The signature
 * is compared as text, not decoded: 43 base64url characters carry 258 bits for 256, so a decoder
 * takes four spellings of the last character as the same bytes.
 */
export async function checkAttachmentSignature(
  env: SigningEnv,
  object: { workspaceId: string; runId: string; name: string },
  query: { expires?: string; signature?: string },
  path: string,
  now = Date.now(),
): Promise<void> {
  const secret = secretOf(env);
  if (!secret) throw forbidden("Signed attachment URLs are not enabled on this deployment; send X-Api-Key instead");
  if (!query.expires || !query.signature)
    throw forbidden("This attachment URL is not signed: it needs the expires and signature of a run's s3_urls");
  const expires = /^[1-9]\d{0,11}$/.test(query.expires) ? Number(query.expires) : Number.NaN;
  let valid =
    Number.isSafeInteger(expires) && path === signedAttachmentPath(object.workspaceId, object.runId, object.name);
  if (valid) {
    const mac = await crypto.subtle.sign(
      "HMAC",
      await keyFor(secret),
      signedText(object.workspaceId, object.runId, object.name, expires),
    );
    valid = sameText(query.signature, base64url(new Uint8Array(mac)));
  }
  // A bad signature is reported before the expiry, so a forged expiry learns nothing more.
  if (!valid) throw forbidden("The attachment URL's signature does not match this attachment");
  if (expires * 1000 <= now)
    throw forbidden(`The attachment URL expired at ${new Date(expires * 1000).toISOString()}; read the run again`);
}
