import type { z } from "@hono/zod-openapi";
import { type AuthFilter, type Authorizer, matchesFilter } from "../core/auth-filter.ts";
import { badRequest, forbidden, invalid, notFound } from "../core/errors.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import { checkJsonSizes, rowBound } from "../core/json-size.ts";
import { MAX_STORE_VALUE_BYTES } from "../core/limits.ts";
import { storeSettings } from "../deployment/index.ts";
import type { StoreManifest } from "../deployment/manifest.ts";
import type { DeleteSchema, NamespacesSchema, PutSchema, ScoredItem, SearchSchema, StoreItem } from "./schemas.ts";
import { embedItem, embedQuery } from "./semantic/embed.ts";
import { storeIndex } from "./semantic/store-index.ts";
import {
  deleteItem,
  getItem,
  listNamespaces,
  namespaceProblem,
  putItem,
  searchItems,
  searchItemsBySimilarity,
  shapeNamespaces,
} from "./store.ts";

/** The store operations of the API, free of HTTP: `authorize` is the caller's authorization handler. */

/** What authorization filters see of an item: its value's fields, plus its namespace and key. */
const itemMetadata = (item: { namespace: string[]; key: string; value: Record<string, unknown> }) => ({
  ...item.value,
  namespace: item.namespace,
  key: item.key,
});

/**
 * With a handler filter, the item already at `namespace`/`key` must pass it (else not found, as if
 * it were not there). Returns that item, if any.
 */
async function guardExistingItem(
  env: Env,
  workspaceId: string,
  request: { namespace: string[]; key: string },
  filter: AuthFilter | undefined,
): Promise<StoreItem | null> {
  if (!filter) return null;
  const existing = await getItem(env, workspaceId, request.namespace, request.key, false);
  if (existing && !matchesFilter(itemMetadata(existing), filter)) throw notFound("Item not found");
  return existing;
}

const SCAN_PAGE = 1000;
const MAX_SCANNED = 10_000;

/**
 * The items a handler filter lets this user see, in store order, until `wanted` are found. A filter
 * can test an item's namespace and key as well as its value, so it is applied while scanning; a scan
 * past MAX_SCANNED items is refused rather than an unbounded read.
 */
async function visibleItems(
  page: (limit: number, offset: number) => Promise<StoreItem[]>,
  filter: AuthFilter,
  wanted = Number.POSITIVE_INFINITY,
): Promise<StoreItem[]> {
  const visible: StoreItem[] = [];
  for (let scanned = 0; visible.length < wanted; scanned += SCAN_PAGE) {
    if (scanned >= MAX_SCANNED)
      throw badRequest("Authenticated store query exceeded maximum scan limit. Narrow the namespace or filters.");
    const items = await page(SCAN_PAGE, scanned);
    visible.push(...items.filter((item) => matchesFilter(itemMetadata(item), filter)));
    if (items.length < SCAN_PAGE) break;
  }
  return visible;
}

function checkNamespace(namespace: string[], location: [string, string], allowEmpty = false): void {
  const problem = namespaceProblem(namespace, allowEmpty);
  if (problem) throw invalid([{ type: "value_error", loc: location, msg: problem }]);
}

export async function putStoreItem(
  env: Env,
  workspaceId: string,
  body: z.output<typeof PutSchema>,
  authorize: Authorizer,
  settings: StoreManifest = storeSettings,
): Promise<void> {
  // The handler may rewrite where the item goes (e.g. prefix the namespace with the user).
  const request = { namespace: body.namespace, key: body.key, value: body.value };
  const filter = await authorize("store:put", request);
  checkNamespace(request.namespace, ["body", "namespace"]);
  checkJsonSizes({ value: request.value }, rowBound(env, MAX_STORE_VALUE_BYTES));
  const existing = await guardExistingItem(env, workspaceId, request, filter);
  if (filter && !existing && !matchesFilter(itemMetadata(request), filter)) throw forbidden("Not authorized");
  // Embedded before the write: a provider's failure stores nothing, and the item keeps what it had.
  const index = storeIndex(settings, env);
  const vectors = index
    ? await embedItem({ value: request.value, index: body.index }, index.fields, index.embedder)
    : undefined;
  await putItem(env, workspaceId, {
    namespace: request.namespace,
    key: request.key,
    value: request.value,
    ttlMinutes: body.ttl ?? settings.ttl?.defaultTtlMinutes ?? null,
    vectors,
  });
}

/**
 * Whether a read pushes the expiry of what it reads: as asked, else `store.ttl.refresh_on_read`, else
 * as before langgraph.json could say (a get does, a search does not).
 */
const refreshesTtl = (asked: boolean | null | undefined, settings: StoreManifest, otherwise: boolean): boolean =>
  asked ?? settings.ttl?.refreshOnRead ?? otherwise;

/** The item at a dotted namespace and key, or null; one the handler's filter hides is not found. */
export async function getStoreItem(
  env: Env,
  workspaceId: string,
  namespace: string,
  key: string,
  refreshTtl: boolean | undefined,
  authorize: Authorizer,
  settings: StoreManifest = storeSettings,
): Promise<StoreItem | null> {
  const request = { namespace: namespace === "" ? [] : namespace.split("."), key };
  const filter = await authorize("store:get", request);
  checkNamespace(request.namespace, ["query", "namespace"]);
  const item = await getItem(
    env,
    workspaceId,
    request.namespace,
    request.key,
    refreshesTtl(refreshTtl, settings, true),
  );
  if (item && !matchesFilter(itemMetadata(item), filter)) throw notFound("Item not found");
  return item;
}

export async function deleteStoreItem(
  env: Env,
  workspaceId: string,
  body: z.output<typeof DeleteSchema>,
  authorize: Authorizer,
): Promise<void> {
  const request = { namespace: body.namespace, key: body.key };
  const filter = await authorize("store:delete", request);
  checkNamespace(request.namespace, ["body", "namespace"]);
  await guardExistingItem(env, workspaceId, request, filter);
  await deleteItem(env, workspaceId, request.namespace, request.key);
}

export async function searchStoreItems(
  env: Env,
  workspaceId: string,
  body: z.output<typeof SearchSchema>,
  authorize: Authorizer,
  settings: StoreManifest = storeSettings,
): Promise<ScoredItem[]> {
  const request = {
    namespace: body.namespace_prefix,
    filter: body.filter,
    limit: body.limit,
    offset: body.offset,
    query: body.query,
  };
  const authorization = await authorize("store:search", request);
  checkNamespace(request.namespace, ["body", "namespace_prefix"], true);
  const refreshTtl = refreshesTtl(body.refresh_ttl, settings, false);
  const index = body.query ? storeIndex(settings, env) : null;
  if (index && body.query) {
    // By meaning: the handler's filter is applied where the vectors are scored, before the page.
    return withFilterLimit(async () =>
      searchItemsBySimilarity(env, workspaceId, {
        namespacePrefix: request.namespace,
        filter: body.filter ?? undefined,
        vector: await embedQuery(body.query!, index.embedder),
        limit: body.limit,
        offset: body.offset,
        refreshTtl,
        authFilter: authorization,
      }),
    );
  }
  const search = (limit: number, offset: number) =>
    withFilterLimit(() =>
      searchItems(env, workspaceId, {
        namespacePrefix: request.namespace,
        filter: body.filter ?? undefined,
        query: body.query ?? undefined,
        limit,
        offset,
        refreshTtl,
      }),
    );
  if (!authorization) return search(body.limit, body.offset);
  const visible = await visibleItems(search, authorization, body.offset + body.limit);
  return visible.slice(body.offset, body.offset + body.limit);
}

export async function listStoreNamespaces(
  env: Env,
  workspaceId: string,
  body: z.output<typeof NamespacesSchema>,
  authorize: Authorizer,
): Promise<string[][]> {
  const request = {
    namespace: body.prefix ?? [],
    suffix: body.suffix,
    max_depth: body.max_depth,
    limit: body.limit,
    offset: body.offset,
  };
  const authorization = await authorize("store:list_namespaces", request);
  checkNamespace(request.namespace, ["body", "prefix"], true);
  const listing = {
    prefix: request.namespace,
    suffix: body.suffix ?? undefined,
    maxDepth: body.max_depth ?? undefined,
    limit: body.limit,
    offset: body.offset,
  };
  if (!authorization) return listNamespaces(env, workspaceId, listing);
  // As item search: only namespaces that hold an item the filter lets this user see.
  const visible = await visibleItems(
    (limit, offset) => searchItems(env, workspaceId, { namespacePrefix: request.namespace, limit, offset }),
    authorization,
  );
  return shapeNamespaces(
    visible.map((item) => item.namespace),
    listing,
  );
}
