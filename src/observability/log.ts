/**
 * Structured JSON logs: one object per line, picked up by Workers Logs / `wrangler tail`.
 * Callers pass fields, never secrets (API keys, credentials, auth tokens).
 */
type Fields = Record<string, unknown>;

function write(level: "debug" | "info" | "warn" | "error", message: string, fields: Fields): void {
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

export const log = {
  debug: (message: string, fields: Fields = {}) => write("debug", message, fields),
  info: (message: string, fields: Fields = {}) => write("info", message, fields),
  warn: (message: string, fields: Fields = {}) => write("warn", message, fields),
  error: (message: string, fields: Fields = {}) => write("error", message, fields),
};
