/** API key material: generation, hashing and the short form shown in listings. */

const KEY_PREFIX = "lgp_";

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A new key: 256 bits of randomness behind a recognisable prefix. */
export function generateApiKey(): string {
  return KEY_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Keys are high-entropy random strings, so a plain SHA-256 is a safe storage hash (no need for a slow
 * password hash); the hex digest is what D1 indexes and what the lookup compares.
 */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Enough of the key to recognise it in a list, never enough to use it. */
export function shortKey(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}...${key.slice(-4)}`;
}
