/** Formatting shared by every page. */

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Milliseconds between two timestamps (ISO strings or numbers), or undefined if either is missing. */
export function elapsed(start: string | number | null | undefined, end: string | number | null | undefined) {
  if (start === null || start === undefined || end === null || end === undefined) return undefined;
  const a = typeof start === "number" ? start : Date.parse(start);
  const b = typeof end === "number" ? end : Date.parse(end);
  return Number.isFinite(a) && Number.isFinite(b) ? b - a : undefined;
}

export function formatTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

export function formatNumber(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return value.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatCost(value: number | string | null | undefined): string {
  const n = typeof value === "string" ? Number(value) : value;
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return `$${n < 0.01 && n > 0 ? n.toFixed(6) : n.toFixed(4)}`;
}

/**
 * A short form of an id. Time-ordered ids (runs, checkpoints: UUIDv6/v7) start with the clock, so
 * their heads repeat across a thread and the tail is what tells two apart; random ids are fine either way.
 */
export function shortId(id: string | null | undefined): string {
  return id ? `…${id.slice(-8)}` : "—";
}
