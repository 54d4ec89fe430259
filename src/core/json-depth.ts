/**
 * How deeply a parsed JSON value nests, measured without recursion so that a hostile body of any
 * depth is measured safely (JSON.parse itself copes with depths that overflow recursive code).
 * A scalar has depth 0, `{}` and `[]` depth 1, `{"a": []}` depth 2.
 */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** The first object key, at any depth, for which `isBad` holds (walked without recursion). */
export function findKey(value: unknown, isBad: (key: string) => boolean): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== "object") continue;
    if (Array.isArray(current)) {
      for (const element of current) if (element !== null && typeof element === "object") pending.push(element);
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      if (isBad(key)) return key;
      if (child !== null && typeof child === "object") pending.push(child);
    }
  }
  return undefined;
}
