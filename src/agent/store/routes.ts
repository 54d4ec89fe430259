import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../../db/client.ts";
import { ApiError } from "../../http/errors.ts";
import { withFilterLimit } from "../../http/filter-limit.ts";
import { createRouter } from "../../http/router.ts";
import { authErrors, jsonBody, jsonContent } from "../../http/schemas.ts";
import { secured } from "../../http/secured.ts";
import { deleteItem, getItem, listNamespaces, namespaceProblem, putItem, searchItems } from "../../store/items.ts";

const tags = ["Store"];
const route = <R extends Parameters<typeof createRoute>[0]>(config: R) => secured(createRoute({ tags, ...config }));

const Namespace = z.array(z.string());
const ItemSchema = z
  .object({ namespace: Namespace, key: z.string(), value: z.record(z.string(), z.unknown()), created_at: z.string(), updated_at: z.string() })
  .openapi("Item");

const PutSchema = z
  .object({
    namespace: Namespace,
    key: z.string().min(1),
    value: z.record(z.string(), z.unknown()).describe("A JSON object"),
    index: z.union([z.literal(false), z.array(z.string())]).nullish().describe("Accepted; no embedding index is configured"),
    ttl: z.number().int().positive().max(100 * 365 * 24 * 60).nullish().describe("Minutes until the item expires"),
  })
  .openapi("StorePutRequest");

const DeleteSchema = z.object({ namespace: Namespace.default([]), key: z.string().min(1) }).openapi("StoreDeleteRequest");

const SearchSchema = z
  .object({
    namespace_prefix: Namespace.default([]),
    filter: z.record(z.string(), z.unknown()).nullish(),
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

const routes = {
  put: route({ method: "put", path: "/store/items", summary: "Create or replace an item", request: { body: jsonBody(PutSchema) }, responses: { 204: { description: "Stored" }, ...authErrors } }),
  get: route({
    method: "get",
    path: "/store/items",
    summary: "Get an item (JSON null when absent)",
    request: { query: z.object({ namespace: z.string().default(""), key: z.string().min(1), refresh_ttl: z.enum(["true", "false", "1", "0"]).optional() }) },
    responses: { 200: jsonContent(ItemSchema.nullable(), "The item, or null"), ...authErrors },
  }),
  delete: route({ method: "delete", path: "/store/items", summary: "Delete an item", request: { body: jsonBody(DeleteSchema) }, responses: { 204: { description: "Deleted (or absent)" }, ...authErrors } }),
  search: route({ method: "post", path: "/store/items/search", summary: "Search items under a namespace prefix", request: { body: jsonBody(SearchSchema) }, responses: { 200: jsonContent(z.object({ items: z.array(ItemSchema) }), "Items"), ...authErrors } }),
  namespaces: route({ method: "post", path: "/store/namespaces", summary: "List namespaces", request: { body: jsonBody(NamespacesSchema) }, responses: { 200: jsonContent(z.object({ namespaces: z.array(Namespace) }), "Namespaces"), ...authErrors } }),
};

function checkNamespace(namespace: string[], field: string, allowEmpty = false): void {
  const problem = namespaceProblem(namespace, allowEmpty);
  if (problem) throw new ApiError(422, [{ type: "value_error", loc: ["body", field], msg: problem }]);
}

export const storeRoutes = createRouter()
  .openapi(routes.put, async (c) => {
    const body = c.req.valid("json");
    checkNamespace(body.namespace, "namespace");
    await putItem(database(c.env), c.get("principal").workspaceId, { namespace: body.namespace, key: body.key, value: body.value, ttlMinutes: body.ttl ?? null });
    return c.body(null, 204) as never;
  })
  .openapi(routes.get, async (c) => {
    const { namespace, key, refresh_ttl } = c.req.valid("query");
    const labels = namespace === "" ? [] : namespace.split(".");
    const problem = namespaceProblem(labels);
    if (problem) throw new ApiError(422, [{ type: "value_error", loc: ["query", "namespace"], msg: problem }]);
    const item = await getItem(database(c.env), c.get("principal").workspaceId, labels, key, refresh_ttl !== "false" && refresh_ttl !== "0");
    return c.json(item, 200);
  })
  .openapi(routes.delete, async (c) => {
    const body = c.req.valid("json");
    checkNamespace(body.namespace, "namespace");
    await deleteItem(database(c.env), c.get("principal").workspaceId, body.namespace, body.key);
    return c.body(null, 204) as never;
  })
  .openapi(routes.search, async (c) => {
    const body = c.req.valid("json");
    checkNamespace(body.namespace_prefix, "namespace_prefix", true);
    const items = await withFilterLimit(() =>
      searchItems(database(c.env), c.get("principal").workspaceId, {
        namespacePrefix: body.namespace_prefix,
        filter: body.filter ?? undefined,
        query: body.query ?? undefined,
        limit: body.limit,
        offset: body.offset,
        refreshTtl: body.refresh_ttl ?? false,
      }),
    );
    return c.json({ items }, 200);
  })
  .openapi(routes.namespaces, async (c) => {
    const body = c.req.valid("json");
    checkNamespace(body.prefix ?? [], "prefix", true);
    const namespaces = await listNamespaces(database(c.env), c.get("principal").workspaceId, {
      prefix: body.prefix ?? undefined,
      suffix: body.suffix ?? undefined,
      maxDepth: body.max_depth ?? undefined,
      limit: body.limit,
      offset: body.offset,
    });
    return c.json({ namespaces }, 200);
  });
