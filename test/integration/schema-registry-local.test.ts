import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  registryCall,
  startTestSchemaRegistry,
  type TestSchemaRegistry,
} from '../helpers/schema-registry.js';
import { uniqueName } from '../helpers/unique-name.js';

// The local stack's schema registry (Apicurio Registry from Maven Central, plain java, in-memory
// storage) answers the Confluent Schema Registry API as producers and consumers use it.
const ORDER_AVRO = {
  type: 'record',
  name: 'Order',
  namespace: 'tally.test',
  fields: [{ name: 'id', type: 'string' }],
};
const ORDER_PROTO =
  'syntax = "proto3";\npackage tally.test;\nmessage Order {\n  string id = 1;\n  int32 quantity = 2;\n}\n';
const ORDER_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { id: { type: 'string' }, quantity: { type: 'integer' } },
  required: ['id'],
};

describe('the local schema registry', () => {
  let registry: TestSchemaRegistry;
  beforeAll(async () => {
    registry = await startTestSchemaRegistry();
  });
  afterAll(async () => {
    await registry?.stop();
  });

  it('runs as a process of the stack, named in its ready line', () => {
    if (process.env.TALLY_SCHEMA_REGISTRY_URL) return; // a given registry is not ours to see
    expect(registry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/apis\/ccompat\/v7$/);
    expect(registry.stack.processes.map((p) => p.name)).toEqual(['schema registry (Apicurio)']);
    expect(registry.stack.readyLine()).toContain(` schema-registry=${registry.url}`);
  });

  it('registers an Avro, a Protobuf and a JSON Schema subject and serves each schema by id', async () => {
    const subjects = {
      AVRO: { schema: JSON.stringify(ORDER_AVRO) },
      PROTOBUF: { schemaType: 'PROTOBUF', schema: ORDER_PROTO },
      JSON: { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON_SCHEMA) },
    };
    const ids = new Set<number>();
    for (const [type, request] of Object.entries(subjects)) {
      const subject = `${uniqueName(type.toLowerCase())}-value`;
      const registered = await registryCall(
        registry.url,
        'POST',
        `/subjects/${subject}/versions`,
        request,
      );
      expect(registered, type).toEqual({ status: 200, body: { id: expect.any(Number) } });
      const { id } = registered.body as { id: number };
      ids.add(id);

      const byId = await registryCall(registry.url, 'GET', `/schemas/ids/${id}`);
      expect(byId.status, type).toBe(200);
      expect(byId.body, type).toMatchObject({ schema: request.schema, schemaType: type });
      const latest = await registryCall(
        registry.url,
        'GET',
        `/subjects/${subject}/versions/latest`,
      );
      expect(latest.body, type).toMatchObject({ subject, version: 1, id, schema: request.schema });
    }
    expect(ids.size).toBe(3);
  });

  it('keeps versions per subject, one id per schema, and refuses an incompatible change', async () => {
    const subject = `${uniqueName('versions')}-value`;
    const first = await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
      schema: JSON.stringify(ORDER_AVRO),
    });
    const again = await registryCall(registry.url, 'POST', `/subjects/${subject}/versions`, {
      schema: JSON.stringify(ORDER_AVRO),
    });
    expect(again.body).toEqual(first.body);

    await registryCall(registry.url, 'PUT', `/config/${subject}`, { compatibility: 'BACKWARD' });
    const withField = (field: Record<string, unknown>) => ({
      schema: JSON.stringify({ ...ORDER_AVRO, fields: [...ORDER_AVRO.fields, field] }),
    });
    const breaking = await registryCall(
      registry.url,
      'POST',
      `/subjects/${subject}/versions`,
      withField({ name: 'quantity', type: 'int' }),
    );
    expect(breaking.status).toBe(409);
    expect(breaking.body).toMatchObject({ error_code: 409 });
    const compatible = await registryCall(
      registry.url,
      'POST',
      `/subjects/${subject}/versions`,
      withField({ name: 'quantity', type: 'int', default: 0 }),
    );
    expect(compatible.status).toBe(200);
    expect(compatible.body).not.toEqual(first.body);
    expect((await registryCall(registry.url, 'GET', `/subjects/${subject}/versions`)).body).toEqual(
      [1, 2],
    );
  });

  it('answers with Confluent error codes: 42201 for what is no schema, 40403 for an unknown id', async () => {
    const bad = await registryCall(
      registry.url,
      'POST',
      `/subjects/${uniqueName('bad')}/versions`,
      {
        schema: '{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nosuchtype"}]}',
      },
    );
    expect(bad).toMatchObject({ status: 422, body: { error_code: 42201 } });
    const unknown = await registryCall(registry.url, 'GET', '/schemas/ids/987654');
    expect(unknown).toMatchObject({ status: 404, body: { error_code: 40403 } });
  });
});
