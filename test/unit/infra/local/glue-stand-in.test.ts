import {
  CreateSchemaCommand,
  GetSchemaByDefinitionCommand,
  GetSchemaVersionCommand,
  GlueClient,
  RegisterSchemaVersionCommand,
} from '@aws-sdk/client-glue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GlueStandIn, serveGlueStandIn } from '../../../../infra/local/glue-stand-in.js';

// The Glue stand-in answers the real @aws-sdk/client-glue as Glue's API reference says Glue does
// (docs.aws.amazon.com/glue/latest/webapi: GetSchemaByDefinition, GetSchemaVersion,
// RegisterSchemaVersion, CreateSchema; the SchemaId, SchemaVersionId, SchemaVersionNumber and
// name constraints), errors as the SDK's named exceptions.

const AVRO = JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'int' }] });
let glue: GlueStandIn;
let client: GlueClient;

beforeAll(async () => {
  glue = await serveGlueStandIn({ registries: ['reg'] });
  client = new GlueClient({
    region: glue.region,
    endpoint: glue.url,
    maxAttempts: 1,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await client.send(
    new CreateSchemaCommand({
      RegistryId: { RegistryName: 'reg' },
      SchemaName: 's',
      DataFormat: 'AVRO',
      SchemaDefinition: AVRO,
    }),
  );
});
afterAll(async () => {
  client.destroy();
  await glue.close();
});

const errorName = (promise: Promise<unknown>) =>
  promise.then(
    () => 'no error',
    (e: Error) => e.name,
  );

describe('Glue stand-in', () => {
  it('finds a version by its definition, canonicalized, and by id or number', async () => {
    const found = await client.send(
      new GetSchemaByDefinitionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaDefinition: JSON.stringify(JSON.parse(AVRO), null, 2),
      }),
    );
    expect(found).toMatchObject({ DataFormat: 'AVRO', Status: 'AVAILABLE' });
    expect(found.SchemaArn).toMatch(/^arn:aws:glue:us-east-1:\d{12}:schema\/reg\/s$/);
    const byId = await client.send(
      new GetSchemaVersionCommand({ SchemaVersionId: found.SchemaVersionId }),
    );
    const byNumber = await client.send(
      new GetSchemaVersionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaVersionNumber: { VersionNumber: 1 },
      }),
    );
    expect(byId).toMatchObject({ SchemaDefinition: AVRO, VersionNumber: 1 });
    expect(byNumber.SchemaVersionId).toBe(found.SchemaVersionId);
  });

  it('answers EntityNotFoundException for a registry, schema, definition or version it lacks', async () => {
    const byDefinition = (RegistryName: string, SchemaName: string, SchemaDefinition = AVRO) =>
      errorName(
        client.send(
          new GetSchemaByDefinitionCommand({
            SchemaId: { RegistryName, SchemaName },
            SchemaDefinition,
          }),
        ),
      );
    expect(await byDefinition('nope', 's')).toBe('EntityNotFoundException');
    expect(await byDefinition('reg', 'nope')).toBe('EntityNotFoundException');
    const other = JSON.stringify({ type: 'record', name: 'Q', fields: [] });
    expect(await byDefinition('reg', 's', other)).toBe('EntityNotFoundException');
    expect(
      await errorName(
        client.send(
          new GetSchemaVersionCommand({ SchemaVersionId: '00000000-0000-4000-8000-000000000000' }),
        ),
      ),
    ).toBe('EntityNotFoundException');
  });

  it('answers InvalidInputException for what the API reference does not take', async () => {
    const invalid = [
      new GetSchemaByDefinitionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaDefinition: '{"type": "record"',
      }),
      new GetSchemaByDefinitionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaDefinition: 'x'.repeat(170_001),
      }),
      new GetSchemaByDefinitionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 'a/b' },
        SchemaDefinition: AVRO,
      }),
      new GetSchemaVersionCommand({ SchemaVersionId: 'NOT-A-UUID' }),
      new GetSchemaVersionCommand({}),
      new GetSchemaVersionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaVersionNumber: { VersionNumber: 0 },
      }),
      new RegisterSchemaVersionCommand({
        SchemaId: { RegistryName: 'reg', SchemaName: 's' },
        SchemaDefinition: '   ',
      }),
      new CreateSchemaCommand({
        RegistryId: { RegistryName: 'reg' },
        SchemaName: 'x'.repeat(256),
        DataFormat: 'AVRO',
      }),
    ];
    for (const command of invalid) {
      expect(await errorName(client.send(command as never)), command.constructor.name).toBe(
        'InvalidInputException',
      );
    }
  });

  it('refuses a schema that exists, and everything while access is denied', async () => {
    const create = new CreateSchemaCommand({
      RegistryId: { RegistryName: 'reg' },
      SchemaName: 's',
      DataFormat: 'AVRO',
    });
    expect(await errorName(client.send(create))).toBe('AlreadyExistsException');
    glue.accessDenied = true;
    try {
      expect(
        await errorName(
          client.send(
            new GetSchemaVersionCommand({
              SchemaVersionId: '00000000-0000-4000-8000-000000000000',
            }),
          ),
        ),
      ).toBe('AccessDeniedException');
    } finally {
      glue.accessDenied = false;
    }
  });

  it('registers a version PENDING, AVAILABLE when read; FAILURE when it breaks BACKWARD', async () => {
    const SchemaId = { RegistryName: 'reg', SchemaName: 's' };
    const v2 = JSON.stringify({
      type: 'record',
      name: 'R',
      fields: [
        { name: 'a', type: 'int' },
        { name: 'b', type: 'int', default: 0 },
      ],
    });
    const added = await client.send(
      new RegisterSchemaVersionCommand({ SchemaId, SchemaDefinition: v2 }),
    );
    expect(added).toMatchObject({ VersionNumber: 2, Status: 'PENDING' });
    const read = await client.send(
      new GetSchemaVersionCommand({ SchemaVersionId: added.SchemaVersionId }),
    );
    expect(read.Status).toBe('AVAILABLE');
    const broken = JSON.stringify({
      type: 'record',
      name: 'R',
      fields: [{ name: 'c', type: 'string' }],
    });
    const failed = await client.send(
      new RegisterSchemaVersionCommand({ SchemaId, SchemaDefinition: broken }),
    );
    const after = await client.send(
      new GetSchemaVersionCommand({ SchemaVersionId: failed.SchemaVersionId }),
    );
    expect(after.Status).toBe('FAILURE');
    const latest = await client.send(
      new GetSchemaVersionCommand({ SchemaId, SchemaVersionNumber: { LatestVersion: true } }),
    );
    expect(latest.VersionNumber).toBe(2);
  });
});
