// Hostile values in every field of every operation's body, from the OpenAPI document: null in each
// optional field, strings at and just past each documented length, nesting at and past the depth
// limits, whole bodies at and past MAX_BODY_BYTES, and lone UTF-16 surrogates in strings and keys.
import { expect, it } from "vitest";
import {
  DEFAULT_MAX_BODY_BYTES,
  MAX_DATA_DEPTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_EXPORT_PREFIX_LENGTH,
  MAX_GRAPH_DATA_DEPTH,
  MAX_ID_LENGTH,
  MAX_NAME_LENGTH,
  MAX_NAMESPACE_LABEL_LENGTH,
  MAX_NAMESPACE_LABELS,
  MAX_STORE_KEY_LENGTH,
  MAX_URL_BYTES,
} from "../../../src/core/limits.ts";
import { baseBody, bodyEndpoints, type Field, fieldsOf, ITEMS, pathOf, setAt } from "./bodies.ts";
import {
  api,
  call,
  describeAnswer,
  describeRequest,
  type Endpoint,
  type Exchange,
  Findings,
  type Fixtures,
  fill,
  fuzz,
  inParallel,
  jsonSchemaOf,
  params,
} from "./harness.ts";

const CONCURRENCY = 4;
/** A request that creates a run of the echo graph ends well within this, or it is hung. */
const REQUEST_DEADLINE_MS = 30_000;

/** One mutated request, and what its answer must satisfy beyond the common rule (null when it does). */
interface Mutation {
  endpoint: Endpoint;
  what: string;
  path?: string;
  body: unknown;
  expect?: (exchange: Exchange) => { cause: string } | null;
}

async function sendAll(findings: Findings, mutations: Mutation[], fixtures: Fixtures): Promise<void> {
  await inParallel(mutations, CONCURRENCY, async (mutation) => {
    const { endpoint } = mutation;
    const method = endpoint.method.toUpperCase();
    // A run gets a thread of its own, so it never waits behind another probe's run.
    const ownThread =
      method === "POST" && endpoint.path.startsWith("/threads/{thread_id}/runs") && !mutation.path
        ? { thread_id: (await api<{ thread_id: string }>("POST", "/threads", {})).body.thread_id }
        : undefined;
    const path = mutation.path ?? fill(fixtures, endpoint, ownThread);
    // Streams and waits end with their run; a run that does not end is a hung request here.
    const exchange = await call(method, path, { body: mutation.body, timeoutMs: REQUEST_DEADLINE_MS });
    const request = describeRequest(method, endpoint.path, mutation.what, mutation.body);
    if (!findings.check(request, exchange, endpoint.operation)) return;
    const extra = mutation.expect?.(exchange);
    if (extra) findings.add(extra.cause, request, describeAnswer(exchange));
  });
}

const fieldName = (field: Field) => field.path.filter((segment) => segment !== ITEMS).join(".");

/** Each operation's body fields, with its base body. */
function eachField(fixtures: Fixtures, pick: (field: Field) => boolean) {
  return bodyEndpoints().flatMap((endpoint, index) => {
    const base = baseBody(endpoint, fixtures, index);
    return fieldsOf(jsonSchemaOf(endpoint)!)
      .filter(pick)
      .map((field) => ({ endpoint, base, field }));
  });
}

/** Whether a 422's detail blames `field` for its length. */
function refusedForLength(exchange: Exchange, field: Field): boolean {
  if (exchange.status !== 422) return false;
  const detail = (exchange.json as { detail?: unknown }).detail;
  const last = field.path.filter((segment) => segment !== ITEMS).at(-1)!;
  if (Array.isArray(detail))
    return detail.some(
      (entry: { type?: string; loc?: unknown[] }) =>
        entry.type === "too_big" && Array.isArray(entry.loc) && entry.loc.includes(last),
    );
  return typeof detail === "string" && detail.includes(last) && /at most|too long|longer than|characters/.test(detail);
}

const nested = (levels: number): unknown => {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) value = { n: value };
  return value;
};

export function describeFieldValues(fixtures: () => Fixtures): void {
  it("answers null in every optional body field without a 5xx, and every 4xx with a detail", async () => {
    const findings = new Findings("null in optional fields");
    const mutations = eachField(fixtures(), (field) => !field.required && !field.path.includes(ITEMS)).map(
      ({ endpoint, base, field }) => ({
        endpoint,
        what: `${fieldName(field)}: null`,
        body: setAt(base, field.path, null),
      }),
    );
    expect(mutations.length).toBeGreaterThan(300);
    await sendAll(findings, mutations, fixtures());
    findings.expectNone();
  }, 180_000);

  it("accepts each string at its documented length and refuses it one character longer", async () => {
    const findings = new Findings("string lengths");
    const fields = eachField(fixtures(), (field) => field.string && field.maxLength !== undefined);
    // Every length limit of src/core/limits.ts that a body field carries is in the document.
    const documented = new Set(fields.map(({ field }) => field.maxLength));
    for (const limit of [
      MAX_ID_LENGTH,
      MAX_NAME_LENGTH,
      MAX_DESCRIPTION_LENGTH,
      MAX_DISPLAY_NAME_LENGTH,
      MAX_EXPORT_PREFIX_LENGTH,
    ])
      expect(documented, `a body field limited to ${limit} characters`).toContain(limit);
    const mutations: Mutation[] = fields.flatMap(({ endpoint, base, field }) => {
      const max = field.maxLength!;
      // A union member's field goes alone into its parent, so no other member takes the parent instead.
      const put = (value: string) =>
        field.inUnionMember && field.path.length > 1
          ? setAt(base, field.path.slice(0, -1), { [field.path.at(-1)!]: value })
          : setAt(base, field.path, value);
      return [
        {
          endpoint,
          what: `${fieldName(field)}: ${max} characters (the limit)`,
          body: put("x".repeat(max)),
          expect: (exchange: Exchange) =>
            refusedForLength(exchange, field) ? { cause: "refused at its documented length" } : null,
        },
        {
          endpoint,
          what: `${fieldName(field)}: ${max + 1} characters (one past the limit)`,
          body: put("x".repeat(max + 1)),
          expect: (exchange: Exchange) =>
            typeof exchange.status === "number" && exchange.status < 400
              ? { cause: "accepted past its documented length" }
              : null,
        },
      ];
    });
    await sendAll(findings, mutations, fixtures());

    // The store's limits live in the handler, not the schema: key, label length and label count.
    const store = async (what: string, namespace: string[], key: string, refused: boolean) => {
      const exchange = await call("PUT", "/store/items", { body: { namespace, key, value: { a: 1 } } });
      const request = describeRequest("PUT", "/store/items", what);
      if (!findings.check(request, exchange)) return;
      if (refused !== (exchange.status === 422))
        findings.add(
          refused ? "accepted past its documented length" : "refused at its documented length",
          request,
          describeAnswer(exchange),
        );
    };
    await store("key at MAX_STORE_KEY_LENGTH", ["fuzz"], "k".repeat(MAX_STORE_KEY_LENGTH), false);
    await store("key past MAX_STORE_KEY_LENGTH", ["fuzz"], "k".repeat(MAX_STORE_KEY_LENGTH + 1), true);
    await store("label at MAX_NAMESPACE_LABEL_LENGTH", ["n".repeat(MAX_NAMESPACE_LABEL_LENGTH)], "k", false);
    await store("label past MAX_NAMESPACE_LABEL_LENGTH", ["n".repeat(MAX_NAMESPACE_LABEL_LENGTH + 1)], "k", true);
    await store(
      "MAX_NAMESPACE_LABELS labels",
      Array.from({ length: MAX_NAMESPACE_LABELS }, (_, i) => `l${i}`),
      "k",
      false,
    );
    await store(
      "one label past MAX_NAMESPACE_LABELS",
      Array.from({ length: MAX_NAMESPACE_LABELS + 1 }, (_, i) => `l${i}`),
      "k",
      true,
    );

    // The URL (origin, path and query, as the Worker sees it): 414 past MAX_URL_BYTES, never before.
    for (const [what, bytes, refused] of [
      ["URL at MAX_URL_BYTES", MAX_URL_BYTES, false],
      ["URL one byte past MAX_URL_BYTES", MAX_URL_BYTES + 1, true],
    ] as const) {
      const prefix = `${fuzz.server.url}/store/items?namespace=fuzz&key=`;
      const exchange = await call("GET", "/store/items", {
        query: `namespace=fuzz&key=${"k".repeat(bytes - prefix.length)}`,
      });
      const request = describeRequest("GET", "/store/items", what);
      if (!findings.check(request, exchange)) continue;
      if (refused !== (exchange.status === 414))
        findings.add(
          refused ? "URL accepted past MAX_URL_BYTES" : "URL refused within MAX_URL_BYTES",
          request,
          describeAnswer(exchange),
        );
    }
    findings.expectNone();
  }, 180_000);

  it("takes nesting under the graph-data depth in every free-form field, and refuses it past the store depth", async () => {
    const findings = new Findings("nesting depth");
    const fields = eachField(fixtures(), (field) => field.freeForm);
    const mutations: Mutation[] = fields.flatMap(({ endpoint, base, field }) => [
      {
        endpoint,
        what: `${fieldName(field)}: ${MAX_GRAPH_DATA_DEPTH - 2} levels`,
        body: setAt(base, field.path, nested(MAX_GRAPH_DATA_DEPTH - 2)),
        expect: (exchange: Exchange) =>
          exchange.status === 422 && /nesting|deeper/.test(JSON.stringify(exchange.json))
            ? { cause: "refused for nesting within every depth limit" }
            : null,
      },
      {
        endpoint,
        what: `${fieldName(field)}: ${MAX_DATA_DEPTH + 1} levels`,
        body: setAt(base, field.path, nested(MAX_DATA_DEPTH + 1)),
        expect: (exchange: Exchange) =>
          typeof exchange.status === "number" && exchange.status < 400
            ? { cause: "accepted nesting past every depth limit" }
            : null,
      },
    ]);
    await sendAll(findings, mutations, fixtures());
    findings.expectNone();
  }, 180_000);

  it("answers a body just under MAX_BODY_BYTES without a 5xx, and one just over it with a 413", async () => {
    const findings = new Findings("body size");
    const limit = DEFAULT_MAX_BODY_BYTES;
    const endpoints = bodyEndpoints();
    const over: Mutation[] = endpoints.map((endpoint, index) => {
      const base = baseBody(endpoint, fixtures(), index);
      const padding = limit + 1 - JSON.stringify(setAt(base, ["fuzz_padding"], "")).length;
      return {
        endpoint,
        what: `${limit + 1} bytes`,
        body: JSON.stringify(setAt(base, ["fuzz_padding"], "x".repeat(padding))),
        expect: (exchange) =>
          exchange.status === 413 ? null : { cause: "a body past MAX_BODY_BYTES not refused with 413" },
      };
    });
    // Under the limit, the bulk goes into the operation's first free-form field (where a big value
    // travels furthest: state, checkpoints, D1 rows, shards), once per operation that has one.
    // Operations that share a body schema (the six run creations, say) share this probe: 10 MB each is slow.
    const schemas = new Set<string>();
    const under: Mutation[] = endpoints.flatMap((endpoint, index) => {
      const field = fieldsOf(jsonSchemaOf(endpoint)!).find((f) => f.freeForm && !f.path.includes(ITEMS));
      const schema = JSON.stringify(jsonSchemaOf(endpoint));
      if (!field || schemas.has(schema)) return [];
      schemas.add(schema);
      const base = baseBody(endpoint, fixtures(), index);
      const padding = limit - 64 - JSON.stringify(setAt(base, field.path, { big: "" })).length;
      return [
        {
          endpoint,
          what: `${limit - 64} bytes in ${fieldName(field)}`,
          body: JSON.stringify(setAt(base, field.path, { big: "x".repeat(padding) })),
        },
      ];
    });
    for (const mutation of over) mutation.body = new TextEncoder().encode(mutation.body as string);
    const slowest: [number, string][] = [];
    const send = async (mutations: Mutation[], concurrency: number) =>
      inParallel(mutations, concurrency, async (mutation) => {
        const method = mutation.endpoint.method.toUpperCase();
        const started = Date.now();
        const exchange = await call(method, pathOf(mutation.endpoint, fixtures()), {
          body: mutation.body,
          headers: { "Content-Type": "application/json" },
          timeoutMs: REQUEST_DEADLINE_MS,
        });
        slowest.push([Date.now() - started, `${method} ${mutation.endpoint.path} (${mutation.what})`]);
        const request = describeRequest(method, mutation.endpoint.path, mutation.what);
        if (!findings.check(request, exchange, mutation.endpoint.operation)) return;
        const extra = mutation.expect?.(exchange);
        if (extra) findings.add(extra.cause, request, describeAnswer(exchange));
      });
    await send(over, CONCURRENCY);
    await send(
      under.map((m) => ({ ...m, body: new TextEncoder().encode(m.body as string) })),
      2,
    );
    slowest.sort(([a], [b]) => b - a);
    console.log(
      `body size: ${over.length} bodies over the limit, ${under.length} under it; slowest: ${slowest
        .slice(0, 5)
        .map(([ms, what]) => `${what} ${(ms / 1000).toFixed(1)} s`)
        .join("; ")}`,
    );
    findings.expectNone();
  }, 300_000);

  it("answers lone surrogates in every string field, key and id without a 5xx, and refuses them in store keys", async () => {
    const findings = new Findings("lone surrogates");
    const lone = ["\ud800", "a\udfffb"];
    const mutations: Mutation[] = eachField(fixtures(), (field) => field.string || field.freeForm).flatMap(
      ({ endpoint, base, field }) =>
        lone.map((text, i) => ({
          endpoint,
          what: `${fieldName(field)}: ${field.string ? JSON.stringify(text) : "an object with one in a key and a value"}`,
          body: setAt(base, field.path, field.string ? text : { [`k${text}`]: text, nested: { [text]: [text] }, i }),
        })),
    );
    await sendAll(findings, mutations, fixtures());

    // Ids in paths: a lone surrogate arrives as the UTF-8 bytes of one (not valid UTF-8).
    const pathMutations: Mutation[] = bodyEndpoints()
      .concat()
      .flatMap((endpoint) =>
        params(endpoint, "path").map((parameter) => ({
          endpoint,
          what: `${parameter.name}: %ED%A0%80`,
          path: fill(fixtures(), endpoint, { [parameter.name]: "%ED%A0%80" }),
          body: {},
        })),
      );
    await sendAll(findings, pathMutations, fixtures());

    // The store refuses them where they would become a key: the item key and each namespace label.
    const refused = async (method: string, what: string, init: { body?: unknown; query?: string }) => {
      const exchange = await call(method, "/store/items", init);
      const request = describeRequest(method, "/store/items", what);
      if (findings.check(request, exchange) && exchange.status !== 422)
        findings.add(
          "a lone surrogate in a store key or namespace not refused with 422",
          request,
          describeAnswer(exchange),
        );
    };
    for (const text of lone) {
      await refused("PUT", `key ${JSON.stringify(text)}`, {
        body: { namespace: ["fuzz"], key: text, value: { a: 1 } },
      });
      await refused("PUT", `namespace label ${JSON.stringify(text)}`, {
        body: { namespace: ["fuzz", text], key: "k", value: {} },
      });
      await refused("DELETE", `key ${JSON.stringify(text)}`, { body: { namespace: ["fuzz"], key: text } });
    }
    await refused("GET", "key=%ED%A0%80", { query: "namespace=fuzz&key=%ED%A0%80" });
    await refused("GET", "namespace=%ED%A0%80", { query: "namespace=%ED%A0%80&key=item" });
    findings.expectNone();
  }, 180_000);
}
