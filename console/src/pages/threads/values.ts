import type { ThreadState } from "@langchain/langgraph-sdk";
import { isPlainObject, type JsonObject } from "../../json-input.ts";

/** What a checkpoint's values look like: usually an object of channels, but a graph may keep any JSON. */
export type Values = ThreadState["values"];

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqual(item, b[index]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => key in b && deepEqual(a[key], b[key]));
  }
  return false;
}

/**
 * The top-level keys of `edited` that differ from `original`. An update goes through the graph's
 * reducers, so sending unchanged keys would apply them again (an appending list would double).
 */
export function changedKeys(original: unknown, edited: JsonObject): { update: JsonObject; removed: string[] } {
  const before = isPlainObject(original) ? original : {};
  const update: JsonObject = {};
  for (const [key, value] of Object.entries(edited)) {
    if (!(key in before) || !deepEqual(before[key], value)) update[key] = value;
  }
  const removed = Object.keys(before).filter((key) => !(key in edited));
  return { update, removed };
}

export interface Change {
  key: string;
  kind: "added" | "removed" | "changed";
  summary: string;
}

/** A short one-line preview of a JSON value. */
export function preview(value: unknown, max = 48): string {
  let text: string;
  if (Array.isArray(value)) text = `[${value.length} item${value.length === 1 ? "" : "s"}]`;
  else if (isPlainObject(value)) text = `{${Object.keys(value).length} keys}`;
  else text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeArrayChange(before: unknown[], after: unknown[]): string {
  const isPrefix = (short: unknown[], long: unknown[]) => short.every((item, index) => deepEqual(item, long[index]));
  if (after.length > before.length && isPrefix(before, after)) {
    const added = after.slice(before.length);
    const shown = added.length <= 3 ? `: ${added.map((item) => preview(item, 24)).join(", ")}` : "";
    return `${plural(added.length, "item")} added${shown}`;
  }
  if (after.length < before.length && isPrefix(after, before)) {
    return `${plural(before.length - after.length, "item")} removed`;
  }
  return `changed (${plural(before.length, "item")} → ${after.length})`;
}

/** What changed from one checkpoint's values to the next, key by key (top level). */
export function diffValues(before: unknown, after: unknown): Change[] {
  if (!isPlainObject(before) || !isPlainObject(after)) {
    return deepEqual(before, after)
      ? []
      : [{ key: "(values)", kind: "changed", summary: `${preview(before)} → ${preview(after)}` }];
  }
  const changes: Change[] = [];
  for (const [key, value] of Object.entries(after)) {
    if (!(key in before)) {
      changes.push({ key, kind: "added", summary: preview(value) });
      continue;
    }
    const old = before[key];
    if (deepEqual(old, value)) continue;
    let summary: string;
    if (Array.isArray(old) && Array.isArray(value)) summary = describeArrayChange(old, value);
    else if (isPlainObject(old) && isPlainObject(value)) {
      const keys = new Set([...Object.keys(old), ...Object.keys(value)]);
      const changed = [...keys].filter((inner) => !deepEqual(old[inner], value[inner]));
      summary = `${plural(changed.length, "key")} changed: ${changed.slice(0, 4).join(", ")}${changed.length > 4 ? "…" : ""}`;
    } else summary = `${preview(old, 32)} → ${preview(value, 32)}`;
    changes.push({ key, kind: "changed", summary });
  }
  for (const key of Object.keys(before)) {
    if (!(key in after)) changes.push({ key, kind: "removed", summary: preview(before[key]) });
  }
  return changes;
}

/**
 * The node that wrote a checkpoint. Python graphs record `metadata.writes`; JS graphs don't, so a
 * loop checkpoint's writer is the task its parent checkpoint had scheduled.
 */
export function checkpointNode(state: ThreadState, parent: ThreadState | undefined): string {
  const metadata = state.metadata ?? {};
  const writes = metadata.writes;
  if (isPlainObject(writes) && Object.keys(writes).length > 0) return Object.keys(writes).join(", ");
  const source = typeof metadata.source === "string" ? metadata.source : undefined;
  if (source && source !== "loop") return source;
  if (parent) {
    const names = parent.tasks.length > 0 ? parent.tasks.map((task) => task.name) : parent.next;
    if (names.length > 0) return names.join(", ");
  }
  return source ?? "—";
}

/** Node names of a graph a person may update state "as" (not the virtual start and end). */
export function graphNodeNames(nodes: { id: string | number }[] | undefined): string[] {
  return (nodes ?? []).map((node) => String(node.id)).filter((id) => id !== "__start__" && id !== "__end__");
}
