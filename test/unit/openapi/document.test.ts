import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it, vi } from 'vitest';
import { openApiDocument } from '../../../functions/openapi/document.js';
import { openApi30, schema30 } from '../../../functions/openapi/openapi-30.js';
import { httpEvent, lambdaContext, testAuthEnv } from '../../helpers/http-event.js';
import { serverlessRoutes } from '../../helpers/openapi-routes.js';
import { createExchangeChecker } from '../../helpers/openapi-validate.js';

// The OpenAPI document is valid OpenAPI 3.1 (by a standard validator, schemas included), its 3.0
// rendering valid OpenAPI 3.0, and it describes exactly the routes serverless.yml deploys, with
// the same scopes.

const operations = () =>
  Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      routeKey: `${method.toUpperCase()} ${path}`,
      scopes: operation.security.flatMap((requirement) => Object.values(requirement).flat()),
    })),
  );

type Spec = Parameters<Validator['validate']>[0];

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1 with @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(openApiDocument) as Spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is refused by the same validator when broken (the check can fail)', async () => {
    const broken = structuredClone(openApiDocument) as unknown as Record<string, unknown>;
    const paths = broken.paths as Record<string, { get: { responses: Record<string, object> } }>;
    // A response without its description is not a Response Object.
    const clusters = paths['/v3/clusters'] as { get: { responses: Record<string, object> } };
    delete (clusters.get.responses['200'] as { description?: string }).description;
    const result = await new Validator().validate(broken as Spec);
    expect(result.valid).toBe(false);
  });

  it('lists the same routes as serverless.yml, each with the scopes of its authorizer', () => {
    const deployed = serverlessRoutes();
    const described = operations();
    expect(described.map((o) => o.routeKey).sort()).toEqual(deployed.map((r) => r.routeKey).sort());
    for (const route of deployed) {
      const operation = described.find((o) => o.routeKey === route.routeKey);
      expect(operation?.scopes.sort(), route.routeKey).toEqual([...route.scopes].sort());
    }
    expect(deployed.length).toBeGreaterThanOrEqual(26);
  });

  it('lists on every operation the errors platform/http.ts can answer for it', () => {
    const noDependency = ['GET /openapi.json', 'GET /burrow/admin'];
    for (const [path, item] of Object.entries(openApiDocument.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const routeKey = `${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(operation.responses);
        expect(statuses, routeKey).toEqual(expect.arrayContaining(['401', '403', '500']));
        if (noDependency.includes(routeKey)) {
          expect(statuses, routeKey).not.toContain('503');
          continue;
        }
        expect(statuses, routeKey).toEqual(expect.arrayContaining(['503', '504']));
        // DynamoDB and Kafka errors say when to retry (retryAfterSeconds): the header is declared.
        expect(Object.keys(operation.responses['503']?.headers ?? {}), routeKey).toEqual([
          'Retry-After',
        ]);
      }
    }
  });

  it('is what GET /openapi.json answers, to a reader', async () => {
    // The function reads how callers are authenticated when its module loads.
    for (const [name, value] of Object.entries(testAuthEnv())) vi.stubEnv(name, value);
    const { handler } = await import('../../../functions/openapi/handler.js');
    const event = httpEvent({
      routeKey: 'GET /openapi.json',
      headers: { authorization: 'Bearer tally-test-token-reader-0001' },
    });
    const answer = await handler(event, lambdaContext());
    expect(answer.statusCode).toBe(200);
    const { problems } = createExchangeChecker().check(event, answer, ['GET /openapi.json']);
    expect(problems).toEqual([]);
    expect(answer.headers?.['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body ?? '')).toEqual(openApiDocument);
    const anonymous = await handler(
      httpEvent({ routeKey: 'GET /openapi.json', headers: { authorization: '' } }),
      lambdaContext(),
    );
    expect(anonymous.statusCode).toBe(401);
  });

  it('has a 3.0 rendering (?version=3.0) that validates as OpenAPI 3.0 and describes the same API', async () => {
    for (const [name, value] of Object.entries(testAuthEnv())) vi.stubEnv(name, value);
    const { handler } = await import('../../../functions/openapi/handler.js');
    const get = async (version: string) => {
      const event = httpEvent({
        routeKey: 'GET /openapi.json',
        headers: { authorization: 'Bearer tally-test-token-reader-0001' },
        query: { version },
      });
      const answer = await handler(event, lambdaContext());
      expect(createExchangeChecker().check(event, answer, ['GET /openapi.json']).problems).toEqual(
        [],
      );
      return answer;
    };
    const answer = await get('3.0');
    expect(answer.statusCode).toBe(200);
    const rendered = JSON.parse(answer.body ?? '') as Record<string, unknown>;
    expect(rendered).toEqual(openApi30(openApiDocument));
    const validator = new Validator();
    const result = await validator.validate(rendered as Spec);
    expect(result.errors ?? []).toEqual([]);
    expect(validator.version).toBe('3.0');
    // No 3.1-only keyword is left in it.
    expect(answer.body).not.toMatch(
      /"(const|prefixItems|unevaluatedProperties|jsonSchemaDialect)"|"type":"null"/,
    );
    expect(Object.keys(rendered.paths as object)).toEqual(Object.keys(openApiDocument.paths));
    expect((await get('3.1')).body).toBe(JSON.stringify(openApiDocument));
    expect((await get('2.0')).statusCode).toBe(400);
  });

  it('renders 3.1-only schemas as 3.0 ones', () => {
    const nullableInt = { anyOf: [{ type: 'integer' }, { type: 'null' }] };
    expect(schema30(nullableInt)).toEqual({ type: 'integer', nullable: true });
    expect(schema30({ anyOf: [{ $ref: '#/x' }, { type: 'null' }] })).toEqual({
      allOf: [{ $ref: '#/x' }],
      nullable: true,
    });
    expect(schema30({ type: 'null' })).toEqual({ nullable: true, enum: [null] });
    expect(schema30({ type: ['string', 'null'] })).toEqual({ type: 'string', nullable: true });
    expect(
      schema30({
        type: 'object',
        properties: {
          kind: { const: 'K' },
          pair: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'integer' }] },
        },
        unevaluatedProperties: false,
      }),
    ).toEqual({
      type: 'object',
      properties: { kind: { enum: ['K'] }, pair: { type: 'array', items: { type: 'integer' } } },
      additionalProperties: false,
    });
  });
});
