import { getRefId, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { type Schema, Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { createApp, isPublicRequest, PUBLIC_PATHS } from "../../src/app.ts";
import { SIGNED_ATTACHMENT_PATH } from "../../src/tracing/attachment-urls.ts";
import { TracingRunSchema, TracingRunSelectionSchema } from "../../src/tracing/schemas.ts";
import { call, json } from "./helpers.ts";

interface Content {
  [mediaType: string]: { schema?: Record<string, unknown> };
}
interface Operation {
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: { content: Content };
  responses: Record<string, { description: string; content?: Content }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Record<string, unknown>> };
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1, open, and declares the API-key scheme", async () => {
    const response = await call("/openapi.json", { key: null });
    expect(response.status).toBe(200);
    const doc = await json<OpenApiDocument>(response);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
    });
  });

  it("lists every API route the app serves", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL" && !r.path.includes("*"))
      // Pages for people, not API routes: the reference and the console (its /console redirect).
      .filter((r) => !["/openapi.json", "/docs", "/docs/:asset", "/console"].includes(r.path))
      .map((r) => `${r.method} ${toOpenApiPath(r.path)}`);
    expect(served.length).toBeGreaterThan(5);
    for (const route of served) expect(documented, route).toContain(route);
  });

  it("every documented route outside the public ones demands a key (401 without one)", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const concrete = path.replace(/\{[^}]+\}/g, crypto.randomUUID());
        const response = await call(concrete, {
          method: method.toUpperCase(),
          key: null,
          json: method === "get" ? undefined : {},
        });
        if ((PUBLIC_PATHS as readonly string[]).includes(path)) {
          expect(response.status, `${method} ${path}`).toBe(200);
          expect(operation.security).toBeUndefined();
        } else if (isPublicRequest(concrete, method.toUpperCase())) {
          // A public route with path parameters (a UI bundle's file): random ids are simply not found.
          // A pre-signed attachment download without its signature is refused first.
          expect(response.status, `${method} ${path}`).toBe(SIGNED_ATTACHMENT_PATH.test(concrete) ? 403 : 404);
          expect(operation.security).toBeUndefined();
        } else {
          expect(response.status, `${method} ${path}`).toBe(401);
          expect(operation.security).toEqual([{ ApiKeyAuth: [] }]);
          expect(operation.responses).toHaveProperty("401");
        }
      }
    }
  });
});

const ERROR_REF = { $ref: "#/components/schemas/ErrorResponse" };
const errorSchemaOf = (operation: Operation, status: string) =>
  operation.responses[status]?.content?.["application/json"]?.schema;

describe("OpenAPI document: every answer is described", () => {
  it("every operation lists the shared middleware errors with the ErrorResponse schema", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        expect(errorSchemaOf(operation, "500"), name).toEqual(ERROR_REF);
        if (operation.security) {
          expect(errorSchemaOf(operation, "401"), name).toEqual(ERROR_REF);
          expect(errorSchemaOf(operation, "403"), name).toEqual(ERROR_REF);
        }
        if (method !== "get") expect(operation.responses, name).toHaveProperty("413");
        if (operation.requestBody?.content["application/json"])
          expect(errorSchemaOf(operation, "415"), name).toEqual(ERROR_REF);
        if (operation.parameters?.length || operation.requestBody)
          expect(errorSchemaOf(operation, "422"), name).toEqual(ERROR_REF);
      }
    }
  });

  it("the statuses and bodies the server answers for wrong requests are the documented ones", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const jsonRpc = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const cases: {
      method: string;
      path: string;
      documented: string;
      init: RequestInit & { json?: unknown };
      status: number;
    }[] = [
      {
        method: "post",
        path: "/threads",
        documented: "/threads",
        init: { method: "POST", body: "{}", headers: { "Content-Type": "text/plain" } },
        status: 415,
      },
      {
        method: "post",
        path: "/threads",
        documented: "/threads",
        init: { method: "POST", body: "{", headers: { "Content-Type": "application/json" } },
        status: 422,
      },
      {
        method: "post",
        path: "/mcp",
        documented: "/mcp",
        init: { method: "POST", json: jsonRpc, headers: { Accept: "text/html" } },
        status: 406,
      },
      {
        method: "post",
        path: "/mcp",
        documented: "/mcp",
        init: {
          method: "POST",
          body: JSON.stringify(jsonRpc),
          headers: { Accept: "application/json, text/event-stream", "Content-Type": "text/plain" },
        },
        status: 415,
      },
      {
        method: "post",
        path: "/mcp",
        documented: "/mcp",
        init: {
          method: "POST",
          body: "{",
          headers: { Accept: "application/json, text/event-stream", "Content-Type": "application/json" },
        },
        status: 400,
      },
      { method: "get", path: "/mcp", documented: "/mcp", init: {}, status: 405 },
      { method: "delete", path: "/mcp", documented: "/mcp", init: { method: "DELETE" }, status: 405 },
      {
        method: "post",
        path: "/api/v1/runs/multipart",
        documented: "/api/v1/runs/multipart",
        init: { method: "POST", body: "x", headers: { "Content-Type": "multipart/form-data" } },
        status: 400,
      },
      {
        method: "post",
        path: "/api/v1/runs/multipart",
        documented: "/api/v1/runs/multipart",
        init: { method: "POST", body: "x", headers: { "Content-Type": "text/plain" } },
        status: 415,
      },
    ];
    for (const { method, path, documented, init, status } of cases) {
      const response = await call(path, init);
      const name = `${method.toUpperCase()} ${path} → ${status}`;
      expect(response.status, name).toBe(status);
      const declared = doc.paths[documented]![method]!.responses[String(status)];
      expect(declared, name).toBeDefined();
      const schema = declared!.content?.["application/json"]?.schema;
      expect(schema, name).toBeDefined();
      const result = new Validator({ ...schema, components: doc.components } as Schema, "2020-12").validate(
        await response.json(),
      );
      expect(result.errors, name).toEqual([]);
    }
  });

  it("GET /api/v1/runs/{run_id} answers a TracingRun, not the Agent Server's Run", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const schema = doc.paths["/api/v1/runs/{run_id}"]!.get!.responses["200"]!.content!["application/json"]!.schema;
    expect(schema).toEqual({ $ref: "#/components/schemas/TracingRun" });
    expect(doc.components.schemas.Run).toMatchObject({
      required: expect.arrayContaining(["run_id", "thread_id", "assistant_id"]),
    });
  });

  it("TracingRun lists the fields GET /api/v1/runs/{run_id} answers, and only those", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const component = doc.components.schemas.TracingRun as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    expect(Object.keys(component.properties ?? {})).toEqual(
      expect.arrayContaining([
        "id",
        "name",
        "run_type",
        "start_time",
        "end_time",
        "dotted_order",
        "trace_id",
        "session_id",
      ]),
    );
    expect(component.required).toEqual(
      expect.arrayContaining(["id", "trace_id", "dotted_order", "status", "app_path"]),
    );
    // A run with every kind of field, read back: it fits the schema, with no field left undescribed.
    const id = crypto.randomUUID();
    const posted = await call("/api/v1/runs", {
      method: "POST",
      json: {
        id,
        name: "described",
        run_type: "llm",
        start_time: "2026-11-22T12:00:00.000001Z",
        end_time: "2026-11-22T12:00:01Z",
        trace_id: id,
        dotted_order: `20261122T120000000001Z${id}`,
        inputs: { q: 1 },
        outputs: { usage_metadata: { input_tokens: 3, output_tokens: 4 } },
        extra: { metadata: { thread_id: "t" } },
        events: [{ name: "new_token", time: "2026-11-22T12:00:00.5Z" }],
        tags: ["a"],
        session_name: `described-${crypto.randomUUID()}`,
      },
    });
    expect(posted.status).toBe(202);
    const run = await json(await call(`/api/v1/runs/${id}`));
    const parsed = TracingRunSchema.strict().safeParse(run);
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it("a /runs/query page holds TracingRunSelections: every field but s3_urls, or the selected ones", async () => {
    const doc = await json<OpenApiDocument>(await call("/openapi.json", { key: null }));
    const page = doc.paths["/api/v1/runs/query"]!.post!.responses["200"]!.content!["application/json"]!.schema as {
      properties: { runs: { items: unknown } };
    };
    expect(page.properties.runs.items).toEqual({ $ref: "#/components/schemas/TracingRunSelection" });
    const id = crypto.randomUUID();
    const session_name = `selection-${crypto.randomUUID()}`;
    const posted = await call("/api/v1/runs", {
      method: "POST",
      json: { id, name: "selected", run_type: "chain", start_time: "2026-11-22T12:00:00Z", trace_id: id, session_name },
    });
    expect(posted.status).toBe(202);
    for (const select of [undefined, ["latency"], ["inputs", "feedback_stats"]]) {
      const answer = await json<{ runs: unknown[] }>(
        await call("/api/v1/runs/query", { method: "POST", json: { id: [id], select } }),
      );
      expect(answer.runs, JSON.stringify(select)).toHaveLength(1);
      const parsed = TracingRunSelectionSchema.strict().safeParse(answer.runs[0]);
      expect(parsed.error?.issues ?? [], JSON.stringify(select)).toEqual([]);
    }
  });

  it("no component name is shared by two different schemas", () => {
    const app = createApp();
    // Every zod schema reachable from the registered routes and components, by the component name it claims.
    const claims = new Map<string, Set<ZodType>>();
    const seen = new Set<unknown>();
    const visit = (value: unknown): void => {
      if (!value || typeof value !== "object" || seen.has(value)) return;
      seen.add(value);
      // zod schemas (checks carry `_zod` too, but no `.meta()`).
      if ("_zod" in value && typeof (value as { meta?: unknown }).meta === "function") {
        const schema = value as ZodType & { _zod: { def: Record<string, unknown> } };
        const refId = getRefId(schema);
        const def = schema._zod.def;
        // `.optional()`, `.nullable()`… of a named schema carry its name too; only the named one counts.
        const inner = (def.innerType ?? def.in) as ZodType | undefined;
        if (refId && !(inner && getRefId(inner) === refId))
          claims.set(refId, (claims.get(refId) ?? new Set()).add(schema));
        if (typeof def.getter === "function") visit((def.getter as () => unknown)());
        for (const child of Object.values(def)) visit(child);
        return;
      }
      for (const child of Object.values(value)) visit(child);
    };
    visit(app.openAPIRegistry.definitions);
    expect(claims.get("Run")?.size).toBe(1);
    expect(claims.get("TracingRun")?.size).toBe(1);
    const collisions = [...claims]
      .filter(([, schemas]) => {
        const generated = [...schemas].map((schema) =>
          JSON.stringify(new OpenApiGeneratorV31([schema]).generateComponents().components?.schemas),
        );
        return new Set(generated).size > 1;
      })
      .map(([name]) => name);
    expect(collisions).toEqual([]);
  });
});

describe("/docs", () => {
  it("serves an interactive reference whose assets all come from this Worker", async () => {
    const response = await call("/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const html = await response.text();
    expect(html).toContain("SwaggerUIBundle");
    expect(html).toContain('url: "/openapi.json"');
    // No absolute URL anywhere: nothing is fetched from another host.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual(["/docs/favicon-32x32.png", "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]);
    for (const asset of assets) {
      const served = await call(asset, { key: null });
      expect(served.status, asset).toBe(200);
      expect((await served.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const js = await call("/docs/swagger-ui-bundle.js", { key: null });
    expect(js.headers.get("content-type")).toContain("javascript");
    expect(await js.text()).toContain("SwaggerUIBundle");
  });

  it("serves nothing else from the assets directory", async () => {
    expect((await call("/docs/package.json", { key: null })).status).toBe(404);
  });
});
