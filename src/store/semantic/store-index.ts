import type { StoreManifest } from "../../deployment/manifest.ts";
import { embedFunction } from "../../deployment/store-config.ts";
import type { Embedder } from "./embed.ts";
import { type FieldPaths, fieldPaths } from "./paths.ts";

/** The store's semantic index as the store code uses it: who embeds, and which fields by default. */
export interface StoreIndex {
  embedder: Embedder;
  fields: FieldPaths;
}

/** The index langgraph.json declares (`store.index`), or null: without one, `query` matches text. */
export function storeIndex(settings: StoreManifest, _env: object): StoreIndex | null {
  const index = settings.index;
  if (!index) return null;
  const embed = embedFunction(settings);
  if (!embed) return null;
  return {
    embedder: { embed: async (texts) => embed(texts), dims: index.dims, provider: index.embed.source },
    fields: fieldPaths(index.fields, "store.index.fields"),
  };
}
