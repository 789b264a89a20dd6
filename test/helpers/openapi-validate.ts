import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseJsonSequence } from '../../functions/core/rest-proxy/json-stream.js';
import {
  IGNORED_WITH,
  JSON_SEQUENCE,
  type Method,
  type OpenApiDocument,
  type Operation,
  openApiDocument,
} from '../../functions/openapi/document.js';

// Checks one HTTP exchange (an API Gateway event and the handler's answer) against Tally's
// OpenAPI document with Ajv's JSON Schema 2020-12 validator. The answer is always checked: its
// status must be one the operation lists, its content type one of that status's media types, its
// body valid (line by line for a JSON sequence), its headers declared (Content-Type aside) and
// valid. The request is checked when the answer is 2xx: a request the handler accepted must be
// one the document allows — its path, query and header parameters and its body (tests send
// malformed input on purpose, and its 4xx is checked as an answer). Content-Type and bodies sent
// to operations without one are not checked: the handlers do not read them.

export interface Answer {
  readonly statusCode?: number | undefined;
  readonly headers?: Record<string, string | number | boolean> | undefined;
  readonly body?: string | undefined;
}

export interface DocumentRoute {
  readonly routeKey: string;
  readonly path: string;
  readonly method: Method;
  readonly operation: Operation;
  /** The path parameters' names, in order. */
  readonly params: readonly string[];
  readonly pattern: RegExp;
}

const DOC_ID = 'tally-openapi';
const escapePointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

export function createExchangeChecker(document: OpenApiDocument = openApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document as object, DOC_ID);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const problemsOf = (pointer: string, value: unknown, what: string): string[] => {
    const validate = validator(pointer);
    if (validate(value)) return [];
    const shown = JSON.stringify(value)?.slice(0, 300);
    return [`${ajv.errorsText(validate.errors, { dataVar: what })} — got ${shown}`];
  };

  const routes: DocumentRoute[] = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      routeKey: `${method.toUpperCase()} ${path}`,
      path,
      method: method as Method,
      operation: operation as Operation,
      params: Array.from(path.matchAll(/\{(\w+)\}/g), (m) => m[1] as string),
      pattern: new RegExp(
        `^${path.replace(/[.*+?^$()|[\]\\:]/g, '\\$&').replace(/\\?\{\w+\}/g, '([^/]+)')}$`,
      ),
    })),
  );

  /**
   * The route an event is for, among `candidates` (the routes of the module that answered): its
   * routeKey when it names one, else the one its rawPath matches, else the one whose path
   * parameters it carries. Tests build events by hand, often with a placeholder routeKey.
   */
  function routeOf(
    event: APIGatewayProxyEventV2,
    candidates: readonly string[],
  ): DocumentRoute | string {
    const among = routes.filter((r) => candidates.includes(r.routeKey));
    if (among.length === 0) return `none of ${candidates.join(', ')} is in the document`;
    const byKey = among.find((r) => r.routeKey === event.routeKey);
    if (byKey) return byKey;
    const rawPath = (event.rawPath ?? '').replace(/(.)\/+$/, '$1');
    const byPath = among.filter((r) => r.pattern.test(rawPath));
    if (byPath.length === 1) return byPath[0] as DocumentRoute;
    const given = Object.keys(event.pathParameters ?? {})
      .sort()
      .join(',');
    const byParams = among.filter((r) => [...r.params].sort().join(',') === given);
    if (byParams.length === 1) return byParams[0] as DocumentRoute;
    return `cannot tell which of ${among.map((r) => r.routeKey).join(', ')} the event (routeKey ${event.routeKey}, rawPath ${event.rawPath}, path parameters ${given || 'none'}) is for`;
  }

  function checkRequest(
    route: DocumentRoute,
    event: APIGatewayProxyEventV2,
    answer: Answer,
  ): string[] {
    const base = `/paths/${escapePointer(route.path)}/${route.method}`;
    const problems: string[] = [];
    const fromPath = route.pattern.exec((event.rawPath ?? '').replace(/(.)\/+$/, '$1'));
    (route.operation.parameters ?? []).forEach((parameter, i) => {
      const at = `${base}/parameters/${i}/schema`;
      let value: string | undefined;
      if (parameter.in === 'path') {
        const raw =
          event.pathParameters?.[parameter.name] ??
          fromPath?.[route.params.indexOf(parameter.name) + 1];
        value = raw === undefined ? undefined : safeDecode(raw);
      } else if (parameter.in === 'query') {
        const instead = parameter[IGNORED_WITH] as string | undefined;
        if (instead && event.queryStringParameters?.[instead] !== undefined) return;
        value = event.queryStringParameters?.[parameter.name];
      } else {
        value = headerOf(event.headers, parameter.name);
      }
      if (value === undefined) {
        if (parameter.required)
          problems.push(`${parameter.in} parameter ${parameter.name} missing`);
        return;
      }
      problems.push(...problemsOf(at, value, `${parameter.in} parameter ${parameter.name}`));
    });
    const requestBody = route.operation.requestBody;
    const text =
      event.body == null
        ? ''
        : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8').toString('utf8');
    // A body the operation does not read, or a Content-Type the handler does not look at (only
    // v2 produce reads it), is ignored by the handlers: not a departure of what they accept.
    if (requestBody === undefined) return problems;
    if (text.trim() === '') {
      if (requestBody.required) problems.push('request body missing');
      return problems;
    }
    const declared = Object.keys(requestBody.content);
    const given = mediaType(headerOf(event.headers, 'content-type'));
    const type = declared.includes(given) ? given : (declared[0] as string);
    const media = requestBody.content[type] as NonNullable<(typeof requestBody.content)[string]>;
    const at = `${base}/requestBody/content/${escapePointer(type)}/schema`;
    let values: unknown[];
    try {
      values = media[JSON_SEQUENCE] ? parseJsonSequence(text) : [JSON.parse(text)];
    } catch {
      return [...problems, `request body is not JSON: ${text.slice(0, 200)}`];
    }
    const accepted = withoutRefusedRecords(route.operation.operationId, values, answer.body ?? '');
    accepted.forEach((value, i) => {
      problems.push(...problemsOf(at, value, accepted.length > 1 ? `request body[${i}]` : 'body'));
    });
    return problems;
  }

  /**
   * The answer's headers other than Content-Type must be ones its response declares (a
   * Retry-After the document does not mention is a departure), with values its schemas allow.
   */
  function checkHeaders(route: DocumentRoute, status: string, answer: Answer): string[] {
    const declared = route.operation.responses[status]?.headers ?? {};
    const base = `/paths/${escapePointer(route.path)}/${route.method}/responses/${status}/headers`;
    return Object.entries(answer.headers ?? {}).flatMap(([name, value]) => {
      if (name.toLowerCase() === 'content-type') return [];
      const key = Object.keys(declared).find((d) => d.toLowerCase() === name.toLowerCase());
      if (key === undefined) return [`header ${name} is not declared for status ${status}`];
      return problemsOf(`${base}/${escapePointer(key)}/schema`, String(value), `header ${key}`);
    });
  }

  function checkAnswer(route: DocumentRoute, answer: Answer): string[] {
    const status = String(answer.statusCode);
    const response = route.operation.responses[status];
    if (response === undefined) {
      const listed = Object.keys(route.operation.responses).join(', ');
      return [`status ${status} is not one the document lists (${listed}): ${answer.body}`];
    }
    const headerProblems = checkHeaders(route, status, answer);
    if (headerProblems.length > 0) return headerProblems;
    const body = answer.body ?? '';
    if (response.content === undefined) {
      return body === '' ? [] : [`status ${status} has no body in the document`];
    }
    const contentType = Object.entries(answer.headers ?? {}).find(
      ([name]) => name.toLowerCase() === 'content-type',
    )?.[1];
    const type = mediaType(String(contentType ?? ''));
    const media = response.content[type];
    if (media === undefined) {
      const declared = Object.keys(response.content).join(', ');
      return [`content-type ${contentType} is not one of ${declared}`];
    }
    const at = `/paths/${escapePointer(route.path)}/${route.method}/responses/${status}/content/${escapePointer(type)}/schema`;
    if (!type.endsWith('json')) return problemsOf(at, body, 'body');
    // A JSON sequence: one JSON text per line, each followed by CRLF (an error object may come
    // alone, without).
    const lines = !media[JSON_SEQUENCE]
      ? [body]
      : body.endsWith('\r\n')
        ? body.slice(0, -2).split('\r\n')
        : [body];
    return lines.flatMap((line, i) => {
      const what = lines.length > 1 ? `line ${i + 1}` : 'body';
      try {
        return problemsOf(at, JSON.parse(line), what);
      } catch {
        return [`${what} is not JSON: ${line.slice(0, 200)}`];
      }
    });
  }

  /** Every way the exchange departs from the document (empty: it conforms). */
  function check(
    event: APIGatewayProxyEventV2,
    answer: Answer,
    candidates: readonly string[],
  ): { routeKey: string; problems: string[] } {
    const route = routeOf(event, candidates);
    if (typeof route === 'string') return { routeKey: event.routeKey, problems: [route] };
    const status = answer.statusCode ?? 0;
    const problems = checkAnswer(route, answer);
    // A function serving several routes may route by rawPath (Burrow's). An event whose rawPath
    // is none of them is one API Gateway never sends: its answer must fit one of those routes,
    // and its request was never read as this route's.
    const rawPath = (event.rawPath ?? '').replace(/(.)\/+$/, '$1');
    const siblings = routes.filter((r) => candidates.includes(r.routeKey) && r !== route);
    if (
      problems.length > 0 &&
      siblings.length > 0 &&
      !routes.some((r) => r.pattern.test(rawPath))
    ) {
      if (siblings.some((r) => checkAnswer(r, answer).length === 0)) {
        return { routeKey: route.routeKey, problems: [] };
      }
    }
    if (status >= 200 && status < 300) problems.push(...checkRequest(route, event, answer));
    return { routeKey: route.routeKey, problems };
  }

  return { routes, routeOf, check };
}

/**
 * The request without the records its 2xx answer refused one by one (outcome REJECTED: a
 * streaming produce's report line, a batch failure by id, a v2 offset): publish answers a bad
 * record in its place and sends the rest, so only the others must be valid.
 */
function withoutRefusedRecords(operationId: string, values: unknown[], body: string): unknown[] {
  const refused = (report: unknown) => (report as { outcome?: unknown })?.outcome === 'REJECTED';
  try {
    if (operationId === 'produceRecords') {
      const reports = body.split('\r\n').filter((line) => line !== '');
      return values.filter((_, i) => !refused(JSON.parse(reports[i] ?? '{}')));
    }
    const answer = JSON.parse(body) as {
      failures?: Array<{ id?: unknown }>;
      offsets?: unknown[];
    };
    const request = values[0] as { entries?: Array<{ id?: unknown }>; records?: unknown[] };
    if (operationId === 'produceBatch' && Array.isArray(request?.entries)) {
      const ids = new Set((answer.failures ?? []).filter(refused).map((f) => f.id));
      const entries = request.entries.filter((e) => !ids.has(e?.id));
      return entries.length === 0 ? [] : [{ ...request, entries }];
    }
    if (operationId === 'produceV2' && Array.isArray(request?.records)) {
      const records = request.records.filter((_, i) => !refused(answer.offsets?.[i]));
      return records.length === 0 ? [] : [{ ...request, records }];
    }
  } catch {
    // An answer that is not what publish writes fails its own check.
  }
  return values;
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function headerOf(headers: Record<string, string | undefined> | undefined, name: string) {
  const wanted = name.toLowerCase();
  return Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === wanted)?.[1];
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
