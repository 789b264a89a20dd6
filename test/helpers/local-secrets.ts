import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A loopback stand-in for the two AWS APIs Tally reads Kafka credentials from: Secrets
// Manager's GetSecretValue and SSM's GetParameter, on their real wire protocol (JSON 1.1 with
// X-Amz-Target), so the real SDK clients are exercised. There is no AWS here and no Secrets
// Manager emulator on npm or Maven Central worth trusting; what AWS does beyond these two
// answers (rotation, KMS, resource policies) is not modelled. Signatures are not checked.

export interface LocalSecrets {
  /** `http://127.0.0.1:<port>`: AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_SSM. */
  readonly url: string;
  /** Secret id or parameter name → value (a string), or an AWS error name to answer with. */
  readonly secrets: Map<string, string | { readonly error: string }>;
  readonly parameters: Map<string, string | { readonly error: string }>;
  /** Every call, in order: `GetSecretValue <id>` / `GetParameter <name>`. */
  readonly calls: string[];
  /** While true, requests are accepted and never answered (a service that hangs). */
  hang: boolean;
  close(): Promise<void>;
}

function answer(response: ServerResponse, status: number, body: object, errorType?: string) {
  response.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    ...(errorType && { 'x-amzn-errortype': errorType }),
  });
  response.end(JSON.stringify(body));
}

async function bodyOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

export async function startLocalSecrets(): Promise<LocalSecrets> {
  const hanging: ServerResponse[] = [];
  const state: LocalSecrets = {
    url: '',
    secrets: new Map(),
    parameters: new Map(),
    calls: [],
    hang: false,
    close: async () => {},
  };
  const server: Server = createServer(async (request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const body = await bodyOf(request);
    if (state.hang) {
      hanging.push(response);
      return;
    }
    const missing = (type: string, message: string) =>
      answer(response, 400, { __type: type, message }, type);
    if (target === 'secretsmanager.GetSecretValue') {
      const id = String(body.SecretId);
      state.calls.push(`GetSecretValue ${id}`);
      const value = state.secrets.get(id);
      if (value === undefined) {
        return missing(
          'ResourceNotFoundException',
          "Secrets Manager can't find the specified secret.",
        );
      }
      if (typeof value !== 'string') return missing(value.error, `${value.error} for ${id}`);
      return answer(response, 200, {
        ARN: id.startsWith('arn:')
          ? id
          : `arn:aws:secretsmanager:us-east-1:000000000000:secret:${id}`,
        Name: id,
        SecretString: value,
        VersionId: 'v1',
        VersionStages: ['AWSCURRENT'],
      });
    }
    if (target === 'AmazonSSM.GetParameter') {
      const name = String(body.Name);
      state.calls.push(`GetParameter ${name}`);
      const value = state.parameters.get(name);
      if (value === undefined) return missing('ParameterNotFound', '');
      if (typeof value !== 'string') return missing(value.error, `${value.error} for ${name}`);
      return answer(response, 200, {
        Parameter: { Name: name, Type: 'SecureString', Value: value, Version: 1 },
      });
    }
    return missing('UnknownOperationException', `not served here: ${target}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const response of hanging.splice(0)) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
