// The few Confluent Schema Registry API calls a producer needs, over fetch. Any registry that
// speaks that API works: Confluent's, Apicurio's /apis/ccompat/v7, Redpanda's, Karapace.
import type { SchemaType } from './codec.js';
import {
  SchemaNotFoundError,
  SchemaRefusedError,
  SchemaRegistryAccessError,
  SchemaRegistryUnavailableError,
} from './errors.js';

export interface RegisteredSchema {
  readonly id: number;
  readonly type: SchemaType;
  readonly schema: string;
  /** Its version under the subject it was asked for by (GET /subjects/…/versions/…). */
  readonly version?: number;
  /** Other schemas this one imports; Tally does not resolve them. */
  readonly hasReferences: boolean;
}

export interface SchemaRegistryClient {
  schemaById(id: number, field: string): Promise<RegisteredSchema>;
  subjectVersion(
    subject: string,
    version: number | 'latest',
    field: string,
  ): Promise<RegisteredSchema>;
  /** Registers the schema under the subject (or finds it there); returns its id. */
  register(subject: string, type: SchemaType, schema: string, field: string): Promise<number>;
  /**
   * The version the schema has under the subject (the Confluent API's lookup, POST
   * /subjects/{subject}); a SchemaNotFoundError when it is not registered there.
   */
  versionUnder(subject: string, type: SchemaType, schema: string, field: string): Promise<number>;
}

export interface SchemaRegistryClientOptions {
  /** The API's base URL, e.g. `https://registry.example/apis/ccompat/v7`. */
  readonly url: string;
  readonly credentials?: { readonly username: string; readonly password: string };
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

const SCHEMA_TYPES: ReadonlySet<string> = new Set(['AVRO', 'PROTOBUF', 'JSON']);

export function createSchemaRegistryClient(
  options: SchemaRegistryClientOptions,
): SchemaRegistryClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = { accept: 'application/vnd.schemaregistry.v1+json' };
  if (options.credentials) {
    const { username, password } = options.credentials;
    headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }

  async function call(
    path: string,
    field: string,
    body?: unknown,
  ): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers:
          body === undefined
            ? headers
            : { ...headers, 'content-type': 'application/vnd.schemaregistry.v1+json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
    } catch (error) {
      throw new SchemaRegistryUnavailableError(
        'the schema registry did not answer: nothing was sent',
        { cause: error, field },
      );
    }
    const parsed: unknown = await response.json().catch(() => undefined);
    const answer =
      parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    if (response.ok) return answer;
    const said = typeof answer.message === 'string' ? answer.message : `HTTP ${response.status}`;
    const errorCode = typeof answer.error_code === 'number' ? answer.error_code : response.status;
    const cause = new Error(`${path}: ${response.status} ${said}`);
    if (response.status >= 500 || response.status === 429 || response.status === 408) {
      throw new SchemaRegistryUnavailableError(
        `the schema registry answered ${response.status}: nothing was sent`,
        { cause, field },
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new SchemaRegistryAccessError(
        `the schema registry refused Tally's credentials (${response.status})`,
        { cause, field },
      );
    }
    if (response.status === 404)
      throw new SchemaNotFoundError(`${field}: ${said}`, { cause, field, errorCode });
    throw new SchemaRefusedError(`${field}: the schema registry refused it: ${said}`, {
      cause,
      field,
      errorCode,
    });
  }

  function registered(
    answer: Record<string, unknown>,
    field: string,
    id = answer.id,
  ): RegisteredSchema {
    const type = answer.schemaType ?? 'AVRO';
    if (
      typeof id !== 'number' ||
      typeof answer.schema !== 'string' ||
      typeof type !== 'string' ||
      !SCHEMA_TYPES.has(type)
    ) {
      throw new SchemaRegistryUnavailableError(
        'the schema registry answered with no usable schema',
        { field },
      );
    }
    const references = Array.isArray(answer.references) ? answer.references : [];
    return {
      id,
      type: type as SchemaType,
      schema: answer.schema,
      ...(typeof answer.version === 'number' && { version: answer.version }),
      hasReferences: references.length > 0,
    };
  }

  /** `answer[name]` when the registry gave a number there; else it answered nothing usable. */
  function numberIn(answer: Record<string, unknown>, name: string, what: string, field: string) {
    const value = answer[name];
    if (typeof value !== 'number') {
      throw new SchemaRegistryUnavailableError(`the schema registry ${what} but named no ${name}`, {
        field,
      });
    }
    return value;
  }

  return {
    async schemaById(id, field) {
      return registered(await call(`/schemas/ids/${id}`, field), field, id);
    },
    async subjectVersion(subject, version, field) {
      return registered(
        await call(`/subjects/${encodeURIComponent(subject)}/versions/${version}`, field),
        field,
      );
    },
    async register(subject, type, schema, field) {
      const path = `/subjects/${encodeURIComponent(subject)}/versions`;
      const answer = await call(path, field, { schemaType: type, schema });
      return numberIn(answer, 'id', 'registered the schema', field);
    },
    async versionUnder(subject, type, schema, field) {
      const path = `/subjects/${encodeURIComponent(subject)}`;
      const answer = await call(path, field, { schemaType: type, schema });
      return numberIn(answer, 'version', 'found the schema under its subject', field);
    },
  };
}
