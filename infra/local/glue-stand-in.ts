import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import avro from 'avsc';
import protobuf from 'protobufjs';

// A local stand-in for the AWS Glue Schema Registry API: the AWS JSON 1.1 protocol (POST /,
// `X-Amz-Target: AWSGlue.<Operation>`), which the real @aws-sdk/client-glue talks to through
// `endpoint`. It keeps registries, schemas and versions in memory and refuses what Glue's API
// reference says Glue refuses: EntityNotFoundException for a registry, schema or version it does
// not have; InvalidInputException for a name or definition past Glue's limits or not of its data
// format, and for SchemaId/SchemaVersionId combinations the API does not take; AlreadyExists-
// Exception for a schema that exists; AccessDeniedException while `accessDenied` is set. A new
// version is PENDING until first read, then AVAILABLE, or FAILURE when it breaks the schema's
// compatibility (checked for AVRO with avsc's resolver; JSON and PROTOBUF versions are taken).

export type GlueDataFormat = 'AVRO' | 'JSON' | 'PROTOBUF';
const DATA_FORMATS: ReadonlySet<string> = new Set(['AVRO', 'JSON', 'PROTOBUF']);
const COMPATIBILITIES: ReadonlySet<string> = new Set([
  'NONE',
  'DISABLED',
  'BACKWARD',
  'BACKWARD_ALL',
  'FORWARD',
  'FORWARD_ALL',
  'FULL',
  'FULL_ALL',
]);
/** Glue's RegistryName and SchemaName: 1 to 255 of these. */
const NAME = /^[a-zA-Z0-9\-_$#.]{1,255}$/;
const VERSION_ID = /^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$/;
const MAX_DEFINITION = 170_000;
const MAX_VERSION_NUMBER = 100_000;
const ACCOUNT = '000000000000';

interface Version {
  readonly id: string;
  readonly number: number;
  readonly definition: string;
  readonly canonical: string;
  status: 'AVAILABLE' | 'PENDING' | 'FAILURE';
  readonly outcome: 'AVAILABLE' | 'FAILURE';
  readonly created: string;
}

interface Schema {
  readonly name: string;
  readonly registry: string;
  readonly arn: string;
  readonly dataFormat: GlueDataFormat;
  readonly compatibility: string;
  readonly versions: Version[];
}

class GlueError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface GlueStandIn {
  readonly url: string;
  readonly region: string;
  /** While true, every call is an AccessDeniedException (an IAM policy without glue: grants). */
  accessDenied: boolean;
  /**
   * The next `count` calls (of `operation` only, when named) answer this error
   * (ThrottlingException, InternalServiceException…).
   */
  failNext(type: string, count?: number, operation?: string): void;
  /** Operations answered, in order (`GetSchemaByDefinition`…): a test counting calls may empty it. */
  readonly calls: string[];
  close(): Promise<void>;
}

const bad = (message: string) => new GlueError('InvalidInputException', message);
const missing = (message: string) => new GlueError('EntityNotFoundException', message);

function text(input: Record<string, unknown>, name: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw bad(`${name} must be a string`);
  return value;
}

function checkName(value: string | undefined, name: string): string {
  if (value === undefined || !NAME.test(value)) {
    throw bad(`${name} must be 1 to 255 characters matching [a-zA-Z0-9-_$#.]+, got ${value}`);
  }
  return value;
}

/** The definition parsed as its data format, refused as Glue refuses an invalid one. */
function canonical(format: GlueDataFormat, definition: string | undefined): string {
  if (definition === undefined || definition.length < 1 || definition.length > MAX_DEFINITION) {
    throw bad(`SchemaDefinition must be 1 to ${MAX_DEFINITION} characters`);
  }
  if (!/\S/.test(definition)) throw bad('SchemaDefinition must not be blank');
  try {
    if (format === 'PROTOBUF') {
      protobuf.parse(definition);
      return definition.trim();
    }
    const parsed: unknown = JSON.parse(definition);
    if (format === 'AVRO') avro.Type.forSchema(parsed as avro.Schema);
    else if (typeof parsed !== 'object' && typeof parsed !== 'boolean') {
      throw new Error('a JSON Schema is an object or a boolean');
    }
    return JSON.stringify(parsed);
  } catch (error) {
    throw bad(`Schema definition of ${format} data format is invalid: ${(error as Error).message}`);
  }
}

/** Whether `next` may follow `earlier` under the schema's compatibility (AVRO only). */
function compatible(schema: Schema, next: string): boolean {
  const mode = schema.compatibility;
  if (schema.dataFormat !== 'AVRO' || mode === 'NONE') return true;
  const available = schema.versions.filter((v) => v.outcome !== 'FAILURE');
  const against = mode.endsWith('_ALL') ? available : available.slice(-1);
  const type = avro.Type.forSchema(JSON.parse(next) as avro.Schema);
  const reads = (reader: avro.Type, writer: avro.Type) => {
    try {
      reader.createResolver(writer);
      return true;
    } catch {
      return false;
    }
  };
  return against.every((earlier) => {
    const old = avro.Type.forSchema(JSON.parse(earlier.definition) as avro.Schema);
    const backward = reads(type, old);
    const forward = reads(old, type);
    if (mode.startsWith('BACKWARD')) return backward;
    if (mode.startsWith('FORWARD')) return forward;
    return backward && forward;
  });
}

export async function serveGlueStandIn(
  options: { registries?: readonly string[]; region?: string } = {},
): Promise<GlueStandIn> {
  const region = options.region ?? 'us-east-1';
  const registries = new Map<string, Map<string, Schema>>();
  const versions = new Map<string, { schema: Schema; version: Version }>();
  const calls: string[] = [];
  let failures: Array<{ type: string; operation: string | undefined }> = [];
  const registryArn = (name: string) => `arn:aws:glue:${region}:${ACCOUNT}:registry/${name}`;
  for (const name of options.registries ?? ['default-registry']) registries.set(name, new Map());

  function registryOf(input: unknown): { name: string; schemas: Map<string, Schema> } {
    const id = (input ?? {}) as Record<string, unknown>;
    const arn = text(id, 'RegistryArn');
    const name = checkName(
      arn ? /:registry\/([^/]+)$/.exec(arn)?.[1] : (text(id, 'RegistryName') ?? 'default-registry'),
      'RegistryName',
    );
    const schemas = registries.get(name);
    if (schemas === undefined) throw missing(`Registry is not found. RegistryName: ${name}`);
    return { name, schemas };
  }

  function schemaOf(input: unknown): Schema {
    if (input === undefined || input === null) throw bad('SchemaId is required');
    const id = input as Record<string, unknown>;
    const arn = text(id, 'SchemaArn');
    const name = arn ? /:schema\/[^/]+\/([^/]+)$/.exec(arn)?.[1] : text(id, 'SchemaName');
    if (name === undefined) throw bad('One of SchemaArn or SchemaName has to be provided');
    const registry = registryOf(
      arn
        ? { RegistryName: /:schema\/([^/]+)\//.exec(arn)?.[1] }
        : { RegistryName: id.RegistryName },
    );
    const schema = registry.schemas.get(checkName(name, 'SchemaName'));
    if (schema === undefined) {
      throw missing(`Schema is not found. RegistryName: ${registry.name}, SchemaName: ${name}`);
    }
    return schema;
  }

  /** A PENDING version settles when it is first read, as Glue's check settles a moment later. */
  function settle(version: Version): Version {
    if (version.status === 'PENDING') version.status = version.outcome;
    return version;
  }

  function addVersion(schema: Schema, definition: string, canonicalText: string): Version {
    const latest = schema.versions.at(-1)?.number ?? 0;
    if (latest >= MAX_VERSION_NUMBER) {
      throw new GlueError('ResourceNumberLimitExceededException', 'Too many schema versions');
    }
    const version: Version = {
      id: randomUUID(),
      number: latest + 1,
      definition,
      canonical: canonicalText,
      status: 'PENDING',
      outcome:
        schema.versions.length === 0 || compatible(schema, definition) ? 'AVAILABLE' : 'FAILURE',
      created: new Date().toISOString(),
    };
    schema.versions.push(version);
    versions.set(version.id, { schema, version });
    return version;
  }

  function versionAnswer(schema: Schema, version: Version) {
    return {
      SchemaVersionId: version.id,
      SchemaDefinition: version.definition,
      DataFormat: schema.dataFormat,
      SchemaArn: schema.arn,
      VersionNumber: version.number,
      Status: settle(version).status,
      CreatedTime: version.created,
    };
  }

  const operations: Record<string, (input: Record<string, unknown>) => unknown> = {
    CreateRegistry(input) {
      const name = checkName(text(input, 'RegistryName'), 'RegistryName');
      if (registries.has(name)) {
        throw new GlueError(
          'AlreadyExistsException',
          `Registry already exists. RegistryName: ${name}`,
        );
      }
      registries.set(name, new Map());
      return { RegistryArn: registryArn(name), RegistryName: name };
    },
    GetRegistry(input) {
      if (input.RegistryId === undefined) throw bad('RegistryId is required');
      const { name } = registryOf(input.RegistryId);
      return { RegistryName: name, RegistryArn: registryArn(name), Status: 'AVAILABLE' };
    },
    CreateSchema(input) {
      const registry = registryOf(input.RegistryId);
      const name = checkName(text(input, 'SchemaName'), 'SchemaName');
      const format = text(input, 'DataFormat');
      if (format === undefined || !DATA_FORMATS.has(format)) {
        throw bad('DataFormat must be one of AVRO, JSON, PROTOBUF');
      }
      const compatibility = text(input, 'Compatibility') ?? 'BACKWARD';
      if (!COMPATIBILITIES.has(compatibility))
        throw bad(`Compatibility ${compatibility} is not valid`);
      const definition = text(input, 'SchemaDefinition');
      const canonicalText =
        definition === undefined ? undefined : canonical(format as GlueDataFormat, definition);
      if (registry.schemas.has(name)) {
        throw new GlueError(
          'AlreadyExistsException',
          `Schema already exists. RegistryName: ${registry.name}, SchemaName: ${name}`,
        );
      }
      const schema: Schema = {
        name,
        registry: registry.name,
        arn: `arn:aws:glue:${region}:${ACCOUNT}:schema/${registry.name}/${name}`,
        dataFormat: format as GlueDataFormat,
        compatibility,
        versions: [],
      };
      registry.schemas.set(name, schema);
      const first =
        definition === undefined || canonicalText === undefined
          ? undefined
          : addVersion(schema, definition, canonicalText);
      return {
        RegistryName: registry.name,
        RegistryArn: registryArn(registry.name),
        SchemaName: name,
        SchemaArn: schema.arn,
        DataFormat: format,
        Compatibility: compatibility,
        SchemaStatus: 'AVAILABLE',
        ...(first && {
          LatestSchemaVersion: first.number,
          NextSchemaVersion: first.number + 1,
          SchemaVersionId: first.id,
          SchemaVersionStatus: first.status,
        }),
      };
    },
    RegisterSchemaVersion(input) {
      const schema = schemaOf(input.SchemaId);
      const definition = text(input, 'SchemaDefinition');
      const canonicalText = canonical(schema.dataFormat, definition);
      const same = schema.versions.find((v) => v.canonical === canonicalText);
      if (same)
        return { SchemaVersionId: same.id, VersionNumber: same.number, Status: same.status };
      if (schema.compatibility === 'DISABLED') {
        throw bad(`Compatibility DISABLED does not allow new versions of ${schema.name}`);
      }
      const version = addVersion(schema, definition as string, canonicalText);
      return { SchemaVersionId: version.id, VersionNumber: version.number, Status: version.status };
    },
    GetSchemaByDefinition(input) {
      const schema = schemaOf(input.SchemaId);
      const canonicalText = canonical(schema.dataFormat, text(input, 'SchemaDefinition'));
      const version = schema.versions.find((v) => v.canonical === canonicalText);
      if (version === undefined) {
        throw missing(
          `Schema version is not found. RegistryName: ${schema.registry}, SchemaName: ${schema.name}`,
        );
      }
      return {
        SchemaVersionId: version.id,
        SchemaArn: schema.arn,
        DataFormat: schema.dataFormat,
        Status: settle(version).status,
        CreatedTime: version.created,
      };
    },
    GetSchemaVersion(input) {
      const id = text(input, 'SchemaVersionId');
      const number = input.SchemaVersionNumber as Record<string, unknown> | undefined;
      if ((id === undefined) === (input.SchemaId === undefined)) {
        throw bad('Either SchemaVersionId or SchemaId with SchemaVersionNumber has to be provided');
      }
      if (id !== undefined) {
        if (!VERSION_ID.test(id)) throw bad(`SchemaVersionId ${id} is not a valid UUID`);
        const found = versions.get(id);
        if (found === undefined)
          throw missing(`Schema version is not found. SchemaVersionId: ${id}`);
        return versionAnswer(found.schema, found.version);
      }
      const schema = schemaOf(input.SchemaId);
      const latest = number?.LatestVersion === true;
      const wanted = number?.VersionNumber;
      if (latest === (wanted !== undefined)) {
        throw bad('SchemaVersionNumber needs one of LatestVersion or VersionNumber');
      }
      if (
        wanted !== undefined &&
        (typeof wanted !== 'number' ||
          !Number.isInteger(wanted) ||
          wanted < 1 ||
          wanted > MAX_VERSION_NUMBER)
      ) {
        throw bad(`VersionNumber must be an integer from 1 to ${MAX_VERSION_NUMBER}`);
      }
      const version = latest
        ? schema.versions.filter((v) => settle(v).status === 'AVAILABLE').at(-1)
        : schema.versions.find((v) => v.number === wanted);
      if (version === undefined) {
        throw missing(
          `Schema version is not found. RegistryName: ${schema.registry}, SchemaName: ${schema.name}, VersionNumber: ${latest ? 'latest' : wanted}`,
        );
      }
      return versionAnswer(schema, version);
    },
  };

  async function readBody(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  const server = createServer(async (request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AWSGlue.') ? target.slice('AWSGlue.'.length) : '';
    let status = 200;
    let body: unknown;
    try {
      const raw = await readBody(request);
      calls.push(operation);
      const handler = operations[operation];
      if (request.method !== 'POST' || handler === undefined) {
        throw new GlueError('UnknownOperationException', `Unknown operation ${target}`);
      }
      if (standIn.accessDenied) {
        throw new GlueError(
          'AccessDeniedException',
          `User is not authorized to perform: glue:${operation}`,
        );
      }
      const at = failures.findIndex((f) => f.operation === undefined || f.operation === operation);
      const failure = at < 0 ? undefined : failures.splice(at, 1)[0]?.type;
      if (failure !== undefined) {
        throw new GlueError(
          failure,
          `${failure} (the stand-in's failNext)`,
          failure.startsWith('Internal') ? 500 : 400,
        );
      }
      let input: unknown;
      try {
        input = raw === '' ? {} : JSON.parse(raw);
      } catch {
        throw new GlueError('SerializationException', 'the body is not JSON');
      }
      body = handler((input ?? {}) as Record<string, unknown>);
    } catch (error) {
      const glue =
        error instanceof GlueError
          ? error
          : new GlueError('InternalServiceException', String(error), 500);
      status = glue.status;
      body = { __type: glue.type, message: glue.message };
      response.setHeader('x-amzn-ErrorType', glue.type);
    }
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-RequestId': randomUUID(),
    });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const standIn: GlueStandIn = {
    url: `http://127.0.0.1:${port}`,
    region,
    accessDenied: false,
    failNext(type, count = 1, operation) {
      failures = [...failures, ...Array.from({ length: count }, () => ({ type, operation }))];
    },
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return standIn;
}
