import fc from "fast-check";

/** The subset of an OpenAPI 3.1 (JSON Schema 2020-12) schema the generator reads. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  nullable?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  format?: string;
  pattern?: string;
  default?: unknown;
}

export type Components = Record<string, JsonSchema>;

/** Values that make more requests reach real data: the fixtures the suite created, by field name. */
export type KnownValues = Record<string, readonly unknown[]>;

/** Follows `#/components/schemas/<name>` references. */
export function resolve(schema: JsonSchema, components: Components): JsonSchema {
  let current = schema;
  for (let hops = 0; current.$ref && hops < 20; hops++) {
    current = components[current.$ref.replace("#/components/schemas/", "")] ?? {};
  }
  return current;
}

const MAX_DEPTH = 4;
const anyJson = fc.jsonValue({ maxDepth: 2, depthSize: "small" });

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case "uuid":
      return fc.uuid();
    case "date-time":
      return fc
        .date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true })
        .map((d) => d.toISOString());
    case "email":
      return fc.emailAddress();
    case "uri":
    case "url":
      return fc.webUrl();
  }
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 16, 16)) });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min =
    schema.minimum ??
    (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-6) : undefined);
  const max =
    schema.maximum ??
    (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-6) : undefined);
  if (integer) return fc.integer({ min: min ?? -1_000, max: max ?? 1_000_000 });
  return fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/**
 * An arbitrary of values valid for `schema` (as far as JSON Schema goes: patterns and cross-field
 * rules are not modelled, so a few "valid" values are still refused; the server must say so with a
 * documented 4xx). Field names listed in `known` mostly take the fixtures' values.
 */
export function schemaArbitrary(
  schema: JsonSchema,
  components: Components,
  known: KnownValues = {},
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = resolve(schema, components);
  if (depth > MAX_DEPTH) return s.default !== undefined ? fc.constant(s.default) : fc.constant(null);
  const next = (child: JsonSchema) => schemaArbitrary(child, components, known, depth + 1);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const variants = s.anyOf ?? s.oneOf;
  if (variants?.length) return fc.oneof(...variants.map(next));
  if (s.allOf?.length)
    return next(Object.assign({}, ...s.allOf.map((part) => resolve(part, components))) as JsonSchema);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (s.nullable) types.push("null");
  if (types.length > 1) return fc.oneof(...types.map((type) => next({ ...s, type, nullable: false })));
  switch (types[0]) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return numberArbitrary(s, true);
    case "number":
      return numberArbitrary(s, false);
    case "string":
      return stringArbitrary(s);
    case "array": {
      if (s.prefixItems) return fc.tuple(...s.prefixItems.map(next));
      const minLength = s.minItems ?? 0;
      return fc.array(s.items ? next(s.items) : anyJson, {
        minLength,
        maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)),
      });
    }
    case "object":
      return objectArbitrary(s, next, known);
    default:
      return s.properties ? objectArbitrary(s, next, known) : anyJson;
  }
}

function objectArbitrary(
  s: JsonSchema,
  next: (child: JsonSchema) => fc.Arbitrary<unknown>,
  known: KnownValues,
): fc.Arbitrary<unknown> {
  const properties = s.properties ?? {};
  const names = Object.keys(properties);
  if (names.length === 0) {
    if (s.additionalProperties === false) return fc.constant({});
    const values = typeof s.additionalProperties === "object" ? next(s.additionalProperties) : anyJson;
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), values, { maxKeys: 3 });
  }
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) {
    const generated = next(properties[name]!);
    const fixtures = known[name];
    record[name] = fixtures?.length
      ? fc.oneof({ arbitrary: fc.constantFrom(...fixtures), weight: 3 }, { arbitrary: generated, weight: 1 })
      : generated;
  }
  return fc.record(record, { requiredKeys: (s.required ?? []).filter((name) => name in record) });
}

/** A value of another JSON type than `schema` allows (a string where an object is expected, …). */
export function wrongTypeValue(schema: JsonSchema, components: Components): unknown {
  const s = resolve(schema, components);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.includes("string")) return types.includes("number") ? [1] : 12345;
  if (types.includes("object") || s.properties) return "not an object";
  if (types.includes("array")) return { not: "an array" };
  if (types.includes("integer") || types.includes("number")) return "not a number";
  if (types.includes("boolean")) return "not a boolean";
  return undefined;
}
