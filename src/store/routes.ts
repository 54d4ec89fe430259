import { z } from "@hono/zod-openapi";
import { authorizerOf } from "../auth/guards.ts";
import { errorResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { jsonBody, jsonContent } from "../http/schemas.ts";
import { securedRoutes } from "../http/secured.ts";
import {
  DeleteSchema,
  ItemSchema,
  Key,
  Namespace,
  NamespacesSchema,
  PutSchema,
  SearchItemSchema,
  SearchSchema,
} from "./schemas.ts";
import { deleteStoreItem, getStoreItem, listStoreNamespaces, putStoreItem, searchStoreItems } from "./service.ts";

const tags = ["Store"];
const route = securedRoutes(tags);

/** With custom auth, an item the handler's filter hides is answered as absent. */
const hiddenItem = { 404: errorResponse("The item exists but the authorization handler's filter hides it") } as const;

const routes = {
  put: route({
    method: "put",
    path: "/store/items",
    summary: "Create or replace an item",
    request: { body: jsonBody(PutSchema) },
    responses: { 204: { description: "Stored" }, ...hiddenItem },
  }),
  get: route({
    method: "get",
    path: "/store/items",
    summary: "Get an item (JSON null when absent)",
    request: {
      query: z.object({
        namespace: z.string().default(""),
        key: Key,
        refresh_ttl: z.enum(["true", "false", "1", "0"]).optional(),
      }),
    },
    responses: { 200: jsonContent(ItemSchema.nullable(), "The item, or null"), ...hiddenItem },
  }),
  delete: route({
    method: "delete",
    path: "/store/items",
    summary: "Delete an item",
    request: { body: jsonBody(DeleteSchema) },
    responses: { 204: { description: "Deleted (or absent)" }, ...hiddenItem },
  }),
  search: route({
    method: "post",
    path: "/store/items/search",
    summary: "Search items under a namespace prefix",
    request: { body: jsonBody(SearchSchema) },
    responses: {
      200: jsonContent(z.object({ items: z.array(SearchItemSchema) }), "Items, with scores when ranked by a query"),
      400: errorResponse("With custom auth: the filtered search scanned more than 10,000 items; narrow it"),
    },
  }),
  namespaces: route({
    method: "post",
    path: "/store/namespaces",
    summary: "List namespaces",
    request: { body: jsonBody(NamespacesSchema) },
    responses: { 200: jsonContent(z.object({ namespaces: z.array(Namespace) }), "Namespaces") },
  }),
};

export const storeRoutes = createRouter()
  .openapi(routes.put, async (c) => {
    await putStoreItem(c.env, c.get("principal").workspaceId, c.req.valid("json"), authorizerOf(c));
    return c.body(null, 204);
  })
  .openapi(routes.get, async (c) => {
    const { namespace, key, refresh_ttl } = c.req.valid("query");
    const refreshTtl = refresh_ttl === undefined ? undefined : refresh_ttl === "true" || refresh_ttl === "1";
    return c.json(
      await getStoreItem(c.env, c.get("principal").workspaceId, namespace, key, refreshTtl, authorizerOf(c)),
      200,
    );
  })
  .openapi(routes.delete, async (c) => {
    await deleteStoreItem(c.env, c.get("principal").workspaceId, c.req.valid("json"), authorizerOf(c));
    return c.body(null, 204);
  })
  .openapi(routes.search, async (c) => {
    return c.json(
      { items: await searchStoreItems(c.env, c.get("principal").workspaceId, c.req.valid("json"), authorizerOf(c)) },
      200,
    );
  })
  .openapi(routes.namespaces, async (c) => {
    return c.json(
      {
        namespaces: await listStoreNamespaces(
          c.env,
          c.get("principal").workspaceId,
          c.req.valid("json"),
          authorizerOf(c),
        ),
      },
      200,
    );
  });
