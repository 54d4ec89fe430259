import { useMemo } from "react";
import { type GraphJson, type LaidEdge, type LaidNode, layoutGraph } from "./graph-layout.ts";

/** A path through dagre's edge points, rounded at the bends. */
function edgePath(points: { x: number; y: number }[]): string {
  if (points.length === 0) return "";
  let d = `M${points[0].x},${points[0].y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const mid = { x: (points[i].x + points[i + 1].x) / 2, y: (points[i].y + points[i + 1].y) / 2 };
    d += ` Q${points[i].x},${points[i].y} ${mid.x},${mid.y}`;
  }
  const last = points[points.length - 1];
  return `${d} L${last.x},${last.y}`;
}

function Node({ node }: { node: LaidNode }) {
  const left = node.x - node.width / 2;
  const top = node.y - node.height / 2;
  const terminal = node.kind !== "node";
  return (
    <g
      className={`graph-node graph-node-${node.kind}${node.subgraph ? " graph-node-subgraph" : ""}`}
      data-node-id={node.id}
      data-subgraph={node.subgraph ? "true" : undefined}
      data-interrupt={node.interrupt}
    >
      <title>
        {node.id}
        {node.subgraph ? " (subgraph)" : ""}
        {node.interrupt ? ` (interrupts ${node.interrupt})` : ""}
      </title>
      <rect x={left} y={top} width={node.width} height={node.height} rx={terminal ? node.height / 2 : 6} />
      {node.subgraph ? (
        <rect
          className="graph-subgraph-inner"
          x={left + 3}
          y={top + 3}
          width={node.width - 6}
          height={node.height - 6}
          rx={4}
        />
      ) : null}
      <text x={node.x - (node.interrupt ? 8 : 0)} y={node.y} dominantBaseline="central" textAnchor="middle">
        {node.label}
      </text>
      {node.interrupt ? (
        // A pause sign: the graph stops here (before and/or after the node) for a human.
        <g className="graph-interrupt" aria-label={`interrupts ${node.interrupt}`}>
          <circle cx={left + node.width - 14} cy={node.y} r={8} />
          <rect x={left + node.width - 17.5} y={node.y - 4} width={2.5} height={8} />
          <rect x={left + node.width - 13} y={node.y - 4} width={2.5} height={8} />
        </g>
      ) : null}
    </g>
  );
}

function Edge({ edge }: { edge: LaidEdge }) {
  const middle = edge.points[Math.floor(edge.points.length / 2)];
  return (
    <g
      className={`graph-edge${edge.conditional ? " graph-edge-conditional" : ""}`}
      data-edge={`${edge.source}->${edge.target}`}
      data-conditional={edge.conditional ? "true" : "false"}
    >
      <path
        d={edgePath(edge.points)}
        markerEnd="url(#graph-arrow)"
        strokeDasharray={edge.conditional ? "5 4" : undefined}
      />
      {edge.label && middle ? (
        <text className="graph-edge-label" x={middle.x} y={middle.y} textAnchor="middle" dominantBaseline="central">
          {edge.label}
        </text>
      ) : null}
    </g>
  );
}

/**
 * A graph drawn as SVG from its dagre layout: nodes (start and end rounded, subgraphs doubled,
 * interrupts marked), edges (conditional ones dashed) and xray subgraphs boxed. Drawn at its natural
 * size inside a scrolling frame, so it stays readable on a phone.
 */
export function GraphDiagram({ graph, subgraphs, title }: { graph: GraphJson; subgraphs?: string[]; title: string }) {
  const layout = useMemo(() => layoutGraph(graph, new Set(subgraphs)), [graph, subgraphs]);
  return (
    <div className="graph-frame">
      <svg
        className="graph-diagram"
        role="img"
        aria-label={title}
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
      >
        <defs>
          <marker
            id="graph-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M0,0 L10,5 L0,10 z" className="graph-arrow-head" />
          </marker>
        </defs>
        {layout.groups.map((group) => (
          <g key={group.id} className="graph-group" data-group={group.id}>
            <rect x={group.x} y={group.y} width={group.width} height={group.height} rx={8} />
            <text x={group.x + 8} y={group.y + 14}>
              {group.label}
            </text>
          </g>
        ))}
        {layout.edges.map((edge) => (
          <Edge key={edge.key} edge={edge} />
        ))}
        {layout.nodes.map((node) => (
          <Node key={node.id} node={node} />
        ))}
      </svg>
    </div>
  );
}

/** What the diagram's marks mean, drawn with the diagram's own marks. */
export function GraphLegend() {
  return (
    <p className="graph-legend muted">
      <span>
        <svg width="28" height="10" aria-hidden="true" className="graph-edge">
          <path d="M0,5 L28,5" />
        </svg>{" "}
        edge
      </span>
      <span>
        <svg width="28" height="10" aria-hidden="true" className="graph-edge graph-edge-conditional">
          <path d="M0,5 L28,5" strokeDasharray="5 4" />
        </svg>{" "}
        conditional edge
      </span>
      <span>
        <svg width="24" height="16" aria-hidden="true" className="graph-node graph-node-subgraph">
          <rect x="1" y="1" width="22" height="14" rx="3" />
          <rect className="graph-subgraph-inner" x="3.5" y="3.5" width="17" height="9" rx="2" />
        </svg>{" "}
        subgraph
      </span>
      <span>
        <svg width="16" height="16" aria-hidden="true" className="graph-interrupt">
          <circle cx="8" cy="8" r="7" />
          <rect x="4.8" y="4.5" width="2.2" height="7" />
          <rect x="9" y="4.5" width="2.2" height="7" />
        </svg>{" "}
        interrupt point
      </span>
    </p>
  );
}
