import { manifest } from "../../dist/registry.generated.ts";
import { GraphRegistry } from "./graphs.ts";
import { checkpointerConfig, storeConfig } from "./store-config.ts";

/** This Worker's deployment: the graphs, env and HTTP settings generated from langgraph.json. */
export const deployment = manifest;
export const graphs = new GraphRegistry(manifest);
/** langgraph.json `store` (semantic index, item TTL) and `checkpointer` (thread TTL), with defaults applied. */
export const storeSettings = storeConfig(manifest);
export const checkpointerSettings = checkpointerConfig(manifest);

/** langgraph.json `env` values become process.env defaults; Worker vars and secrets take precedence. */
export function applyDeploymentEnv(): void {
  for (const [key, value] of Object.entries(manifest.env)) {
    if (process.env[key] === undefined) process.env[key] = value;
  }
}
