// The few AWS Glue Schema Registry calls a producer needs, over @aws-sdk/client-glue (loaded by
// the first schema record, never at cold start), and Glue's errors as Tally's: a schema, version
// or registry Glue does not have is the caller's (SchemaNotFoundError), a definition Glue will
// not take too (SchemaRefusedError); throttling, a 5xx or no answer is retriable, nothing sent.

import { type CaptureClient, lazySdkClient, type SdkClientPlace } from '../aws/lazy-sdk-client.js';
import type { SchemaType } from './codec.js';
import {
  SchemaNotFoundError,
  SchemaRefusedError,
  SchemaRegistryAccessError,
  SchemaRegistryUnavailableError,
} from './errors.js';

type GlueModule = typeof import('@aws-sdk/client-glue');

/** One version of a Glue schema: the UUID the wire format carries, and what it was made of. */
export interface GlueSchemaVersion {
  readonly schemaVersionId: string;
  readonly type: SchemaType;
  readonly definition: string;
  /** The schema it is a version of (from its ARN). */
  readonly schemaName: string;
  readonly versionNumber: number | undefined;
}

export interface GlueRegistry {
  readonly registryName: string;
  /** GetSchemaVersion by SchemaVersionId. */
  versionById(schemaVersionId: string, field: string): Promise<GlueSchemaVersion>;
  /** GetSchemaVersion of a schema of the registry: a version number, or the latest. */
  versionOf(
    schemaName: string,
    version: number | 'latest',
    field: string,
  ): Promise<GlueSchemaVersion>;
  /** GetSchemaByDefinition: the version of `schemaName` with this definition, AVAILABLE. */
  byDefinition(
    schemaName: string,
    definition: string,
    field: string,
  ): Promise<{ readonly schemaVersionId: string; readonly type: SchemaType }>;
  /**
   * RegisterSchemaVersion, or CreateSchema (BACKWARD compatibility, Glue's serializers' default)
   * when the registry has no such schema; waits while Glue checks compatibility (PENDING).
   */
  register(
    schemaName: string,
    type: SchemaType,
    definition: string,
    field: string,
  ): Promise<{ readonly schemaVersionId: string; readonly versionNumber: number | undefined }>;
}

export interface GlueRegistryOptions extends SdkClientPlace {
  readonly registryName: string;
  readonly captureClient?: CaptureClient;
  /** How long a PENDING registration is waited for (default 10 s), polled every `pollMs`. */
  readonly pendingTimeoutMs?: number;
  readonly pollMs?: number;
}

const TYPES: ReadonlySet<string> = new Set(['AVRO', 'JSON', 'PROTOBUF']);
const UNAVAILABLE = new Set([
  'ThrottlingException',
  'InternalServiceException',
  'ConcurrentModificationException',
  'OperationTimeoutException',
  'TimeoutError',
]);
const REFUSED = new Set([
  'InvalidInputException',
  'ResourceNumberLimitExceededException',
  'AlreadyExistsException',
]);

/** A Glue error (or no answer) as Tally's; `what` says what was asked, for the caller's message. */
export function glueError(error: unknown, what: string, field: string): Error {
  const name = error instanceof Error ? error.name : '';
  const said = error instanceof Error ? error.message : String(error);
  const fault = (error as { $fault?: string } | undefined)?.$fault;
  if (name === 'EntityNotFoundException') {
    return new SchemaNotFoundError(`${field}: ${what}: AWS Glue has none (${said})`, {
      cause: error,
      field,
    });
  }
  if (REFUSED.has(name)) {
    return new SchemaRefusedError(`${field}: AWS Glue refused ${what}: ${name}: ${said}`, {
      cause: error,
      field,
    });
  }
  if (name === 'AccessDeniedException') {
    return new SchemaRegistryAccessError(
      `AWS Glue refused Tally's role ${what} (AccessDeniedException: grant it the glue: actions of docs/deploy.md); nothing was sent`,
      { cause: error, field },
    );
  }
  if (UNAVAILABLE.has(name) || fault === 'server' || fault === undefined) {
    return new SchemaRegistryUnavailableError(
      `AWS Glue did not answer ${what} (${name || said}): nothing was sent; a retry may succeed`,
      { cause: error, field },
    );
  }
  return new SchemaRegistryAccessError(`AWS Glue refused ${what} (${name}: ${said})`, {
    cause: error,
    field,
  });
}

function unusable(what: string, field: string): never {
  throw new SchemaRegistryUnavailableError(`AWS Glue answered ${what} with no usable schema`, {
    field,
  });
}

/** `arn:aws:glue:<region>:<account>:schema/<registry>/<schema>` → `<schema>`. */
function schemaNameOf(arn: string | undefined, fallback: string): string {
  const match = arn === undefined ? null : /:schema\/[^/]+\/(.+)$/.exec(arn);
  return match?.[1] ?? fallback;
}

function typeOf(format: string | undefined, what: string, field: string): SchemaType {
  if (format === undefined || !TYPES.has(format)) unusable(what, field);
  return format as SchemaType;
}

export function createGlueRegistry(options: GlueRegistryOptions): GlueRegistry {
  const { registryName } = options;
  const load = lazySdkClient(
    options,
    () => import('@aws-sdk/client-glue'),
    (module, config) => new module.GlueClient(config),
    options.captureClient ?? ((client) => client),
  );
  const pendingTimeoutMs = options.pendingTimeoutMs ?? 10_000;
  const pollMs = options.pollMs ?? 250;

  async function call<Output>(
    what: string,
    field: string,
    // biome-ignore lint/suspicious/noExplicitAny: each command's own input and output types
    command: (m: GlueModule) => any,
  ): Promise<Output> {
    let loaded: Awaited<ReturnType<typeof load>>;
    try {
      loaded = await load();
    } catch (error) {
      throw glueError(error, what, field);
    }
    try {
      return (await loaded.client.send(command(loaded.module))) as Output;
    } catch (error) {
      throw glueError(error, what, field);
    }
  }

  type VersionOutput = import('@aws-sdk/client-glue').GetSchemaVersionResponse;

  function version(answer: VersionOutput, what: string, field: string, schemaName: string) {
    const { SchemaVersionId: id, SchemaDefinition: definition, Status: status } = answer;
    if (id === undefined || definition === undefined) unusable(what, field);
    if (status !== undefined && status !== 'AVAILABLE') {
      throw new SchemaNotFoundError(
        `${field}: ${what} is ${status} in AWS Glue, not AVAILABLE: give an AVAILABLE version`,
        { field },
      );
    }
    return {
      schemaVersionId: id,
      type: typeOf(answer.DataFormat, what, field),
      definition,
      schemaName: schemaNameOf(answer.SchemaArn, schemaName),
      versionNumber: answer.VersionNumber,
    };
  }

  const schemaId = (schemaName: string) => ({ RegistryName: registryName, SchemaName: schemaName });
  const named = (schemaName: string) => `schema ${schemaName} of registry ${registryName}`;

  /** Waits while Glue checks a new version's compatibility; refuses one it marked FAILURE. */
  async function available(id: string, status: string | undefined, what: string, field: string) {
    let current = status;
    let versionNumber: number | undefined;
    const until = Date.now() + pendingTimeoutMs;
    while (current === 'PENDING' && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      const answer = await call<VersionOutput>(
        what,
        field,
        (m) => new m.GetSchemaVersionCommand({ SchemaVersionId: id }),
      );
      current = answer.Status;
      versionNumber = answer.VersionNumber;
    }
    if (current === 'FAILURE') {
      throw new SchemaRefusedError(
        `${field}: AWS Glue did not register ${what}: it is not compatible with the schema's earlier versions (status FAILURE)`,
        { field },
      );
    }
    if (current !== 'AVAILABLE') {
      throw new SchemaRegistryUnavailableError(
        `AWS Glue left ${what} ${current ?? 'with no status'}: nothing was sent; a retry may succeed`,
        { field },
      );
    }
    return versionNumber;
  }

  return {
    registryName,
    async versionById(id, field) {
      const what = `schema version ${id}`;
      const answer = await call<VersionOutput>(
        what,
        field,
        (m) => new m.GetSchemaVersionCommand({ SchemaVersionId: id }),
      );
      return version(answer, what, field, '');
    },
    async versionOf(schemaName, number, field) {
      const what = `${number === 'latest' ? 'the latest version' : `version ${number}`} of ${named(schemaName)}`;
      const answer = await call<VersionOutput>(
        what,
        field,
        (m) =>
          new m.GetSchemaVersionCommand({
            SchemaId: schemaId(schemaName),
            SchemaVersionNumber:
              number === 'latest' ? { LatestVersion: true } : { VersionNumber: number },
          }),
      );
      return version(answer, what, field, schemaName);
    },
    async byDefinition(schemaName, definition, field) {
      const what = `this definition as a version of ${named(schemaName)}`;
      const answer = await call<import('@aws-sdk/client-glue').GetSchemaByDefinitionResponse>(
        what,
        field,
        (m) =>
          new m.GetSchemaByDefinitionCommand({
            SchemaId: schemaId(schemaName),
            SchemaDefinition: definition,
          }),
      );
      if (answer.SchemaVersionId === undefined) unusable(what, field);
      await available(answer.SchemaVersionId, answer.Status, what, field);
      return {
        schemaVersionId: answer.SchemaVersionId,
        type: typeOf(answer.DataFormat, what, field),
      };
    },
    async register(schemaName, type, definition, field) {
      const what = `the definition as a new version of ${named(schemaName)}`;
      const registerVersion = () =>
        call<import('@aws-sdk/client-glue').RegisterSchemaVersionResponse>(
          what,
          field,
          (m) =>
            new m.RegisterSchemaVersionCommand({
              SchemaId: schemaId(schemaName),
              SchemaDefinition: definition,
            }),
        );
      let id: string | undefined;
      let status: string | undefined;
      let versionNumber: number | undefined;
      try {
        const answer = await registerVersion();
        [id, status, versionNumber] = [answer.SchemaVersionId, answer.Status, answer.VersionNumber];
      } catch (error) {
        if (!(error instanceof SchemaNotFoundError)) throw error;
        // No such schema yet: create it, with this definition as its first version.
        const created = await call<import('@aws-sdk/client-glue').CreateSchemaResponse>(
          `${named(schemaName)} (CreateSchema)`,
          field,
          (m) =>
            new m.CreateSchemaCommand({
              RegistryId: { RegistryName: registryName },
              SchemaName: schemaName,
              DataFormat: type,
              Compatibility: 'BACKWARD',
              SchemaDefinition: definition,
            }),
        ).catch(async (raced: unknown) => {
          // Another container created it meanwhile: register the version under it after all.
          if ((raced as { cause?: Error }).cause?.name !== 'AlreadyExistsException') throw raced;
          const answer = await registerVersion();
          return {
            SchemaVersionId: answer.SchemaVersionId,
            SchemaVersionStatus: answer.Status,
            LatestSchemaVersion: answer.VersionNumber,
          };
        });
        [id, status, versionNumber] = [
          created.SchemaVersionId,
          created.SchemaVersionStatus,
          created.LatestSchemaVersion ?? 1,
        ];
      }
      if (id === undefined) unusable(what, field);
      const later = await available(id, status, what, field);
      return { schemaVersionId: id, versionNumber: later ?? versionNumber };
    },
  };
}
