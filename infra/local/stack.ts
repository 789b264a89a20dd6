import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDbServer, startDynamoDbServer } from './dynamodb-server.js';
import { serveLocalEventBus } from './event-bus.js';
import { serveGlueStandIn } from './glue-stand-in.js';
import { type KafkaBroker, startKafkaBroker, tail } from './kafka-broker.js';
import { localClusterSize, startKafkaCluster } from './kafka-cluster.js';
import { startLocalApi } from './local-api.js';
import { createLocalTables, localDynamoDbClient } from './local-tables.js';
import type { ManagedProcess } from './managed-process.js';
import { waitForDynamoDb, waitForKafka, waitForSchemaRegistry } from './readiness.js';
import { startSchedules } from './schedules.js';
import { APICURIO_VERSION, startSchemaRegistry } from './schema-registry.js';
import {
  createLocalStepFunctions,
  lambdaInvoker,
  serveLocalStepFunctions,
} from './step-functions.js';
import { createTtlSweeper } from './ttl-sweeper.js';

/** serverless.yml's table prefix for stage "local": `${self:service}-${sls:stage}-`. */
export const LOCAL_TABLE_PREFIX = 'kafka-tally-local-';

export interface LocalStackOptions {
  /** Where KAFKA_BROKERS and DYNAMODB_ENDPOINT are read from. */
  readonly env?: NodeJS.ProcessEnv;
  /** Prefix of the project's tables on the local endpoint. */
  readonly tablePrefix?: string;
  /** Progress lines (timings, what was reused); never the ready line. */
  readonly log?: (line: string) => void;
  readonly startTimeoutMs?: number;
  /** Also serve serverless.yml's HTTP API (serverless-offline) on a free port. */
  readonly api?: boolean;
  /** The API's integration timeout (default 29 s, as API Gateway's): a test may shorten it. */
  readonly gatewayTimeoutMs?: number;
  /**
   * Also run a schema registry (Confluent API), or use TALLY_SCHEMA_REGISTRY_URL's. Off by
   * default (it costs a JVM and ~10 s); TALLY_SCHEMA_REGISTRY=1 in `env` asks for it too.
   */
  readonly schemaRegistry?: boolean;
  /**
   * Select AWS Glue Schema Registry instead, served by the local stand-in (glue-stand-in.ts)
   * unless TALLY_GLUE_ENDPOINT names one; TALLY_SCHEMA_REGISTRY=glue in `env` asks for it too.
   */
  readonly glueSchemaRegistry?: boolean;
}

export interface LocalStack {
  /** Comma-separated bootstrap servers. */
  readonly kafkaBrokers: string;
  readonly kafkaClusterId: string;
  readonly dynamodbEndpoint: string;
  /** The Confluent Schema Registry API's base URL, when a registry was asked for. */
  readonly schemaRegistryUrl: string | undefined;
  /** The Glue API's endpoint (the stand-in's), when Glue was selected. */
  readonly glueEndpoint: string | undefined;
  /** `http://127.0.0.1:<port>` when the API was asked for. */
  readonly apiUrl: string | undefined;
  /** The local state machines (and task-token API), served with the API. */
  readonly stepFunctionsUrl: string | undefined;
  /** The bearer token the local API accepts (every scope), when the API was asked for. */
  readonly apiToken: string | undefined;
  /** Logical id from infra/resources/tables.yml → table name. */
  readonly tables: Readonly<Record<string, string>>;
  /** The processes this stack started (none for services given by the environment). */
  readonly processes: readonly ManagedProcess[];
  readonly timings: Readonly<Record<string, number>>;
  /** Rejects when a process of the stack exits while the stack is meant to be running. */
  readonly unexpectedExit: Promise<never>;
  readyLine(): string;
  stop(): Promise<void>;
}

function exitedEarly(managed: ManagedProcess, isStopping: () => boolean): Promise<never> {
  return managed.exited.then((code) => {
    if (isStopping()) return new Promise<never>(() => {});
    throw new Error(`${managed.name} exited with ${code}; its log:\n${tail(managed.logFile)}`);
  });
}

/**
 * Starts (or, with KAFKA_BROKERS / DYNAMODB_ENDPOINT, reuses) a Kafka broker and a DynamoDB
 * API, waits until both answer, and creates the project's tables. Everything it started is
 * stopped by `stop()`, killed on process exit, and killed by a watchdog if this process dies.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const workDir = mkdtempSync(join(tmpdir(), 'tally-stack-'));
  const processes: ManagedProcess[] = [];
  let stopping = false;
  const killAll = () => {
    for (const managed of processes) managed.killNow();
  };
  process.on('exit', killAll);

  const closers: Array<() => Promise<void>> = [];
  let removeBundles = () => {};
  const stop = async () => {
    stopping = true;
    try {
      for (const close of closers.splice(0)) await close().catch(() => {});
      await Promise.all(processes.map((managed) => managed.stop()));
    } finally {
      process.removeListener('exit', killAll);
      rmSync(workDir, { recursive: true, force: true });
      removeBundles();
    }
  };

  try {
    const started = Date.now();
    const timings: Record<string, number> = {};
    const kafka = async (): Promise<[string, string]> => {
      const given = env.KAFKA_BROKERS?.trim();
      const nodes = localClusterSize(env);
      if (!given && nodes > 1) {
        // TALLY_KAFKA_BROKERS_LOCAL=3: a replicated cluster (RF 3, min.insync.replicas=2).
        const cluster = await startKafkaCluster(workDir, { nodes });
        processes.push(...cluster.nodes.map((node) => node.process));
        await cluster.waitUntilServing(timeoutMs);
        timings.kafkaReadyMs = Date.now() - started;
        log(
          `kafka 3.9.1 cluster of ${nodes} nodes answered in ${timings.kafkaReadyMs} ms: ${cluster.nodes.map((n) => `node ${n.id} ${n.bootstrap} log ${n.logFile}`).join('; ')}`,
        );
        return [cluster.bootstrap, cluster.clusterId];
      }
      const bootstrap = given || undefined;
      let broker: KafkaBroker | undefined;
      if (bootstrap === undefined) {
        broker = await startKafkaBroker(workDir);
        processes.push(broker.process);
        timings.mavenResolveMs = broker.timings.resolveMs;
        timings.kafkaFormatMs = broker.timings.formatMs;
      }
      const brokers = bootstrap ?? (broker as KafkaBroker).bootstrap;
      const clusterId = await waitForKafka(brokers.split(',')[0] as string, {
        timeoutMs,
        ...(broker && { abandonWhen: exitedEarly(broker.process, () => stopping) }),
      });
      timings.kafkaReadyMs = Date.now() - started;
      log(
        broker
          ? `kafka 3.9.1 broker answered in ${timings.kafkaReadyMs} ms (maven ${broker.timings.resolveMs} ms, format ${broker.timings.formatMs} ms), log ${broker.process.logFile}`
          : `kafka: using KAFKA_BROKERS=${brokers}`,
      );
      return [brokers, clusterId];
    };
    const dynamodb = async (): Promise<string> => {
      const given = env.DYNAMODB_ENDPOINT?.trim();
      let server: DynamoDbServer | undefined;
      if (!given) {
        server = await startDynamoDbServer(workDir);
        processes.push(server.process);
      }
      const endpoint = given || (server as DynamoDbServer).endpoint;
      await waitForDynamoDb(endpoint, {
        timeoutMs,
        ...(server && { abandonWhen: exitedEarly(server.process, () => stopping) }),
      });
      timings.dynamodbReadyMs = Date.now() - started;
      log(
        server
          ? `dynamodb answered in ${timings.dynamodbReadyMs} ms`
          : `dynamodb: using DYNAMODB_ENDPOINT=${endpoint}`,
      );
      return endpoint;
    };

    const glueSelected =
      options.glueSchemaRegistry === true || env.TALLY_SCHEMA_REGISTRY?.trim() === 'glue';
    const glueRegistryName = env.TALLY_GLUE_REGISTRY_NAME?.trim() || 'default-registry';
    let glueEndpoint: string | undefined;
    if (glueSelected) {
      glueEndpoint = env.TALLY_GLUE_ENDPOINT?.trim() || undefined;
      if (glueEndpoint === undefined) {
        const standIn = await serveGlueStandIn({ registries: [glueRegistryName] });
        closers.push(standIn.close);
        glueEndpoint = standIn.url;
      }
      log(`schema registry: AWS Glue API at ${glueEndpoint}, registry ${glueRegistryName}`);
    }
    const schemaRegistry = async (): Promise<string | undefined> => {
      if (glueSelected) return undefined;
      const given = env.TALLY_SCHEMA_REGISTRY_URL?.trim();
      if (given) {
        await waitForSchemaRegistry(given, { timeoutMs });
        log(`schema registry: using TALLY_SCHEMA_REGISTRY_URL=${given}`);
        return given;
      }
      if (!options.schemaRegistry && env.TALLY_SCHEMA_REGISTRY?.trim() !== '1') return undefined;
      const registry = await startSchemaRegistry(workDir);
      processes.push(registry.process);
      timings.schemaRegistryResolveMs = registry.timings.resolveMs;
      await waitForSchemaRegistry(registry.confluentApiUrl, {
        timeoutMs,
        abandonWhen: exitedEarly(registry.process, () => stopping),
      });
      timings.schemaRegistryReadyMs = Date.now() - started;
      log(
        `schema registry (Apicurio ${APICURIO_VERSION}) answered in ${timings.schemaRegistryReadyMs} ms (maven ${registry.timings.resolveMs} ms), log ${registry.process.logFile}`,
      );
      return registry.confluentApiUrl;
    };

    const [[kafkaBrokers, kafkaClusterId], dynamodbEndpoint, schemaRegistryUrl] = await Promise.all(
      [kafka(), dynamodb(), schemaRegistry()],
    );
    const client = localDynamoDbClient(dynamodbEndpoint);
    const tables = await createLocalTables(
      client,
      options.tablePrefix ?? LOCAL_TABLE_PREFIX,
    ).finally(() => client.destroy());
    // DynamoDB's TTL, which dynalite lacks (ttl-sweeper.ts).
    const sweeperClient = localDynamoDbClient(dynamodbEndpoint);
    const sweeper = createTtlSweeper({
      client: sweeperClient,
      tables,
      offsetMs: Number(env.TALLY_LOCAL_CLOCK_OFFSET_SECONDS ?? 0) * 1000 || 0,
      intervalMs: (Number(env.TALLY_LOCAL_TTL_SWEEP_SECONDS ?? 60) || 60) * 1000,
      log,
    });
    closers.push(async () => {
      sweeper.stop();
      sweeperClient.destroy();
    });
    let apiUrl: string | undefined;
    let stepFunctionsUrl: string | undefined;
    let apiToken: string | undefined;
    if (options.api) {
      // The state machines' Task states call the functions serverless-offline serves; its
      // approvals route answers a waiting task through this endpoint, as through AWS's API.
      let lambdaUrl: string | undefined;
      const stepFunctions = createLocalStepFunctions({
        invoke: (fn, payload) => {
          if (lambdaUrl === undefined) throw new Error('the local API is not up yet');
          return lambdaInvoker(lambdaUrl)(fn, payload);
        },
      });
      const served = await serveLocalStepFunctions(stepFunctions);
      closers.push(async () => {
        stepFunctions.stop();
        await served.close();
      });
      stepFunctionsUrl = served.url;
      // Notifications: the functions' PutEvents land here, and go to TALLY_LOCAL_NOTIFY_WEBHOOK.
      const webhookUrl = env.TALLY_LOCAL_NOTIFY_WEBHOOK?.trim() || undefined;
      const bus = await serveLocalEventBus({ webhookUrl, log });
      closers.push(bus.close);
      log(
        `events: ${webhookUrl ? `POSTed to TALLY_LOCAL_NOTIFY_WEBHOOK=${webhookUrl}` : 'logged here (no TALLY_LOCAL_NOTIFY_WEBHOOK)'}`,
      );
      // A bearer token for this run, with every scope (printed in the ready line).
      apiToken = `tally-local-${randomBytes(24).toString('base64url')}`;
      const api = await startLocalApi({
        kafkaBrokers,
        dynamodbEndpoint,
        workDir,
        // serverless-offline bundles every function before it answers: up to ~3 minutes on a
        // 2-core machine at load 30 (several test runs at once); tests that start npm start wait
        // longer (TALLY_LOCAL_API_START_SECONDS, docs/operations.md).
        timeoutMs: (Number(env.TALLY_LOCAL_API_START_SECONDS ?? 120) || 120) * 1000,
        ...(options.gatewayTimeoutMs !== undefined && {
          gatewayTimeoutMs: options.gatewayTimeoutMs,
        }),
        env: {
          TALLY_STEP_FUNCTIONS_ENDPOINT: served.url,
          TALLY_EVENTBRIDGE_ENDPOINT: bus.url,
          ...(schemaRegistryUrl && { TALLY_SCHEMA_REGISTRY_URL: schemaRegistryUrl }),
          ...(glueEndpoint && {
            TALLY_SCHEMA_REGISTRY: 'glue',
            TALLY_GLUE_ENDPOINT: glueEndpoint,
            TALLY_GLUE_REGISTRY_NAME: glueRegistryName,
          }),
          TALLY_AUTH: 'tokens',
          TALLY_AUTH_TOKENS: JSON.stringify({
            [apiToken]: { caller: 'local', scopes: ['admin'], topics: ['*'] },
          }),
        },
      });
      processes.push(api.process);
      closers.push(api.close);
      removeBundles = api.removeBundles;
      apiUrl = api.url;
      lambdaUrl = api.lambdaUrl;
      log(
        `state machines ${stepFunctions.names().join(', ')}: POST ${served.url}/local/state-machines/{name}/executions`,
      );
      const schedules = startSchedules(api.lambdaUrl, log);
      log(`firing ${schedules.count} schedule(s) of serverless.yml locally`);
      api.process.exited.then(() => schedules.stop());
      timings.apiReadyMs = Date.now() - started;
      log(`API (serverless-offline) answered in ${timings.apiReadyMs} ms`);
    }
    const unexpectedExit = Promise.race(
      processes.map((managed) => exitedEarly(managed, () => stopping)),
    );
    unexpectedExit.catch(() => {}); // observed by whoever cares; never an unhandled rejection
    return {
      kafkaBrokers,
      kafkaClusterId,
      dynamodbEndpoint,
      schemaRegistryUrl,
      glueEndpoint,
      apiUrl,
      tables,
      processes,
      timings,
      unexpectedExit,
      stepFunctionsUrl,
      apiToken,
      readyLine: () =>
        `tally ready: kafka=${kafkaBrokers} dynamodb=${dynamodbEndpoint}${schemaRegistryUrl ? ` schema-registry=${schemaRegistryUrl}` : ''}${glueEndpoint ? ` glue=${glueEndpoint}` : ''}${apiUrl ? ` api=${apiUrl}` : ''}${stepFunctionsUrl ? ` state-machines=${stepFunctionsUrl}/local/state-machines` : ''}${apiToken ? ` token=${apiToken}` : ''}`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
