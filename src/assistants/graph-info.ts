import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { LoadedGraph } from "../deployment/graphs.ts";

/** Graph drawing, JSON schemas and subgraphs of an assistant's graph, as the official server shows them. */

type JsonSchema = Record<string, unknown>;

export interface GraphSchemas {
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema: JsonSchema | null;
  context_schema: JsonSchema | null;
}

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/** A LangChain message as it travels over the API. */
const MESSAGE_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    type: { type: "string" },
    content: { anyOf: [{ type: "string" }, { type: "array", items: { type: "object" } }] },
    id: { type: ["string", "null"] },
    name: { type: ["string", "null"] },
    additional_kwargs: { type: "object" },
    response_metadata: { type: "object" },
    tool_calls: { type: "array", items: { type: "object" } },
  },
  required: ["content"],
};

/** Channels as the builder declares them (an Annotation state or a plain channel map). */
interface Builder {
  channels?: Record<string, unknown>;
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
  _schemaDefinition?: unknown;
}

function channelNames(definition: unknown, fallback: Record<string, unknown> | undefined): string[] {
  const spec =
    definition && typeof definition === "object" && "spec" in definition
      ? (definition as { spec: object }).spec
      : definition;
  const names = spec && typeof spec === "object" ? Object.keys(spec) : Object.keys(fallback ?? {});
  return names.filter((name) => !name.startsWith("__"));
}

/**
 * Annotation states carry no types at run time (only TypeScript knows them), so their schema lists
 * the channels, typed only where the channel's meaning is known (`messages`). Zod and StateSchema
 * states get their full schema from LangGraph.
 */
function channelSchema(graphId: string, names: string[], kind: string): JsonSchema {
  return {
    $schema: DRAFT_07,
    title: `${graphId} ${kind}`,
    type: "object",
    properties: Object.fromEntries(
      names.map((name) => [name, name === "messages" ? { type: "array", items: MESSAGE_SCHEMA } : {}]),
    ),
  };
}

const withDraft = (schema: unknown): JsonSchema | null =>
  schema && typeof schema === "object" ? { $schema: DRAFT_07, ...(schema as JsonSchema) } : null;

export function graphSchemas(graph: LoadedGraph, graphId: string): GraphSchemas {
  const builder = ((graph as unknown as { builder?: Builder }).builder ?? {}) as Builder;
  const state =
    withDraft(getStateTypeSchema(graph)) ??
    channelSchema(graphId, channelNames(builder._schemaDefinition, builder.channels), "state");
  const input =
    withDraft(getInputTypeSchema(graph)) ??
    channelSchema(
      graphId,
      channelNames(builder._inputDefinition ?? builder._schemaDefinition, builder.channels),
      "input",
    );
  const output =
    withDraft(getOutputTypeSchema(graph)) ??
    channelSchema(
      graphId,
      channelNames(builder._outputDefinition ?? builder._schemaDefinition, builder.channels),
      "output",
    );
  const config = withDraft(getConfigTypeSchema(graph));
  // LangGraph.js has one runtime configuration schema; it describes both config and context.
  return {
    input_schema: input,
    output_schema: output,
    state_schema: state,
    config_schema: config,
    context_schema: config,
  };
}

export async function drawGraph(graph: LoadedGraph, xray: boolean | number): Promise<Record<string, unknown>> {
  const drawable = await graph.getGraphAsync({ xray } as Parameters<LoadedGraph["getGraphAsync"]>[0]);
  return drawable.toJSON();
}

/** Schemas of the graph's subgraphs, keyed by namespace (`parent|child` when recursing). */
export async function subgraphSchemas(
  graph: LoadedGraph,
  graphId: string,
  namespace: string | undefined,
  recurse: boolean,
): Promise<Record<string, GraphSchemas>> {
  const result: Record<string, GraphSchemas> = {};
  for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
    result[name] = graphSchemas(subgraph as LoadedGraph, `${graphId}|${name}`);
  }
  return result;
}
