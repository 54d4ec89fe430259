import type { StoreManifest } from "../../deployment/manifest.ts";
import type { Embedder } from "./embed.ts";
import { type FieldPaths, fieldPaths } from "./paths.ts";
import { type EmbeddingEnv, embedderFor } from "./providers.ts";

/** The store's semantic index as the store code uses it: who embeds, and which fields by default. */
export interface StoreIndex {
  embedder: Embedder;
  fields: FieldPaths;
}

/** The index langgraph.json declares (`store.index`), or null: without one, `query` matches text. */
export function storeIndex(settings: StoreManifest, env: EmbeddingEnv): StoreIndex | null {
  const embedder = embedderFor(settings, env);
  if (!embedder || !settings.index) return null;
  return { embedder, fields: fieldPaths(settings.index.fields, "store.index.fields") };
}
