import { useMemo, useState } from "react";
import { formatDuration } from "../../format.ts";
import { runSeconds, type TracedRun } from "./tracing-api.ts";

export interface TraceNode {
  run: TracedRun;
  children: TraceNode[];
  depth: number;
}

/**
 * The runs of a trace as a forest by parent_run_id (a run whose parent is not in the list is a
 * root), siblings in execution order (dotted_order sorts as execution order).
 */
export function buildTraceTree(runs: TracedRun[]): TraceNode[] {
  const nodes = new Map<string, TraceNode>(runs.map((run) => [run.id, { run, children: [], depth: 0 }]));
  const roots: TraceNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.run.parent_run_id ? nodes.get(node.run.parent_run_id) : undefined;
    (parent && parent !== node ? parent.children : roots).push(node);
  }
  const key = (node: TraceNode) => node.run.dotted_order || node.run.start_time;
  const visit = (list: TraceNode[], depth: number, seen: Set<TraceNode>) => {
    list.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    for (const node of list) {
      // A malformed lineage (a cycle) must not hang the page.
      if (seen.has(node)) continue;
      seen.add(node);
      node.depth = depth;
      visit(node.children, depth + 1, seen);
    }
  };
  visit(roots, 0, new Set());
  return roots;
}

const millis = (time: string | null | undefined) => (time ? Date.parse(time) : Number.NaN);

/** The trace's time span: from the earliest start to the latest end (a run still open counts its start). */
function span(runs: TracedRun[]): { start: number; total: number } {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const run of runs) {
    const s = millis(run.start_time);
    const e = millis(run.end_time);
    if (Number.isFinite(s)) {
      start = Math.min(start, s);
      end = Math.max(end, s);
    }
    if (Number.isFinite(e)) end = Math.max(end, e);
  }
  if (!Number.isFinite(start)) return { start: 0, total: 1 };
  return { start, total: Math.max(end - start, 1) };
}

/**
 * The trace tree with a waterfall: one row per visible run, indented by depth and collapsible, with
 * its duration and a bar placed by its start and end relative to the trace's first start.
 */
export function TraceTree({
  runs,
  selectedId,
  onSelect,
}: {
  runs: TracedRun[];
  selectedId: string | undefined;
  onSelect: (id: string) => void;
}) {
  const roots = useMemo(() => buildTraceTree(runs), [runs]);
  const { start, total } = useMemo(() => span(runs), [runs]);
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());

  const rows: TraceNode[] = [];
  const walk = (list: TraceNode[]) => {
    for (const node of list) {
      rows.push(node);
      if (!collapsed.has(node.run.id)) walk(node.children);
    }
  };
  walk(roots);

  const toggle = (id: string) =>
    setCollapsed((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <div className="table-wrap">
      <table className="table trace-tree" aria-label="Trace tree">
        <thead>
          <tr>
            <th className="trace-name-col">Run</th>
            <th className="num trace-duration-col">Duration</th>
            <th className="trace-timeline-col">
              <span className="waterfall-scale">
                <span>0</span>
                <span>{formatDuration(total)}</span>
              </span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((node) => {
            const { run } = node;
            const seconds = runSeconds(run);
            const ms = seconds === null ? null : seconds * 1000;
            const offset = Math.max(0, millis(run.start_time) - start);
            const left = (offset / total) * 100;
            const width = ms === null ? 0 : Math.min((ms / total) * 100, 100 - left);
            const selected = run.id === selectedId;
            const open = !collapsed.has(run.id);
            return (
              <tr
                key={run.id}
                className={selected ? "selected" : undefined}
                data-run-id={run.id}
                data-depth={node.depth}
              >
                <td className="trace-name" style={{ paddingLeft: `calc(0.4rem + ${node.depth} * var(--tree-indent))` }}>
                  {node.children.length ? (
                    <button
                      type="button"
                      className="tree-toggle"
                      aria-expanded={open}
                      aria-label={`${open ? "Collapse" : "Expand"} ${run.name}`}
                      onClick={() => toggle(run.id)}
                    >
                      {open ? "▾" : "▸"}
                    </button>
                  ) : (
                    <span className="tree-toggle-space" />
                  )}
                  <button
                    type="button"
                    className="link run-name"
                    aria-pressed={selected}
                    onClick={() => onSelect(run.id)}
                  >
                    {run.name}
                  </button>
                  <span className={`run-type run-type-${run.run_type}`}>{run.run_type}</span>
                  {run.error || run.status === "error" ? <span className="badge badge-bad">error</span> : null}
                  {!open && node.children.length ? <span className="muted small"> +{node.children.length}</span> : null}
                </td>
                <td className="num nowrap" data-testid="run-duration" data-ms={ms ?? ""}>
                  {formatDuration(ms)}
                </td>
                <td className="trace-timeline">
                  <div className="waterfall" title={`+${formatDuration(offset)} · ${formatDuration(ms)}`}>
                    <div
                      className={`waterfall-bar${run.error ? " waterfall-bar-error" : ""}`}
                      data-testid="waterfall-bar"
                      style={{ left: `${left}%`, width: `${width}%` }}
                    />
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
