// Request bodies driven by the OpenAPI document: a valid base body per operation, the fields of its
// schema (to null, resize or replace one at a time), and the operations that take a JSON body.
import fc from "fast-check";
import { type Endpoint, endpointsOf, type Fixtures, fill, fuzz, jsonSchemaOf, knownValues } from "./harness.ts";
import { type JsonSchema, resolve, schemaArbitrary } from "./schema-arbitrary.ts";

export const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);

/** A field of a body schema, found by walking its properties (through $ref, allOf and anyOf). */
export interface Field {
  path: string[];
  schema: JsonSchema;
  /** Required at every level down from the body. */
  required: boolean;
  /** Any JSON object (metadata, input, config.configurable…): no declared properties. */
  freeForm: boolean;
  /** A string (or a string variant of a union). */
  string: boolean;
  maxLength?: number;
  /** Declared by one member of its parent's anyOf/oneOf: another member may take the parent and ignore it. */
  inUnionMember: boolean;
}

/** Path segments walked down from the body (`supersteps.[].updates.[].values` is five). */
const MAX_FIELD_DEPTH = 5;
/** The path segment of an array's items. */
export const ITEMS = "[]";

/** The variants of a schema, resolved: itself, or the members of its anyOf/oneOf (allOf members merged into one). */
function variants(schema: JsonSchema): JsonSchema[] {
  let s = resolve(schema, fuzz.doc.components.schemas);
  if (s.allOf?.length) {
    const parts = s.allOf.map((part) => resolve(part, fuzz.doc.components.schemas));
    const { allOf: _merged, ...rest } = s;
    s = Object.assign({}, ...parts, rest, {
      properties: Object.assign({}, ...parts.map((part) => part.properties ?? {}), rest.properties ?? {}),
    }) as JsonSchema;
  }
  const members = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
  return members.length ? [s, ...members.flatMap(variants)] : [s];
}

const typesOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

/** Every field of `schema` (top level, nested objects and array items) down to five path segments. */
export function fieldsOf(schema: JsonSchema): Field[] {
  const fields = new Map<string, Field>();
  const walk = (current: JsonSchema, path: string[], required: boolean) => {
    if (path.length >= MAX_FIELD_DEPTH) return;
    for (const [position, variant] of variants(current).entries()) {
      for (const [name, property] of Object.entries(variant.properties ?? {})) {
        const childPath = [...path, name];
        const key = childPath.join(".");
        const childRequired = required && (variant.required ?? []).includes(name);
        const all = variants(property);
        const freeForm = all.some(
          (v) =>
            !v.enum &&
            v.const === undefined &&
            !v.properties &&
            !v.anyOf &&
            !v.oneOf &&
            (typesOf(v).length === 0 ? !v.items : typesOf(v).includes("object")),
        );
        const strings = all.filter((v) => typesOf(v).includes("string") && !v.enum && v.const === undefined);
        const maxLength = strings.map((v) => v.maxLength).find((n) => n !== undefined);
        const previous = fields.get(key);
        fields.set(key, {
          path: childPath,
          schema: property,
          required: previous ? previous.required || childRequired : childRequired,
          freeForm: (previous?.freeForm ?? false) || freeForm,
          string: (previous?.string ?? false) || strings.length > 0,
          maxLength: previous?.maxLength ?? maxLength,
          inUnionMember: (previous?.inUnionMember ?? false) || position > 0,
        });
        walk(property, childPath, childRequired);
        for (const items of all.map((v) => v.items).filter((i) => i !== undefined))
          walk(items, [...childPath, ITEMS], childRequired);
      }
    }
  };
  walk(schema, [], true);
  return [...fields.values()];
}

/**
 * `body` with `value` at `path`: objects are created on the way, an array segment (`[]`) is the
 * array's first item (a one-item array when there is none), and a non-object body becomes an object.
 */
export function setAt(body: unknown, path: string[], value: unknown): Record<string, unknown> {
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
  const root: Record<string, unknown> = isObject(body) ? structuredClone(body) : {};
  let node = root;
  for (let index = 0; index < path.length; index++) {
    const name = path[index]!;
    const last = index === path.length - 1 || (index === path.length - 2 && path[index + 1] === ITEMS);
    if (path[index + 1] === ITEMS) {
      const items = Array.isArray(node[name]) ? (node[name] as unknown[]) : [];
      if (last) {
        node[name] = [value, ...items.slice(1)];
        return root;
      }
      const first = isObject(items[0]) ? items[0] : {};
      node[name] = [first, ...items.slice(1)];
      node = first;
      index++;
      continue;
    }
    if (last) {
      node[name] = value;
      return root;
    }
    node[name] = isObject(node[name]) ? node[name] : {};
    node = node[name] as Record<string, unknown>;
  }
  return root;
}

/** Operations with a JSON body, deletions last (so they do not remove what the others use). */
export function bodyEndpoints(): Endpoint[] {
  const order = (e: Endpoint) => (e.method === "delete" ? 1 : 0);
  return endpointsOf(fuzz.doc)
    .filter((endpoint) => jsonSchemaOf(endpoint) !== undefined)
    .sort((a, b) => order(a) - order(b));
}

/** Known values for the hostile suites: the generic ones, and a plan that keeps crons and exports open. */
export function hostileKnownValues(fixtures: Fixtures) {
  return { ...knownValues(fixtures), plan: ["enterprise"], on_completion: ["keep"] };
}

/** A valid body for the operation (fixed seed; patterns and cross-field rules aside, see `schemaArbitrary`). */
export function baseBody(endpoint: Endpoint, fixtures: Fixtures, index: number): unknown {
  const schema = jsonSchemaOf(endpoint)!;
  const arbitrary = schemaArbitrary(schema, fuzz.doc.components.schemas, hostileKnownValues(fixtures));
  const [body] = fc.sample(arbitrary, { seed: SEED + index * 7_919, numRuns: 1 });
  // A run scheduled days ahead is not a hung run: the hostile suites start runs now.
  if (body && typeof body === "object" && "after_seconds" in body)
    delete (body as { after_seconds?: unknown }).after_seconds;
  return body;
}

/** The operation's path with the fixtures' ids. */
export const pathOf = (endpoint: Endpoint, fixtures: Fixtures) => fill(fixtures, endpoint);

/** The operation's body schema, resolved. */
export const bodySchemaOf = (endpoint: Endpoint): JsonSchema =>
  resolve(jsonSchemaOf(endpoint)!, fuzz.doc.components.schemas);
