import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Codec, SchemaIssue } from './codec.js';

/** JSON Schema draft-06/07, 2019-09 or 2020-12, chosen by the schema's `$schema`. */
function validatorFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const options = { allErrors: false, strict: false, validateFormats: true };
  const ajv = dialect.includes('2020-12')
    ? new Ajv2020(options)
    : dialect.includes('2019-09')
      ? new Ajv2019(options)
      : new Ajv(options);
  addFormats.default(ajv);
  return ajv;
}

/** The value serialized as UTF-8 JSON, as Confluent's JSON Schema serializer writes it. */
export function jsonCodec(schema: string): Codec {
  const parsed: unknown = JSON.parse(schema);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error('a JSON Schema is an object');
  }
  const definition = parsed as Record<string, unknown>;
  const validate = validatorFor(definition).compile(definition);
  return {
    type: 'JSON',
    recordName: typeof definition.title === 'string' ? definition.title : undefined,
    encode(value) {
      if (validate(value)) return { bytes: Buffer.from(JSON.stringify(value), 'utf8') };
      return { issue: issueOf(validate.errors?.[0]) };
    },
  };
}

function issueOf(error: ErrorObject | undefined): SchemaIssue {
  if (error === undefined) return { path: '', message: 'does not match the schema' };
  // "/lines/2/sku" → "lines[2].sku"; a missing property is named as the field at fault.
  let path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (at, part) => (/^\d+$/.test(part) ? `${at}[${part}]` : at ? `${at}.${part}` : part),
      '',
    );
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty: string }).missingProperty);
    path = path ? `${path}.${missing}` : missing;
    return { path, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty: string }).additionalProperty);
    return { path: path ? `${path}.${extra}` : extra, message: 'is not allowed by the schema' };
  }
  return { path, message: error.message ?? 'does not match the schema' };
}
