import { z } from "@hono/zod-openapi";
import { database } from "../db/client.ts";
import { matchesFilter, type AuthFilter } from "../core/auth-filter.ts";
import { authFilter } from "../auth/guards.ts";
import { badRequest, forbidden, notFound, invalid } from "../core/errors.ts";
import { withFilterLimit } from "../core/filter-limit.ts";
import { createRouter } from "../http/router.ts";
import { errorResponse } from "../http/responses.ts";
import { jsonBody, jsonContent } from "../http/schemas.ts";
import { JsonDataObject, JsonFilter } from "../core/schemas.ts";
import { MAX_NAMESPACE_LABEL_LENGTH, MAX_NAMESPACE_LABELS, MAX_STORE_KEY_LENGTH } from "../core/limits.ts";
import { securedRoutes } from "../http/secured.ts";
import { deleteItem, getItem, listNamespaces, namespaceProblem, putItem, searchItems, shapeNamespaces, type StoreItem } from "./store.ts";

const tags = ["Store"];
const route = securedRoutes(tags);

const Namespace = z.array(z.string().max(MAX_NAMESPACE_LABEL_LENGTH)).max(MAX_NAMESPACE_LABELS);
const Key = z.string().min(1).max(MAX_STORE_KEY_LENGTH);
const ItemSchema = z
  .object({ namespace: Namespace, key: z.string(), value: z.record(z.string(), z.unknown()), created_at: z.string(), updated_at: z.string() })
  .openapi("Item");

const PutSchema = z
  .object({
    namespace: Namespace,
    key: Key,
    value: JsonDataObject.describe("A JSON object"),
    index: z.union([z.literal(false), z.array(z.string())]).nullish().describe("Accepted; no embedding index is configured"),
    ttl: z.number().int().positive().max(100 * 365 * 24 * 60).nullish().describe("Minutes until the item expires"),
  })
  .openapi("StorePutRequest");

const DeleteSchema = z.object({ namespace: Namespace.default([]), key: Key }).openapi("StoreDeleteRequest");

const SearchSchema = z
  .object({
    namespace_prefix: Namespace.default([]),
    filter: JsonFilter.nullish(),
    limit: z.number().int().min(1).max(1000).default(10),
    offset: z.number().int().min(0).default(0),
    query: z.string().nullish().describe("Text the value must contain (case-insensitive)"),
    refresh_ttl: z.boolean().nullish(),
  })
  .openapi("StoreSearchRequest");

const NamespacesSchema = z
  .object({
    prefix: Namespace.nullish(),
    suffix: Namespace.nullish(),
    max_depth: z.number().int().min(1).nullish(),
    limit: z.number().int().min(1).max(1000).default(100),
    offset: z.number().int().min(0).default(0),
  })
  .openapi("StoreNamespacesRequest");

/** With custom auth, an item the handler's filter hides is answered as absent. */
const hiddenItem = { 404: errorResponse("The item exists but the authorization handler's filter hides it") } as const;

const routes = {
  put: route({ method: "put", path: "/store/items", summary: "Create or replace an item", request: { body: jsonBody(PutSchema) }, responses: { 204: { description: "Stored" }, ...hiddenItem } }),
  get: route({
    method: "get",
    path: "/store/items",
    summary: "Get an item (JSON null when absent)",
    request: { query: z.object({ namespace: z.string().default(""), key: Key, refresh_ttl: z.enum(["true", "false", "1", "0"]).optional() }) },
    responses: { 200: jsonContent(ItemSchema.nullable(), "The item, or null"), ...hiddenItem },
  }),
  delete: route({ method: "delete", path: "/store/items", summary: "Delete an item", request: { body: jsonBody(DeleteSchema) }, responses: { 204: { description: "Deleted (or absent)" }, ...hiddenItem } }),
  search: route({ method: "post", path: "/store/items/search", summary: "Search items under a namespace prefix", request: { body: jsonBody(SearchSchema) }, responses: { 200: jsonContent(z.object({ items: z.array(ItemSchema) }), "Items"), 400: errorResponse("With custom auth: the filtered search scanned more than 10,000 items; narrow it") } }),
  namespaces: route({ method: "post", path: "/store/namespaces", summary: "List namespaces", request: { body: jsonBody(NamespacesSchema) }, responses: { 200: jsonContent(z.object({ namespaces: z.array(Namespace) }), "Namespaces") } }),
};

/** What authorization filters see of an item: its value's fields, plus its namespace and key. */
const itemMetadata = (item: { namespace: string[]; key: string; value: Record<string, unknown> }) => ({
  ...item.value,
  namespace: item.namespace,
  key: item.key,
});

/**
 * With a handler filter, the item already at `namespace`/`key` must pass it (else 404, as if it were
 * not there). Returns that item, if any.
 */
async function guardExistingItem(
  db: ReturnType<typeof database>,
  workspaceId: string,
  request: { namespace: string[]; key: string },
  filter: AuthFilter | undefined,
): Promise<StoreItem | null> {
  if (!filter) return null;
  const existing = await getItem(db, workspaceId, request.namespace, request.key, false);
  if (existing && !matchesFilter(itemMetadata(existing), filter)) throw notFound("Item not found");
  return existing;
}

const SCAN_PAGE = 1000;
const MAX_SCANNED = 10_000;

/**
 * The items a handler filter lets this user see, in store order, until `wanted` are found. A filter
 * can test an item's namespace and key as well as its value, so it is applied while scanning; a scan
 * past MAX_SCANNED items is a 400 rather than an unbounded read.
 */
async function visibleItems(
  page: (limit: number, offset: number) => Promise<StoreItem[]>,
  filter: AuthFilter,
  wanted = Number.POSITIVE_INFINITY,
): Promise<StoreItem[]> {
  const visible: StoreItem[] = [];
  for (let scanned = 0; visible.length < wanted; scanned += SCAN_PAGE) {
    if (scanned >= MAX_SCANNED) throw badRequest("Authenticated store query exceeded maximum scan limit. Narrow the namespace or filters.");
    const items = await page(SCAN_PAGE, scanned);
    visible.push(...items.filter((item) => matchesFilter(itemMetadata(item), filter)));
    if (items.length < SCAN_PAGE) break;
  }
  return visible;
}

function checkNamespace(namespace: string[], field: string, allowEmpty = false): void {
  const problem = namespaceProblem(namespace, allowEmpty);
  if (problem) throw invalid([{ type: "value_error", loc: ["body", field], msg: problem }]);
}

export const storeRoutes = createRouter()
  .openapi(routes.put, async (c) => {
    const body = c.req.valid("json");
    // The handler may rewrite where the item goes (e.g. prefix the namespace with the user).
    const request = { namespace: body.namespace, key: body.key, value: body.value };
    const filter = await authFilter(c, "store:put", request);
    checkNamespace(request.namespace, "namespace");
    const db = database(c.env);
    const workspaceId = c.get("principal").workspaceId;
    const existing = await guardExistingItem(db, workspaceId, request, filter);
    if (filter && !existing && !matchesFilter(itemMetadata(request), filter)) throw forbidden("Not authorized");
    await putItem(db, workspaceId, { namespace: request.namespace, key: request.key, value: request.value, ttlMinutes: body.ttl ?? null });
    return c.body(null, 204);
  })
  .openapi(routes.get, async (c) => {
    const { namespace, key, refresh_ttl } = c.req.valid("query");
    const request = { namespace: namespace === "" ? [] : namespace.split("."), key };
    const filter = await authFilter(c, "store:get", request);
    const problem = namespaceProblem(request.namespace);
    if (problem) throw invalid([{ type: "value_error", loc: ["query", "namespace"], msg: problem }]);
    const item = await getItem(database(c.env), c.get("principal").workspaceId, request.namespace, request.key, refresh_ttl !== "false" && refresh_ttl !== "0");
    if (item && !matchesFilter(itemMetadata(item), filter)) throw notFound("Item not found");
    return c.json(item, 200);
  })
  .openapi(routes.delete, async (c) => {
    const body = c.req.valid("json");
    const request = { namespace: body.namespace, key: body.key };
    const filter = await authFilter(c, "store:delete", request);
    checkNamespace(request.namespace, "namespace");
    const db = database(c.env);
    const workspaceId = c.get("principal").workspaceId;
    await guardExistingItem(db, workspaceId, request, filter);
    await deleteItem(db, workspaceId, request.namespace, request.key);
    return c.body(null, 204);
  })
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    const request = { namespace: body.namespace_prefix, filter: body.filter, limit: body.limit, offset: body.offset, query: body.query };
    const authorization = await authFilter(c, "store:search", request);
    checkNamespace(request.namespace, "namespace_prefix", true);
    const search = (limit: number, offset: number) =>
      withFilterLimit(() =>
        searchItems(database(c.env), c.get("principal").workspaceId, {
          namespacePrefix: request.namespace,
          filter: body.filter ?? undefined,
          query: body.query ?? undefined,
          limit,
          offset,
          refreshTtl: body.refresh_ttl ?? false,
        }),
      );
    if (!authorization) return c.json({ items: await search(body.limit, body.offset) }, 200);
    const visible = await visibleItems(search, authorization, body.offset + body.limit);
    return c.json({ items: visible.slice(body.offset, body.offset + body.limit) }, 200);
  })
  .openapi(routes.namespaces, async (c) => {
    const body = c.req.valid("json");
    const request = { namespace: body.prefix ?? [], suffix: body.suffix, max_depth: body.max_depth, limit: body.limit, offset: body.offset };
    const authorization = await authFilter(c, "store:list_namespaces", request);
    checkNamespace(request.namespace, "prefix", true);
    const db = database(c.env);
    const workspaceId = c.get("principal").workspaceId;
    const listing = { prefix: request.namespace, suffix: body.suffix ?? undefined, maxDepth: body.max_depth ?? undefined, limit: body.limit, offset: body.offset };
    if (!authorization) return c.json({ namespaces: await listNamespaces(db, workspaceId, listing) }, 200);
    // As item search: only namespaces that hold an item the filter lets this user see.
    const visible = await visibleItems(
      (limit, offset) => searchItems(db, workspaceId, { namespacePrefix: request.namespace, limit, offset }),
      authorization,
    );
    return c.json({ namespaces: shapeNamespaces(visible.map((item) => item.namespace), listing) }, 200);
  });
