import { DomainError, unavailable } from "../core/errors.ts";

/**
 * Destination credentials at rest: AES-256-GCM under a key derived from the `EXPORT_ENCRYPTION_KEY`
 * secret. Stored as `v1.<iv>.<ciphertext>` (base64url); the version names the scheme so a future
 * key rotation can tell old records apart.
 */

const SCHEME = "v1";
const encoder = new TextEncoder();

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const fromBase64url = (text: string) =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

const keys = new Map<string, Promise<CryptoKey>>();

/** The AES key for a secret: SHA-256 of its text, so any long random string works as the secret. */
function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .digest("SHA-256", encoder.encode(secret))
      .then((raw) => crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
    keys.set(secret, key);
  }
  return key;
}

function secretOf(env: { EXPORT_ENCRYPTION_KEY?: string }): string {
  const secret = env.EXPORT_ENCRYPTION_KEY;
  if (!secret || secret.length < 16) {
    throw unavailable(
      "Bulk export credentials cannot be stored: the EXPORT_ENCRYPTION_KEY secret is not set (at least 16 characters)",
    );
  }
  return secret;
}

export async function encryptJson(env: { EXPORT_ENCRYPTION_KEY?: string }, value: unknown): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await keyFor(secretOf(env)),
    encoder.encode(JSON.stringify(value)),
  );
  return `${SCHEME}.${base64url(iv)}.${base64url(new Uint8Array(ciphertext))}`;
}

export async function decryptJson<T>(env: { EXPORT_ENCRYPTION_KEY?: string }, sealed: string): Promise<T> {
  const [scheme, iv, ciphertext] = sealed.split(".");
  if (scheme !== SCHEME || !iv || !ciphertext) throw new Error("stored credentials are not in a known format");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(iv) },
      await keyFor(secretOf(env)),
      fromBase64url(ciphertext),
    );
    return JSON.parse(new TextDecoder().decode(plain)) as T;
  } catch (error) {
    if (error instanceof DomainError) throw error;
    // Never echo the ciphertext or the cause: a wrong key is the only likely reason.
    throw new Error("stored credentials could not be decrypted: was EXPORT_ENCRYPTION_KEY changed?");
  }
}
