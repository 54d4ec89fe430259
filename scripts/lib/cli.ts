/** What `npm start` and `npm run dev` share: their flags and the local secrets they need. */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "./deployment.ts";
import { DEV_API_KEY } from "./wrangler.ts";

/** The value of `--name value` / `--name=value` in `argv` (else `fallback`), and the arguments it took. */
export function option(argv: string[], name: string, fallback: string): [string, string[]] {
  const at = argv.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  if (at < 0) return [fallback, []];
  const value = argv[at].includes("=") ? argv[at].slice(name.length + 1) : argv[at + 1];
  return [value, argv[at].includes("=") ? [argv[at]] : [argv[at], argv[at + 1]]];
}

/** Local secrets the Worker needs, written to `dir`/.dev.vars when missing (never overwritten). */
export function ensureDevVars(dir: string = PROJECT_ROOT): void {
  const file = join(dir, ".dev.vars");
  let current = existsSync(file) ? readFileSync(file, "utf8") : "";
  const add = (name: string, value: string, note: string) => {
    if (new RegExp(`^\\s*${name}\\s*=`, "m").test(current)) return;
    current = `${current && !current.endsWith("\n") ? `${current}\n` : current}${name}=${value}\n`;
    writeFileSync(file, current);
    console.log(`Wrote ${note} to .dev.vars`);
  };
  add("BOOTSTRAP_API_KEY", DEV_API_KEY, `the development API key (X-Api-Key: ${DEV_API_KEY})`);
  add("EXPORT_ENCRYPTION_KEY", randomBytes(32).toString("base64url"), "a random key for bulk-export credentials");
}
