import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { oversize, rowBound } from "../core/json-size.ts";
import { MAX_STORE_VALUE_BYTES } from "../core/limits.ts";
import { isWellFormed, LONE_SURROGATE } from "../core/schemas.ts";
import { storeSettings } from "../deployment/index.ts";
import type { StoreManifest } from "../deployment/manifest.ts";
import type { ScoredItem, StoreItem } from "./schemas.ts";
import { embedInRounds, embedQuery, textsToIndex } from "./semantic/embed.ts";
import type { FieldText } from "./semantic/paths.ts";
import { storeIndex } from "./semantic/store-index.ts";
import {
  deleteItem,
  getItem,
  listNamespaces,
  namespaceProblem,
  putItem,
  searchItems,
  searchItemsBySimilarity,
} from "./store.ts";
import type { VectorizeBindings } from "./vectorize.ts";
import type { ItemVector } from "./vectors.ts";

const toItem = (item: StoreItem): Item => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  createdAt: new Date(item.created_at),
  updatedAt: new Date(item.updated_at),
});

const toSearchItem = (item: ScoredItem): SearchItem =>
  item.score === undefined ? toItem(item) : { ...toItem(item), score: item.score };

const isPut = (op: Operation): op is PutOperation => "value" in op;
const isSearch = (op: Operation): op is SearchOperation => "namespacePrefix" in op;
const isGet = (op: Operation): op is GetOperation => "key" in op && !("value" in op);

/**
 * LangGraph's store interface over the platform's store (the workspace's store partition), scoped to
 * one workspace: what a node writes through `getStore()` / `config.store` is what the `/store` API
 * reads, and back, with the same semantic index and TTLs (langgraph.json `store`). Each operation is
 * one call to the partition; the puts of one batch (LangGraph batches a step's store calls) are
 * embedded together.
 */
export class WorkspaceStore extends BaseStore {
  readonly #index;

  constructor(
    private readonly env: Pick<Env, "WORKSPACE" | "DB" | "LIMITS_GUARD" | "MAX_JSON_FIELD_BYTES"> & VectorizeBindings,
    private readonly workspaceId: string,
    private readonly settings: StoreManifest = storeSettings,
  ) {
    super();
    this.#index = storeIndex(settings, env);
  }

  /** Refuses a put a graph may not make (the API's schemas refuse the same), before anything is written. */
  #check(op: PutOperation): void {
    const problem =
      namespaceProblem(op.namespace) ?? oversize(["value"], op.value, rowBound(this.env, MAX_STORE_VALUE_BYTES));
    if (problem) throw new Error(problem);
    if (!isWellFormed(op.key) || op.namespace.some((label) => !isWellFormed(label)))
      throw new Error(`A store namespace or key ${LONE_SURROGATE}`);
  }

  #put(op: PutOperation & { value: Record<string, unknown> }, vectors: ItemVector[] | undefined): Promise<void> {
    return putItem(this.env, this.workspaceId, {
      namespace: op.namespace,
      key: op.key,
      value: op.value,
      ttlMinutes: this.settings.ttl?.defaultTtlMinutes ?? null,
      vectors,
    });
  }

  /**
   * The batch's operations in order. Every put is checked, and its texts found, before anything is
   * written; with an index, the puts from one that stores a value on are embedded and written in rounds
   * (`embedInRounds`), so a step's puts share provider calls and never hold more than a round of vectors.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // As the API: reads push expiries as store.ttl.refresh_on_read says; without it, a get does and a search not.
    const refreshOnRead = this.settings.ttl?.refreshOnRead;
    const index = this.#index;
    const texts = new Map<Operation, FieldText[]>();
    for (const op of operations) {
      if (!isPut(op)) continue;
      this.#check(op);
      if (index && op.value !== null) texts.set(op, textsToIndex({ value: op.value, index: op.index }, index.fields));
    }
    const written = new Set<Operation>();
    for (const [at, op] of operations.entries()) {
      if (isPut(op)) {
        if (op.value === null) await deleteItem(this.env, this.workspaceId, op.namespace, op.key);
        else if (!index) await this.#put({ ...op, value: op.value }, undefined);
        else if (!written.has(op)) {
          // This put and the next ones up to the next delete, embedded and written in rounds.
          const run: PutOperation[] = [];
          for (const next of operations.slice(at)) {
            if (!isPut(next) || next.value === null) break;
            run.push(next);
          }
          await embedInRounds(
            run.map((put) => ({ item: put, texts: texts.get(put)! })),
            index.embedder,
            async (round) => {
              for (const [put, vectors] of round) {
                await this.#put({ ...put, value: put.value! }, vectors);
                written.add(put);
              }
            },
          );
        }
        results.push(undefined);
      } else if (isSearch(op)) {
        const page = {
          namespacePrefix: op.namespacePrefix,
          filter: op.filter,
          limit: op.limit ?? 10,
          offset: op.offset ?? 0,
        };
        const items =
          this.#index && op.query
            ? await searchItemsBySimilarity(this.env, this.workspaceId, {
                ...page,
                vector: await embedQuery(op.query, this.#index.embedder),
                refreshTtl: refreshOnRead ?? false,
              })
            : await searchItems(this.env, this.workspaceId, {
                ...page,
                query: op.query,
                refreshTtl: refreshOnRead ?? false,
              });
        results.push(items.map(toSearchItem));
      } else if (isGet(op)) {
        const item = await getItem(this.env, this.workspaceId, op.namespace, op.key, refreshOnRead ?? true);
        results.push(item ? toItem(item) : null);
      } else {
        const list = op as ListNamespacesOperation;
        const prefix = list.matchConditions?.find((c) => c.matchType === "prefix")?.path;
        const suffix = list.matchConditions?.find((c) => c.matchType === "suffix")?.path;
        results.push(
          await listNamespaces(this.env, this.workspaceId, {
            prefix,
            suffix,
            maxDepth: list.maxDepth,
            limit: list.limit,
            offset: list.offset,
          }),
        );
      }
    }
    return results as OperationResults<Op>;
  }
}
