const TONES: Record<string, string> = {
  success: "ok",
  completed: "ok",
  idle: "ok",
  error: "bad",
  failed: "bad",
  timeout: "bad",
  interrupted: "warn",
  cancelled: "warn",
  running: "busy",
  pending: "busy",
  busy: "busy",
  created: "busy",
};

/** A run, thread or export status as a colored pill. */
export function StatusBadge({ status }: { status: string | null | undefined }) {
  const text = status ?? "unknown";
  return (
    <span className={`badge badge-${TONES[text.toLowerCase()] ?? "neutral"}`} data-status={text}>
      {text}
    </span>
  );
}
