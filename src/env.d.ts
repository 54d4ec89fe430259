// Secrets are not in wrangler.toml, so `wrangler types` cannot see them: declare them here.
interface Env {
  /** Organization-admin API key that bootstraps the default organization and workspace. */
  BOOTSTRAP_API_KEY?: string;
}
