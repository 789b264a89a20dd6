import { describe, expect, it } from 'vitest';
import { createSchemaRegistryClient } from '../../../../functions/adapters/schema-registry/registry-client.js';

type Answer = { status: number; body?: unknown } | Error;

/** A fetch that records each request and answers from a script. */
function scriptedFetch(answers: Answer[]) {
  const requests: Array<{
    url: string;
    method: string;
    headers: Record<string, string>;
    body?: string;
  }> = [];
  const fetcher = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push({
      url: String(url),
      method: init?.method ?? 'GET',
      headers: init?.headers as Record<string, string>,
      ...(typeof init?.body === 'string' && { body: init.body }),
    });
    const answer = answers.shift();
    if (answer === undefined) throw new Error('no answer scripted');
    if (answer instanceof Error) throw answer;
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
    });
  };
  return { fetch: fetcher as typeof fetch, requests };
}

async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error('expected a rejection');
  return error as unknown as Record<string, unknown>;
}

describe('schema registry client (Confluent API)', () => {
  it('reads a schema by id; a missing schemaType means AVRO; basic auth when given', async () => {
    const { fetch, requests } = scriptedFetch([{ status: 200, body: { schema: '"string"' } }]);
    const client = createSchemaRegistryClient({
      url: 'http://registry.test/apis/ccompat/v7/',
      credentials: { username: 'u', password: 'p' },
      fetch,
    });
    expect(await client.schemaById(7, 'value.schema_id')).toEqual({
      id: 7,
      type: 'AVRO',
      schema: '"string"',
      hasReferences: false,
    });
    expect(requests[0]).toMatchObject({
      url: 'http://registry.test/apis/ccompat/v7/schemas/ids/7',
      method: 'GET',
      headers: { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
    });
  });

  it('reads a subject version, escaping the subject, and notes references', async () => {
    const body = { id: 3, schemaType: 'PROTOBUF', schema: 'x', references: [{ name: 'a.proto' }] };
    const { fetch, requests } = scriptedFetch([{ status: 200, body }]);
    const client = createSchemaRegistryClient({ url: 'http://r', fetch });
    expect(await client.subjectVersion('a/b', 'latest', 'value.subject')).toMatchObject({
      id: 3,
      type: 'PROTOBUF',
      hasReferences: true,
    });
    expect(requests[0]?.url).toBe('http://r/subjects/a%2Fb/versions/latest');
  });

  it('registers with POST and returns the id', async () => {
    const { fetch, requests } = scriptedFetch([{ status: 200, body: { id: 12 } }]);
    const client = createSchemaRegistryClient({ url: 'http://r', fetch });
    expect(await client.register('orders-value', 'JSON', '{}', 'value.schema')).toBe(12);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: 'http://r/subjects/orders-value/versions',
    });
    expect(JSON.parse(requests[0]?.body ?? '')).toEqual({ schemaType: 'JSON', schema: '{}' });
  });

  it("finds a schema's version under a subject with POST /subjects/{subject}", async () => {
    const { fetch, requests } = scriptedFetch([
      { status: 200, body: { subject: 'orders-value', id: 4, version: 2, schema: '{}' } },
      { status: 404, body: { error_code: 40403, message: 'Schema not found' } },
    ]);
    const client = createSchemaRegistryClient({ url: 'http://r', fetch });
    expect(await client.versionUnder('orders-value', 'JSON', '{}', 'value.schema_id')).toBe(2);
    expect(requests[0]).toMatchObject({ method: 'POST', url: 'http://r/subjects/orders-value' });
    expect(JSON.parse(requests[0]?.body ?? '')).toEqual({ schemaType: 'JSON', schema: '{}' });
    expect(
      await rejection(client.versionUnder('a/b', 'AVRO', '"string"', 'value.schema_id')),
    ).toMatchObject({ name: 'SchemaNotFoundError', errorCode: 40403, field: 'value.schema_id' });
    expect(requests[1]?.url).toBe('http://r/subjects/a%2Fb');
  });

  it.each([
    [
      { status: 404, body: { error_code: 40403, message: 'Schema not found' } },
      'SchemaNotFoundError',
      404,
      40403,
      false,
    ],
    [
      { status: 409, body: { error_code: 409, message: 'incompatible' } },
      'SchemaRefusedError',
      422,
      409,
      false,
    ],
    [
      { status: 422, body: { error_code: 42201, message: 'Invalid schema' } },
      'SchemaRefusedError',
      422,
      42201,
      false,
    ],
    [{ status: 401, body: {} }, 'SchemaRegistryAccessError', 500, 500, false],
    [{ status: 503 }, 'SchemaRegistryUnavailableError', 503, 503, true],
    [{ status: 429, body: {} }, 'SchemaRegistryUnavailableError', 503, 503, true],
    [new TypeError('fetch failed'), 'SchemaRegistryUnavailableError', 503, 503, true],
  ] as const)('%j → %s', async (answer, name, status, errorCode, retriable) => {
    const { fetch } = scriptedFetch([answer]);
    const client = createSchemaRegistryClient({ url: 'http://r', fetch });
    const error = await rejection(client.register('s', 'AVRO', '"int"', 'records[1].value.schema'));
    expect(error).toMatchObject({
      name,
      status,
      errorCode,
      retriable,
      field: 'records[1].value.schema',
    });
  });

  it('treats an answer without a usable schema as the registry failing, not the caller', async () => {
    const { fetch } = scriptedFetch([{ status: 200, body: { schema: 'x', schemaType: 'XML' } }]);
    const client = createSchemaRegistryClient({ url: 'http://r', fetch });
    expect(await rejection(client.schemaById(1, 'value.schema_id'))).toMatchObject({
      name: 'SchemaRegistryUnavailableError',
      retriable: true,
    });
  });
});
