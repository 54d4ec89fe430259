import { v5 as uuidv5 } from "uuid";
import { deployment } from "../../deployment/index.ts";

/** The namespace the official server derives system assistant ids from (RFC 4122's URL namespace). */
const SYSTEM_ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

export function systemAssistantId(graphId: string): string {
  return uuidv5(graphId, SYSTEM_ASSISTANT_NAMESPACE);
}

/** What a run needs from its assistant. */
export interface ResolvedAssistant {
  assistantId: string;
  graphId: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

const systemAssistants = new Map(
  deployment.graphs.map((graph) => [
    systemAssistantId(graph.id),
    { assistantId: systemAssistantId(graph.id), graphId: graph.id, config: {}, context: {}, metadata: { created_by: "system" } },
  ]),
);

/**
 * A run's `assistant_id` may be a graph id (its system assistant) or an assistant id. Undefined when
 * neither names anything in this deployment.
 */
export async function resolveAssistant(_env: Env, _workspaceId: string, assistantIdOrGraphId: string): Promise<ResolvedAssistant | undefined> {
  const byGraph = deployment.graphs.find((graph) => graph.id === assistantIdOrGraphId);
  if (byGraph) return systemAssistants.get(systemAssistantId(byGraph.id));
  return systemAssistants.get(assistantIdOrGraphId);
}

export const assistantNotFound = (id: string) =>
  `No assistant found for "${id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`;
