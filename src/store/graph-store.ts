import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { oversize, rowBound } from "../core/json-size.ts";
import { MAX_STORE_VALUE_BYTES } from "../core/limits.ts";
import { isWellFormed, LONE_SURROGATE } from "../core/schemas.ts";
import type { StoreItem } from "./schemas.ts";
import { deleteItem, getItem, listNamespaces, namespaceProblem, putItem, searchItems } from "./store.ts";

const toItem = (item: StoreItem): Item => ({
  namespace: item.namespace,
  key: item.key,
  value: item.value,
  createdAt: new Date(item.created_at),
  updatedAt: new Date(item.updated_at),
});

const isPut = (op: Operation): op is PutOperation => "value" in op;
const isSearch = (op: Operation): op is SearchOperation => "namespacePrefix" in op;
const isGet = (op: Operation): op is GetOperation => "key" in op && !("value" in op);

/**
 * LangGraph's store interface over the platform's store (the workspace's store partition), scoped to
 * one workspace: what a node writes through `getStore()` / `config.store` is what the `/store` API
 * reads, and back. Each operation is one call to the partition.
 */
export class WorkspaceStore extends BaseStore {
  constructor(
    private readonly env: Pick<Env, "WORKSPACE" | "DB" | "LIMITS_GUARD" | "MAX_JSON_FIELD_BYTES">,
    private readonly workspaceId: string,
  ) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if (isPut(op)) {
        const problem =
          namespaceProblem(op.namespace) ?? oversize(["value"], op.value, rowBound(this.env, MAX_STORE_VALUE_BYTES));
        if (problem) throw new Error(problem);
        // The API's schemas refuse these; a graph's own writes are checked here.
        if (!isWellFormed(op.key) || op.namespace.some((label) => !isWellFormed(label)))
          throw new Error(`A store namespace or key ${LONE_SURROGATE}`);
        if (op.value === null) await deleteItem(this.env, this.workspaceId, op.namespace, op.key);
        else
          await putItem(this.env, this.workspaceId, {
            namespace: op.namespace,
            key: op.key,
            value: op.value,
            ttlMinutes: null,
          });
        results.push(undefined);
      } else if (isSearch(op)) {
        const items = await searchItems(this.env, this.workspaceId, {
          namespacePrefix: op.namespacePrefix,
          filter: op.filter,
          query: op.query,
          limit: op.limit ?? 10,
          offset: op.offset ?? 0,
        });
        results.push(items.map(toItem));
      } else if (isGet(op)) {
        const item = await getItem(this.env, this.workspaceId, op.namespace, op.key);
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
