import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGatewayFront } from './gateway-front.js';
import { readHttpRoutes } from './gateway-routes.js';
import { tail } from './kafka-broker.js';
import { ManagedProcess } from './managed-process.js';
import { freeLoopbackPort } from './ports.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVERLESS = join(ROOT, 'node_modules', 'serverless', 'bin', 'serverless.js');

export interface LocalApiOptions {
  readonly kafkaBrokers: string;
  readonly dynamodbEndpoint: string;
  readonly workDir: string;
  readonly timeoutMs?: number;
  /** API Gateway's integration timeout: the API answers 503 then (default GATEWAY_TIMEOUT_MS). */
  readonly gatewayTimeoutMs?: number;
  /** More environment for the functions. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface LocalApi {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** serverless-offline's Lambda invoke endpoint (`/2015-03-31/functions/{name}/invocations`). */
  readonly lambdaUrl: string;
  readonly process: ManagedProcess;
  /** Stops the gateway front (serverless-offline is stopped through `process`). */
  close(): Promise<void>;
  /** Removes this API's bundles (`.esbuild/local/<stack>`): after `process` has stopped. */
  removeBundles(): void;
}

/**
 * Serves the HTTP API of serverless.yml (its routes, its handlers, bundled by serverless-esbuild)
 * with serverless-offline, stage "local", against the local Kafka and DynamoDB, behind a front
 * that refuses what API Gateway and Lambda refuse (gateway-front.ts).
 */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const [httpPort, lambdaPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  // Each local API bundles into a folder of its own (serverless.yml's outputWorkFolder): two
  // stacks started from one checkout at once (tests do) would otherwise write and remove each
  // other's handlers in the one .esbuild/.
  const bundles = join('.esbuild', 'local', basename(options.workDir));
  const api = await ManagedProcess.start({
    name: 'local API (serverless-offline)',
    command: process.execPath,
    args: [
      SERVERLESS,
      'offline',
      'start',
      '--stage',
      'local',
      '--host',
      '127.0.0.1',
      '--httpPort',
      String(httpPort),
      '--lambdaPort',
      String(lambdaPort),
      '--localEnvironment',
      // Lambda's own timeout is not enforced; API Gateway's is, by the front.
      '--noTimeout',
      // API Gateway's JWT authorizer does not run locally: the functions check the bearer
      // tokens of TALLY_AUTH_TOKENS themselves (TALLY_AUTH=tokens).
      '--noAuth',
    ],
    cwd: ROOT,
    logFile: join(options.workDir, 'api.log'),
    removeWhenOrphaned: [join(ROOT, bundles)],
    env: {
      ...process.env,
      KAFKA_BROKERS: options.kafkaBrokers,
      DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SLS_TELEMETRY_DISABLED: '1',
      SLS_NOTIFICATIONS_MODE: 'off',
      TALLY_ESBUILD_WORK_FOLDER: bundles,
      ...options.env,
    },
  });
  const offline = `http://127.0.0.1:${httpPort}`;
  await waitForRouter(api, offline, options.timeoutMs ?? 90_000);
  const front = await startGatewayFront({
    upstream: offline,
    routes: readHttpRoutes(),
    ...(options.gatewayTimeoutMs !== undefined && { timeoutMs: options.gatewayTimeoutMs }),
  }).catch(async (error: unknown) => {
    await api.stop();
    throw error;
  });
  return {
    url: front.url,
    lambdaUrl: `http://127.0.0.1:${lambdaPort}`,
    process: api,
    close: front.close,
    removeBundles: () => rmSync(join(ROOT, bundles), { recursive: true, force: true }),
  };
}

/** Waits until serverless-offline answers; stops it if it does not in time. */
async function waitForRouter(api: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // Any HTTP answer means the router is up; a route's own status does not matter here.
  while (Date.now() < deadline) {
    if (!api.running) {
      throw new Error(`serverless-offline exited; its log:\n${tail(api.logFile)}`);
    }
    try {
      await fetch(`${url}/__tally_ready`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  await api.stop();
  throw new Error(
    `serverless-offline did not answer within the timeout; its log:\n${tail(api.logFile)}`,
  );
}
