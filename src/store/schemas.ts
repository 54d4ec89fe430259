import { z } from "@hono/zod-openapi";
import {
  MAX_INDEX_PATHS,
  MAX_NAMESPACE_LABEL_LENGTH,
  MAX_NAMESPACE_LABELS,
  MAX_STORE_KEY_LENGTH,
  MAX_STORE_QUERY_LENGTH,
  MAX_STORE_VALUE_BYTES,
} from "../core/limits.ts";
import { JsonDataObject, JsonFilter, WellFormedString } from "../core/schemas.ts";

/** Namespace labels and keys are stored as UTF-8 text: a lone surrogate would store another string. */
export const Namespace = z.array(WellFormedString.max(MAX_NAMESPACE_LABEL_LENGTH)).max(MAX_NAMESPACE_LABELS);
export const Key = WellFormedString.min(1).max(MAX_STORE_KEY_LENGTH);
export const ItemSchema = z
  .object({
    namespace: Namespace,
    key: z.string(),
    value: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Item");

export const PutSchema = z
  .object({
    namespace: Namespace,
    key: Key,
    value: JsonDataObject.describe(
      `A JSON object of at most ${MAX_STORE_VALUE_BYTES} bytes (422 above; the MAX_JSON_FIELD_BYTES var may lower it)`,
    ),
    index: z
      .union([z.literal(false), z.array(WellFormedString.min(1).max(MAX_STORE_KEY_LENGTH)).max(MAX_INDEX_PATHS)])
      .nullish()
      .describe(
        "With the store's semantic index (langgraph.json store.index): false embeds nothing, paths replace its fields; ignored without one",
      ),
    ttl: z
      .number()
      .int()
      .positive()
      .max(100 * 365 * 24 * 60)
      .nullish()
      .describe("Minutes until the item expires"),
  })
  .openapi("StorePutRequest");

export const DeleteSchema = z.object({ namespace: Namespace.default([]), key: Key }).openapi("StoreDeleteRequest");

export const SearchSchema = z
  .object({
    namespace_prefix: Namespace.default([]),
    filter: JsonFilter.nullish(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    query: WellFormedString.max(MAX_STORE_QUERY_LENGTH)
      .nullish()
      .describe(
        "With the store's semantic index: ranks the items by similarity to it (each with a score); without one: text the value must contain (case-insensitive)",
      ),
    refresh_ttl: z
      .boolean()
      .nullish()
      .describe("Push the expiry of the items read (default: store.ttl.refresh_on_read, else false)"),
  })
  .openapi("StoreSearchRequest");

export const NamespacesSchema = z
  .object({
    prefix: Namespace.nullish(),
    suffix: Namespace.nullish(),
    max_depth: z.number().int().min(1).nullish(),
    limit: z.number().int().min(1).max(1000).default(100),
    offset: z.number().int().min(0).default(0),
  })
  .openapi("StoreNamespacesRequest");

/** A search's item: with a `query` and a semantic index, its best vector's similarity (none if not indexed). */
export const SearchItemSchema = ItemSchema.extend({
  score: z.number().optional().describe("Similarity to the query (cosine), when the store has an index"),
}).openapi("SearchItem");

/** An item as the API sends it. */
export type StoreItem = z.infer<typeof ItemSchema>;
export type ScoredItem = z.infer<typeof SearchItemSchema>;
