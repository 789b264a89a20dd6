import avro, { type Type } from 'avsc';

// avsc is CommonJS: Node's ESM loader sees only its default export.
import type { Codec, SchemaIssue } from './codec.js';

/**
 * Avro values in the shape of Avro's JSON encoding, as REST Proxy takes them: a union's value
 * wrapped in its branch's name (`{"string": "x"}`), bytes and fixed as strings of code points
 * 0-255. Fields the schema does not declare are refused, not dropped.
 */
export function avroCodec(schema: string): Codec {
  const type = avro.Type.forSchema(JSON.parse(schema), { wrapUnions: true });
  return {
    type: 'AVRO',
    recordName: type.name ?? undefined,
    encode(value) {
      let copy: unknown;
      try {
        // Avro's JSON decoding (avsc's fromString): wrapped unions, bytes from code points.
        copy = type.fromString(JSON.stringify(value));
      } catch {
        copy = undefined; // isValid below finds where
      }
      let issue: SchemaIssue | undefined;
      type.isValid(copy ?? value, {
        noUndeclaredFields: true,
        errorHook: (path, found, expected) => {
          // In the raw value bytes and fixed are strings, as Avro's JSON encoding writes them.
          const jsonBytes =
            ['bytes', 'fixed'].includes(expected.typeName) && typeof found === 'string';
          if (!jsonBytes) issue ??= { path: path.join('.'), message: mismatch(found, expected) };
        },
      });
      issue ??= undeclaredField(type, value);
      if (issue) return { issue };
      if (copy === undefined) return { issue: { path: '', message: 'does not match the schema' } };
      return { bytes: type.toBuffer(copy) };
    },
  };
}

/** `clone` drops fields a record does not declare; they are refused here, on the raw value. */
function undeclaredField(type: Type, value: unknown): SchemaIssue | undefined {
  let issue: SchemaIssue | undefined;
  type.isValid(value, {
    noUndeclaredFields: true,
    errorHook: (path, found, expected) => {
      if (issue || !(expected instanceof avro.types.RecordType) || !isObject(found)) return;
      const declared = new Set(expected.fields.map((field) => field.name));
      const key = Object.keys(found).find((name) => !declared.has(name));
      if (key !== undefined) {
        issue = { path: [...path, key].join('.'), message: `is not a field of ${expected.name}` };
      }
    },
  });
  return issue;
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mismatch(found: unknown, expected: Type): string {
  const name = expected.name ?? expected.typeName;
  if (found === undefined) return `is required (${name})`;
  return `must be ${name}, not ${JSON.stringify(found)?.slice(0, 60)}`;
}
