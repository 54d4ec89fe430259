import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes a build output only when its bytes differ (creating its folder), so an unchanged build
 * leaves file times alone and does not make wrangler dev reload. Answers whether it wrote.
 */
export function writeIfChanged(file: string, content: string | Uint8Array): boolean {
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  if (existsSync(file) && readFileSync(file).equals(bytes)) return false;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return true;
}
