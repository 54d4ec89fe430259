import { chunked } from "../../core/batches.ts";
import { invalid } from "../../core/errors.ts";
import { EMBED_BATCH_TEXTS, MAX_VECTORS_PER_ITEM } from "../../core/limits.ts";
import { type FieldPaths, type FieldText, itemTexts } from "./paths.ts";
import { checkVector } from "./vectors.ts";

/** An embedding provider: texts in, one vector per text out, in the same order. */
export type EmbedTexts = (texts: string[]) => Promise<number[][]>;

/** The provider of an index and what its vectors must look like. */
export interface Embedder {
  embed: EmbedTexts;
  dims: number;
  /** Named in errors, e.g. `openai:text-embedding-3-small`. */
  provider: string;
}

/** One stored vector: the item it belongs to, the field it was read from, and its floats. */
export interface FieldVector<T> {
  item: T;
  field: string;
  vector: Float32Array;
}

/**
 * The vectors of many items' texts. Each distinct text is embedded once (as the reference does), in
 * calls of at most EMBED_BATCH_TEXTS texts, one after another: never a call per item. Any call's
 * failure, a missing vector or a vector of another length fails the whole put before anything is written.
 */
export async function embedItemTexts<T>(
  items: readonly { item: T; texts: readonly FieldText[] }[],
  embedder: Embedder,
): Promise<FieldVector<T>[]> {
  const distinct = [...new Set(items.flatMap(({ texts }) => texts.map(({ text }) => text)))];
  const vectors = new Map<string, Float32Array>();
  for (const batch of chunked(distinct, EMBED_BATCH_TEXTS)) {
    const answer = await embedder.embed(batch);
    if (!Array.isArray(answer) || answer.length !== batch.length)
      throw invalid(
        `${embedder.provider} returned ${Array.isArray(answer) ? answer.length : "no"} vectors for ${batch.length} texts`,
      );
    batch.forEach((text, i) => vectors.set(text, checkVector(answer[i], embedder.dims, embedder.provider)));
  }
  return items.flatMap(({ item, texts }) =>
    texts.map(({ field, text }) => ({ item, field, vector: vectors.get(text)! })),
  );
}

/**
 * The vector of a search's query: one call of one text. Kept in doubles, the numbers as the provider
 * gave them, as the reference scores with them (stored vectors are floats; see vectors.ts).
 */
export async function embedQuery(query: string, embedder: Embedder): Promise<number[]> {
  const answer = await embedder.embed([query]);
  if (!Array.isArray(answer) || answer.length !== 1)
    throw invalid(`${embedder.provider} returned ${Array.isArray(answer) ? answer.length : "no"} vectors for 1 text`);
  checkVector(answer[0], embedder.dims, embedder.provider);
  return answer[0];
}

/** An item to index: its value and its put's own `index` (false: none; paths: instead of the configured fields). */
export interface ItemToIndex {
  value: unknown;
  index?: false | readonly string[] | null;
}

/** The texts an item's vectors are made of; one matching more than MAX_VECTORS_PER_ITEM texts is refused (422). */
export function textsToIndex(item: ItemToIndex, fields: FieldPaths): FieldText[] {
  const found = itemTexts(item.value, fields, item.index);
  if (found.length > MAX_VECTORS_PER_ITEM)
    throw invalid(
      `index: the item's index paths match ${found.length} texts; an item holds at most ${MAX_VECTORS_PER_ITEM} vectors`,
    );
  return found;
}

/**
 * The vectors of items whose texts are known, in rounds: each round's items hold at most
 * MAX_VECTORS_PER_ITEM texts together (one item more if it alone has that many), so a step that puts
 * many large items never holds more than a round of vectors; `write` stores a round before the next is
 * embedded. Each round is embedded in calls of EMBED_BATCH_TEXTS, never one call per item.
 */
export async function embedInRounds<T>(
  items: readonly { item: T; texts: readonly FieldText[] }[],
  embedder: Embedder,
  write: (round: Map<T, { field: string; vector: Float32Array }[]>) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < items.length; ) {
    let end = start + 1;
    let count = items[start].texts.length;
    while (end < items.length && count + items[end].texts.length <= MAX_VECTORS_PER_ITEM)
      count += items[end++].texts.length;
    const round = items.slice(start, end);
    const vectors = new Map(round.map(({ item }) => [item, [] as { field: string; vector: Float32Array }[]]));
    for (const { item, field, vector } of await embedItemTexts(round, embedder))
      vectors.get(item)!.push({ field, vector });
    await write(vectors);
    start = end;
  }
}

/** The vectors of one put's item (the API's), each field as `{field, vector}`. */
export async function embedItem(
  item: ItemToIndex,
  fields: FieldPaths,
  embedder: Embedder,
): Promise<{ field: string; vector: Float32Array }[]> {
  const texts = textsToIndex(item, fields);
  const vectors = await embedItemTexts([{ item: 0, texts }], embedder);
  return vectors.map(({ field, vector }) => ({ field, vector }));
}
