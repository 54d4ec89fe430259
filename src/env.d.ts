// Secrets are not in wrangler.toml, so `wrangler types` cannot see them: declare them here.
interface Env {
  /**
   * The limits guard (src/limits-guard/): "paid" or "free" enforces that plan's Cloudflare limits
   * locally; unset or "off" in a deployment. The local runtime and the test suites set "paid".
   */
  LIMITS_GUARD?: string;
  /** Organization-admin API key that bootstraps the default organization and workspace. */
  BOOTSTRAP_API_KEY?: string;
  /** Encrypts bulk-export destination credentials at rest (any random string of 16+ characters). */
  EXPORT_ENCRYPTION_KEY?: string;
  /** Signs the pre-signed attachment URLs of traced runs (16+ characters); unset: EXPORT_ENCRYPTION_KEY signs them. */
  ATTACHMENT_URL_SECRET?: string;
  /** The deployment's default bucket credentials, used by destinations created without credentials. */
  EXPORT_DEFAULT_ACCESS_KEY_ID?: string;
  EXPORT_DEFAULT_SECRET_ACCESS_KEY?: string;
  EXPORT_DEFAULT_SESSION_TOKEN?: string;
  /** Where the default credentials are valid (unset: AWS by region). */
  EXPORT_DEFAULT_ENDPOINT_URL?: string;
  /**
   * An optional var (no default in wrangler.toml): lowers the row bounds of stored JSON (metadata,
   * config, context: 262144 bytes; store values and cron payloads 4x that), never raises them.
   */
  MAX_JSON_FIELD_BYTES?: string;
}
