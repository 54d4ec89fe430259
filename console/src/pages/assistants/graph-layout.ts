import dagre from "@dagrejs/dagre";

/** The drawable graph as GET /assistants/{id}/graph returns it (LangGraph's `Graph.toJSON()`). */
export interface GraphJson {
  nodes: { id: string; type?: string; data?: unknown; metadata?: Record<string, unknown> | null }[];
  edges: { source: string; target: string; conditional?: boolean; data?: unknown }[];
}

export interface LaidNode {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  kind: "start" | "end" | "node";
  /** A compiled graph drawn as one node (not expanded by xray). */
  subgraph: boolean;
  /** "before", "after" or "before,after": where the graph was compiled to interrupt. */
  interrupt?: string;
}

export interface LaidEdge {
  key: string;
  source: string;
  target: string;
  conditional: boolean;
  label?: string;
  points: { x: number; y: number }[];
}

/** A subgraph expanded by xray: the box around the nodes whose ids start with `<id>:`. */
export interface LaidGroup {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: LaidNode[];
  edges: LaidEdge[];
  groups: LaidGroup[];
}

const NODE_HEIGHT = 36;
const CHAR_WIDTH = 7.5;
const MARGIN = 16;

/** The groups a node belongs to, outermost first: "a:b:c" → ["a", "a:b"]. */
export function groupsOf(id: string): string[] {
  const parts = id.split(":");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join(":"));
}

const lastPart = (id: string) => id.slice(id.lastIndexOf(":") + 1);

/** LangGraph marks a compiled graph node by its runnable's class path. */
function isCompiledGraph(node: GraphJson["nodes"][number], subgraphNames: Set<string>): boolean {
  if (subgraphNames.has(node.id)) return true;
  const data = node.data as { id?: unknown } | undefined;
  return Array.isArray(data?.id) && data.id.some((part) => part === "CompiledStateGraph" || part === "CompiledGraph");
}

function edgeLabel(data: unknown): string | undefined {
  if (typeof data === "string" && data) return data;
  return undefined;
}

/**
 * Lays the graph out top to bottom with dagre; xray subgraphs (ids `parent:child`) become compound
 * clusters so dagre keeps their nodes together and gives each a bounding box.
 */
export function layoutGraph(graph: GraphJson, subgraphNames: Set<string> = new Set()): GraphLayout {
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 48 });
  g.setDefaultEdgeLabel(() => ({}));
  const groupIds = new Set<string>();
  for (const node of graph.nodes) for (const group of groupsOf(node.id)) groupIds.add(group);
  for (const group of groupIds) {
    g.setNode(group, { width: 0, height: 0 });
    const parents = groupsOf(group);
    if (parents.length) g.setParent(group, parents[parents.length - 1]);
  }
  for (const node of graph.nodes) {
    const label = lastPart(node.id);
    const interrupt = typeof node.metadata?.__interrupt === "string" ? node.metadata.__interrupt : undefined;
    const width = Math.max(72, label.length * CHAR_WIDTH + 28 + (interrupt ? 18 : 0));
    g.setNode(node.id, { width, height: NODE_HEIGHT });
    const parents = groupsOf(node.id);
    if (parents.length) g.setParent(node.id, parents[parents.length - 1]);
  }
  graph.edges.forEach((edge, i) => {
    const label = edgeLabel(edge.data);
    g.setEdge(
      edge.source,
      edge.target,
      label ? { width: label.length * 6.5 + 8, height: 16, labelpos: "c" } : {},
      String(i),
    );
  });
  dagre.layout(g);

  const nodes: LaidNode[] = graph.nodes.map((node) => {
    const laid = g.node(node.id);
    const plain = lastPart(node.id);
    return {
      id: node.id,
      label: plain,
      x: laid.x ?? 0,
      y: laid.y ?? 0,
      width: laid.width,
      height: laid.height,
      kind: plain === "__start__" ? "start" : plain === "__end__" ? "end" : "node",
      subgraph: isCompiledGraph(node, subgraphNames),
      interrupt: typeof node.metadata?.__interrupt === "string" ? node.metadata.__interrupt : undefined,
    };
  });
  const edges: LaidEdge[] = graph.edges.map((edge, i) => {
    const laid = g.edge(edge.source, edge.target, String(i));
    return {
      key: `${edge.source}->${edge.target}#${i}`,
      source: edge.source,
      target: edge.target,
      conditional: Boolean(edge.conditional),
      label: edgeLabel(edge.data),
      points: laid?.points ?? [],
    };
  });
  // A group's box is drawn around its members (dagre keeps them together), with room for its name on top.
  const groups: LaidGroup[] = [...groupIds]
    .sort((a, b) => a.split(":").length - b.split(":").length)
    .map((id) => {
      const members = nodes.filter((node) => node.id.startsWith(`${id}:`));
      const depth = (node: LaidNode) => node.id.split(":").length - id.split(":").length - 1;
      const pad = (node: LaidNode) => 10 * (depth(node) + 1);
      const left = Math.min(...members.map((n) => n.x - n.width / 2 - pad(n)));
      const right = Math.max(...members.map((n) => n.x + n.width / 2 + pad(n)));
      const top = Math.min(...members.map((n) => n.y - n.height / 2 - pad(n) - 16 * (depth(n) + 1)));
      const bottom = Math.max(...members.map((n) => n.y + n.height / 2 + pad(n)));
      return { id, label: lastPart(id), x: left, y: top, width: right - left, height: bottom - top };
    });
  // Everything drawn, shifted so nothing sits left of or above the origin.
  const xs = [
    ...nodes.flatMap((n) => [n.x - n.width / 2, n.x + n.width / 2]),
    ...groups.flatMap((b) => [b.x, b.x + b.width]),
    ...edges.flatMap((e) => e.points.map((p) => p.x)),
  ];
  const ys = [
    ...nodes.flatMap((n) => [n.y - n.height / 2, n.y + n.height / 2]),
    ...groups.flatMap((b) => [b.y, b.y + b.height]),
    ...edges.flatMap((e) => e.points.map((p) => p.y)),
  ];
  if (xs.length === 0) return { width: 0, height: 0, nodes, edges, groups };
  const dx = MARGIN - Math.min(...xs);
  const dy = MARGIN - Math.min(...ys);
  for (const node of nodes) {
    node.x += dx;
    node.y += dy;
  }
  for (const group of groups) {
    group.x += dx;
    group.y += dy;
  }
  for (const edge of edges) edge.points = edge.points.map((p) => ({ x: p.x + dx, y: p.y + dy }));
  return {
    width: Math.max(...xs) + dx + MARGIN,
    height: Math.max(...ys) + dy + MARGIN,
    nodes,
    edges,
    groups,
  };
}
