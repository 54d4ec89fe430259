/**
 * What a graph module's export is. Duck-typed rather than `instanceof`, so it works across bundles and
 * duplicate copies of @langchain/langgraph (the build step checks exports in Node, the Worker in workerd).
 */
export type GraphExportKind = "compiled" | "uncompiled" | "factory";

export function graphExportKind(value: unknown): GraphExportKind | null {
  if (typeof value === "function") {
    // A class is a function too, but a graph class itself (not an instance) is not usable.
    return /^class[\s{]/.test(Function.prototype.toString.call(value)) ? null : "factory";
  }
  if (value === null || typeof value !== "object") return null;
  const candidate = value as Record<string, unknown>;
  if (typeof candidate.invoke === "function" && typeof candidate.stream === "function" && "nodes" in candidate) {
    return "compiled";
  }
  if (typeof candidate.compile === "function" && "nodes" in candidate) return "uncompiled";
  return null;
}

export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return `a ${typeof value}`;
}

/** A Hono app, duck-typed: the deployment's copy of hono need not be the platform's. */
export function isHonoApp(value: unknown): value is { fetch: (request: Request) => unknown; routes: unknown[] } {
  if (value === null || typeof value !== "object") return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.fetch === "function" &&
    typeof candidate.route === "function" &&
    typeof candidate.use === "function" &&
    Array.isArray(candidate.routes)
  );
}
