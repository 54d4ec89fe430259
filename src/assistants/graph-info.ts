import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isZodSchemaV3, isZodSchemaV4 } from "@langchain/core/utils/types";
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { LoadedGraph } from "../deployment/graphs.ts";
import type { StaticGraphSchema, StaticGraphSchemas } from "../deployment/manifest.ts";

/**
 * Graph drawing, JSON schemas and subgraphs of an assistant's graph, as the official server shows them.
 *
 * Schemas come, in the official LangGraph.js server's order, from the graph's runtime schema definitions
 * (a StateSchema, then zod through LangGraph's schema registry, then zod converted directly), else from
 * the build's static extraction of the graph's TypeScript types (manifest `staticSchemas`). Last, for a
 * graph whose static extraction failed, a schema that lists the state's channels.
 */

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

/** The builder's state definitions, as LangGraph keeps them (types and runtime schemas). */
interface Builder {
  channels?: Record<string, unknown>;
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
  _schemaDefinition?: unknown;
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
}

const builderOf = (graph: LoadedGraph): Builder | undefined => (graph as unknown as { builder?: Builder }).builder;

/** An input that is the state with every field optional (StateGraph's marker for "no input schema given"). */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");

interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}

function isStateSchemaLike(value: unknown): value is StateSchemaLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<StateSchemaLike>).getJsonSchema === "function" &&
    typeof (value as Partial<StateSchemaLike>).getInputJsonSchema === "function"
  );
}

const present = (schema: StaticGraphSchema): StaticGraphSchema | undefined =>
  Object.values(schema).some((value) => value != null) ? schema : undefined;

/** A state declared as a StateSchema: LangGraph renders it (config is not part of a StateSchema). */
/** A schema source that throws on an exotic schema counts as absent: the next source answers. */
function safely<T>(extract: () => T | undefined): T | undefined {
  try {
    return extract();
  } catch {
    return undefined;
  }
}

function fromStateSchema(builder: Builder): StaticGraphSchema | undefined {
  const { _schemaRuntimeDefinition: state, _inputRuntimeDefinition: input, _outputRuntimeDefinition: output } = builder;
  if (!isStateSchemaLike(state) && !isStateSchemaLike(input) && !isStateSchemaLike(output)) return undefined;
  let inputSchema: JsonSchema | undefined;
  if (isStateSchemaLike(input)) inputSchema = input.getInputJsonSchema();
  else if (input === PARTIAL_STATE && isStateSchemaLike(state)) inputSchema = state.getInputJsonSchema();
  return present({
    state: isStateSchemaLike(state) ? state.getJsonSchema() : undefined,
    input: inputSchema,
    output: isStateSchemaLike(output) ? output.getJsonSchema() : undefined,
  });
}

/** Zod states known to LangGraph's schema registry (which applies `withLangGraph` metadata). */
function fromZodRegistry(graph: LoadedGraph): StaticGraphSchema | undefined {
  try {
    return present({
      // The state schema is the update type, as the official server shows it.
      state: getUpdateTypeSchema(graph) as JsonSchema | undefined,
      input: getInputTypeSchema(graph) as JsonSchema | undefined,
      output: getOutputTypeSchema(graph) as JsonSchema | undefined,
      config: getConfigTypeSchema(graph) as JsonSchema | undefined,
    });
  } catch {
    return undefined;
  }
}

/** Any other zod schema the builder holds, converted directly. */
function fromZod(builder: Builder): StaticGraphSchema | undefined {
  const convert = (schema: unknown): JsonSchema | undefined => {
    if (!schema || !(isZodSchemaV4(schema) || isZodSchemaV3(schema))) return undefined;
    try {
      return toJsonSchema(schema) as JsonSchema;
    } catch {
      return undefined;
    }
  };
  const state = convert(builder._schemaRuntimeDefinition);
  return present({
    state,
    input: convert(builder._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : undefined),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  });
}

/** The schemas the graph's runtime definitions give, in the official server's order, if any. */
export function runtimeSchemas(graph: LoadedGraph): StaticGraphSchema | undefined {
  const builder = builderOf(graph);
  if (!builder) return undefined;
  return safely(() => fromStateSchema(builder)) ?? fromZodRegistry(graph) ?? fromZod(builder);
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
 * Annotation states carry no types at run time (only TypeScript knows them), so without static schemas
 * their schema lists the channels, typed only where the channel's meaning is known (`messages`).
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

/** The last resort: the channels the builder declares. */
function channelSchemas(graph: LoadedGraph, graphId: string): StaticGraphSchema {
  const builder = builderOf(graph) ?? {};
  const names = (definition: unknown) => channelNames(definition ?? builder._schemaDefinition, builder.channels);
  return {
    state: channelSchema(graphId, names(builder._schemaDefinition), "state"),
    input: channelSchema(graphId, names(builder._inputDefinition), "input"),
    output: channelSchema(graphId, names(builder._outputDefinition), "output"),
  };
}

/** Static schemas, with the channels standing in for a state, input or output TypeScript could not describe. */
function withChannelFallback(
  graph: LoadedGraph,
  graphId: string,
  statics?: StaticGraphSchema | null,
): StaticGraphSchema {
  if (statics?.state && statics.input && statics.output) return statics;
  const channels = channelSchemas(graph, graphId);
  return {
    state: statics?.state ?? channels.state,
    input: statics?.input ?? channels.input,
    output: statics?.output ?? channels.output,
    config: statics?.config,
  };
}

/** A graph's schemas from the first source that has them (runtime, then static, then its channels). */
function resolvedSchemas(graph: LoadedGraph, graphId: string, statics?: StaticGraphSchema | null): StaticGraphSchema {
  return runtimeSchemas(graph) ?? withChannelFallback(graph, graphId, statics);
}

/**
 * The schemas in the API's field names. LangGraph.js graphs declare one runtime schema (StateGraph's
 * context schema), so it is both `config_schema` and `context_schema`, as in the official LangGraph.js
 * server.
 */
function apiFields(schema: StaticGraphSchema): GraphSchemas {
  return {
    input_schema: schema.input ?? null,
    output_schema: schema.output ?? null,
    state_schema: schema.state ?? null,
    config_schema: schema.config ?? null,
    context_schema: schema.config ?? null,
  };
}

/** The schemas of a graph as `GET /assistants/{id}/schemas` returns them. */
export function graphSchemas(graph: LoadedGraph, graphId: string, statics?: StaticGraphSchema | null): GraphSchemas {
  return apiFields(resolvedSchemas(graph, graphId, statics));
}

/**
 * One subgraph's schemas. The official LangGraph.js server answers each namespace with the schema
 * object itself: `state`, `input`, `output`, `config`, each left out when absent (its nested-subgraph
 * test reads `state`). The Agent Server API reference and the SDK's `Subgraphs` type name the fields
 * of `/schemas` instead (`state_schema`...), so both sets are given, from the same schemas.
 */
export type SubgraphSchemas = StaticGraphSchema & GraphSchemas;

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
  statics?: StaticGraphSchemas | null,
): Promise<Record<string, SubgraphSchemas>> {
  const result: Record<string, SubgraphSchemas> = {};
  for await (const [name, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
    // Only the subgraph's own static schemas, else its own channels: the official server would answer
    // the root graph's schemas for a namespace its extraction missed.
    const schema = resolvedSchemas(subgraph as LoadedGraph, `${graphId}|${name}`, statics?.subgraphs[name]);
    const present = Object.entries(schema).filter(([, value]) => value != null);
    result[name] = { ...Object.fromEntries(present), ...apiFields(schema) };
  }
  return result;
}
