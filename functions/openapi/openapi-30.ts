// The OpenAPI 3.0 rendering of Tally's 3.1 document (document.ts), for what reads only 3.0: API
// Gateway's import, older client generators. It rewrites the few 3.1-only constructs the
// document uses; what 3.0 cannot say is loosened, never made stricter:
//   `const: v` → `enum: [v]`; `{type: 'null'}` → `{nullable: true, enum: [null]}`;
//   `anyOf: [X, {type: 'null'}]` → X with `nullable: true` (a $ref: `allOf: [X]`, nullable);
//   `prefixItems` (a pair) → `items` taking any of them; `unevaluatedProperties: false` →
//   `additionalProperties: false` (every closed schema declares its properties itself);
//   `jsonSchemaDialect`, `info.summary` and `license.identifier` are dropped or folded.
import type { OpenApiDocument } from './document.js';
import type { Schema } from './schemas.js';

type Json = { [key: string]: unknown };
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNull = (schema: unknown) => isObject(schema) && schema.type === 'null';

/** One 3.1 schema (JSON Schema 2020-12) as a 3.0 Schema Object, subschemas included. */
export function schema30(schema: Schema): Schema {
  const { anyOf, const: constant, prefixItems, unevaluatedProperties, type, ...rest } = schema;
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull)) {
    const other = schema30(anyOf.find((s) => !isNull(s)) as Schema);
    const nullable = '$ref' in other ? { allOf: [other] } : other;
    return { ...schema30(rest), ...nullable, nullable: true };
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'properties' && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [name, schema30(s as Schema)]),
      );
    } else if (['items', 'not', 'additionalProperties'].includes(key) && isObject(value)) {
      out[key] = schema30(value);
    } else if (['allOf', 'oneOf'].includes(key) && Array.isArray(value)) {
      out[key] = value.map((s) => schema30(s as Schema));
    } else if (!(key === 'required' && Array.isArray(value) && value.length === 0)) {
      // 3.0's `required` needs at least one name.
      out[key] = value;
    }
  }
  if (Array.isArray(anyOf)) out.anyOf = anyOf.map((s) => schema30(s as Schema));
  if (type === 'null') Object.assign(out, { nullable: true, enum: [null] });
  else if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null');
    Object.assign(out, { type: types[0] }, types.length < type.length && { nullable: true });
  } else if (type !== undefined) out.type = type;
  if (constant !== undefined) {
    Object.assign(out, { enum: [constant] }, constant === null && { nullable: true });
  }
  if (Array.isArray(prefixItems)) {
    const items = prefixItems.map((s) => schema30(s as Schema));
    const same = items.every((s) => JSON.stringify(s) === JSON.stringify(items[0]));
    out.items = same ? items[0] : { anyOf: items };
  }
  if (unevaluatedProperties === false) out.additionalProperties = false;
  return out;
}

/** A parameter, media type or header with its `schema` rewritten. */
const withSchema30 = (entry: unknown) =>
  isObject(entry) && isObject(entry.schema) ? { ...entry, schema: schema30(entry.schema) } : entry;
/** Every entry of a media type (`content`) or header map, its schema rewritten. */
const mapSchemas = (entries: unknown) =>
  isObject(entries)
    ? Object.fromEntries(Object.entries(entries).map(([name, e]) => [name, withSchema30(e)]))
    : entries;

function operation30(operation: Json): Json {
  const { parameters, requestBody, responses, ...rest } = operation;
  return {
    ...rest,
    ...(Array.isArray(parameters) && { parameters: parameters.map(withSchema30) }),
    ...(isObject(requestBody) && {
      requestBody: { ...requestBody, content: mapSchemas(requestBody.content) },
    }),
    responses: Object.fromEntries(
      Object.entries(responses as Json).map(([status, response]) => {
        const r = response as Json;
        return [
          status,
          {
            ...r,
            ...(r.content !== undefined && { content: mapSchemas(r.content) }),
            ...(r.headers !== undefined && { headers: mapSchemas(r.headers) }),
          },
        ];
      }),
    ),
  };
}

export function openApi30(document: OpenApiDocument): OpenApiDocument {
  const { jsonSchemaDialect: _, info, paths, components, ...rest } = document;
  const { summary, license, description, ...about } = info as Json;
  return {
    ...rest,
    openapi: '3.0.3',
    info: {
      ...about,
      description: [summary, description].filter(Boolean).join('\n\n'),
      ...(isObject(license) && { license: { name: license.name } }),
    },
    paths: Object.fromEntries(
      Object.entries(paths).map(([path, item]) => [
        path,
        Object.fromEntries(Object.entries(item).map(([m, op]) => [m, operation30(op as Json)])),
      ]),
    ),
    components: {
      ...components,
      schemas: Object.fromEntries(
        Object.entries(components.schemas).map(([name, s]) => [name, schema30(s)]),
      ),
    },
  };
}
