import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  type Admin,
  Kafka,
  logLevel,
  ResourcePatternTypes,
} from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReconcileReport } from '../../functions/core/reconcile/reconciler.js';
import { type KafkaBroker, startKafkaBroker } from '../../infra/local/kafka-broker.js';
import { waitForKafka } from '../../infra/local/readiness.js';
import { httpEvent } from '../helpers/http-event.js';
import { type LocalSecrets, startLocalSecrets } from '../helpers/local-secrets.js';
import { loadHandlers } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Kafka behind SCRAM-SHA-512, as on MSK: a broker of its own that authenticates on a SASL
// listener and authorizes with ACLs. The functions read their credentials from Secrets Manager
// or SSM (a loopback stand-in speaking the real wire protocol to the real SDK clients, see
// test/helpers/local-secrets.ts), never log them, and a consumer group this principal may not
// read makes a reconcile run partial instead of wrong.
describe('Kafka with SCRAM credentials from Secrets Manager or SSM', () => {
  const password = `pw-${uniqueName('scram')}`;
  const secretId = 'AmazonMSK_kafka-tally-test';
  const parameterName = '/kafka-tally/test/kafka';
  const recordKey = `key-${uniqueName('private')}`;
  const recordValue = `value-${uniqueName('private')}`;
  let workDir: string;
  let broker: KafkaBroker;
  let secrets: LocalSecrets;
  let admin: Admin;
  let topic: string;
  let written: string[];

  /** Everything the functions write to stdout and stderr (their logs) from now on. */
  function captureOutput() {
    written = [];
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
        written.push(String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write);
    }
  }

  /** A fresh "container": configuration and credentials are read when the modules load. */
  async function container(env: Record<string, string>) {
    Object.assign(process.env, {
      KAFKA_SASL_SECRET_ID: '',
      KAFKA_SASL_PARAMETER: '',
      ...env,
    });
    vi.resetModules();
    return loadHandlers();
  }

  const produceEvent = (to: string, body: unknown) =>
    httpEvent({
      pathParameters: { cluster_id: broker.clusterId, topic_name: to },
      body: JSON.stringify(body),
    });

  const highWatermark = async () =>
    Number((await admin.fetchTopicOffsets(topic)).find((p) => p.partition === 0)?.high);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'tally-scram-'));
    broker = await startKafkaBroker(workDir, { scramUsers: [{ name: 'tally', password }] });
    await waitForKafka(broker.bootstrap, { timeoutMs: 60_000 });
    // The PLAINTEXT listener's principal is a super user: the test's own view of the cluster.
    admin = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    topic = uniqueName('scram');
    await createTopicsEverywhere(admin, [{ topic, numPartitions: 1 }]);
    secrets = await startLocalSecrets();
    secrets.secrets.set(secretId, JSON.stringify({ username: 'tally', password }));
    secrets.parameters.set(parameterName, JSON.stringify({ username: 'tally', password }));
    await usePublishEnv({
      KAFKA_BROKERS: broker.saslBootstrap as string,
      KAFKA_AUTH: 'scram',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
      AWS_ENDPOINT_URL_SSM: secrets.url,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      TALLY_DYNAMODB_TIMEOUT_MS: '500',
      TALLY_KAFKA_REQUEST_TIMEOUT_MS: '3000',
      // Everything a function logs, so the test sees all of it.
      LOG_LEVEL: 'debug',
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    for (const name of [
      'KAFKA_AUTH',
      'KAFKA_SASL_SECRET_ID',
      'KAFKA_SASL_PARAMETER',
      'LOG_LEVEL',
      'TALLY_DYNAMODB_TIMEOUT_MS',
      'TALLY_KAFKA_REQUEST_TIMEOUT_MS',
    ]) {
      delete process.env[name];
    }
    await admin?.disconnect();
    await secrets?.close();
    await broker?.process.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const record = {
    key: { type: 'STRING', data: recordKey },
    value: { type: 'STRING', data: recordValue },
  };

  it('publishes over SCRAM with the Secrets Manager secret, read once per container and never logged', async () => {
    captureOutput();
    const api = await container({ KAFKA_SASL_SECRET_ID: secretId });
    const before = await highWatermark();
    for (let i = 0; i < 2; i++) {
      const response = await api.produce(produceEvent(topic, record));
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body), response.body).toMatchObject({ error_code: 200 });
    }
    expect(await highWatermark()).toBe(before + 2);
    // One read for the whole container (five handlers share the publish runtime).
    expect(secrets.calls.filter((call) => call === `GetSecretValue ${secretId}`)).toHaveLength(1);
    const output = written.join('');
    expect(output).not.toContain(password);
    expect(output).not.toContain(recordKey);
    expect(output).not.toContain(recordValue);
  });

  it('publishes with the SSM SecureString parameter instead', async () => {
    const api = await container({ KAFKA_SASL_PARAMETER: parameterName });
    const calls = secrets.calls.length;
    const response = await api.produce(produceEvent(topic, record));
    expect(response.statusCode, response.body).toBe(200);
    expect(secrets.calls.slice(calls)).toEqual([`GetParameter ${parameterName}`]);
  });

  it('a password Kafka refuses: 503 before anything is sent, the password in no log line', async () => {
    const wrong = `wrong-${uniqueName('pw')}`;
    secrets.secrets.set(
      'AmazonMSK_kafka-tally-wrong',
      JSON.stringify({ username: 'tally', password: wrong }),
    );
    captureOutput();
    const api = await container({ KAFKA_SASL_SECRET_ID: 'AmazonMSK_kafka-tally-wrong' });
    const before = await highWatermark();
    const response = await api.produce(produceEvent(topic, record));
    expect(response.statusCode, response.body).toBe(503);
    const body = JSON.parse(response.body);
    expect(body.error_code).toBe(503);
    expect(body.message).toContain(
      'KafkaJSSASLAuthenticationError: Kafka refused the SASL credentials',
    );
    expect(await highWatermark()).toBe(before);
    const output = written.join('');
    expect(output.length).toBeGreaterThan(0); // the failure was logged …
    expect(output).not.toContain(wrong); // … without the password
    expect(response.body).not.toContain(wrong);
  });

  it.each([
    [
      'a secret that does not exist',
      'AmazonMSK_kafka-tally-missing',
      undefined,
      /ResourceNotFoundException/,
    ],
    [
      'a secret that is not JSON',
      'AmazonMSK_kafka-tally-text',
      'user=tally;pw=TOPSECRET',
      /is not JSON/,
    ],
    [
      'a secret without a password',
      'AmazonMSK_kafka-tally-nopw',
      JSON.stringify({ username: 'tally', pass: 'TOPSECRET' }),
      /"password" must be a non-empty string, got nothing/,
    ],
    [
      'a secret this role may not read',
      'AmazonMSK_kafka-tally-denied',
      { error: 'AccessDeniedException' },
      /AccessDeniedException/,
    ],
  ] as const)(
    '%s: 500 naming KAFKA_SASL_SECRET_ID, never its content',
    async (_, id, value, reason) => {
      if (value !== undefined) secrets.secrets.set(id, value);
      captureOutput();
      const api = await container({ KAFKA_SASL_SECRET_ID: id });
      const response = await api.produce(produceEvent(topic, record));
      expect(response.statusCode, response.body).toBe(500);
      const body = JSON.parse(response.body);
      expect(body.error_code).toBe(500);
      expect(body.message).toContain(`Secrets Manager secret "${id}" (KAFKA_SASL_SECRET_ID)`);
      expect(body.message).toMatch(reason);
      expect(response.body + written.join('')).not.toContain('TOPSECRET');
    },
  );

  it('Secrets Manager not answering: 503 within the AWS call budget, and the next request reads again', async () => {
    const api = await container({ KAFKA_SASL_SECRET_ID: secretId });
    secrets.hang = true;
    const started = performance.now();
    let response: Awaited<ReturnType<typeof api.produce>>;
    try {
      response = await api.produce(produceEvent(topic, record));
    } finally {
      secrets.hang = false;
    }
    const elapsed = performance.now() - started;
    expect(response.statusCode, response.body).toBe(503);
    expect(JSON.parse(response.body).message).toMatch(
      /could not reach Secrets Manager.*nothing was sent/,
    );
    // Two attempts of 500 ms each, with slack for a busy machine: seconds, not Lambda's 29 s.
    expect(elapsed).toBeLessThan(8000);
    const again = await api.produce(produceEvent(topic, record));
    expect(again.statusCode, again.body).toBe(200);
  });

  describe('a consumer group this principal may not read', () => {
    const open = uniqueName('open-group');
    const locked = uniqueName('locked-group');
    const denyLocked = {
      resourceType: AclResourceTypes.GROUP,
      resourceName: locked,
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:tally',
      host: '*',
      operation: AclOperationTypes.ALL,
      permissionType: AclPermissionTypes.DENY,
    };
    let reconcile: () => Promise<ReconcileReport>;

    beforeAll(async () => {
      // Both groups committed offset 2 of 3 records.
      for (const groupId of [open, locked]) {
        await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] });
      }
      Object.assign(process.env, { KAFKA_SASL_SECRET_ID: secretId, KAFKA_SASL_PARAMETER: '' });
      vi.resetModules();
      // The whole report (the task handler returns a summary of it).
      const { reconcileRuntime } = await import('../../functions/reconciling/runtime.js');
      reconcile = async () => (await reconcileRuntime()).reconciler.run();
    });

    afterAll(async () => {
      await admin.deleteAcls({ filters: [denyLocked] }).catch(() => {});
    });

    const groupReport = (report: ReconcileReport, groupId: string) =>
      report.groups.find((g) => g.group === groupId);

    it('makes the run partial, names the group, and changes nothing of it until it can be read', async () => {
      const first = await reconcile();
      expect(first.complete, JSON.stringify(first.unreadable)).toBe(true);
      expect(groupReport(first, locked)?.partitions[0]?.committed).toBe(2);

      await admin.createAcls({ acl: [denyLocked] });
      // The ACL reaches the broker's authorizer through the metadata log: wait until it bites.
      let partial: ReconcileReport | undefined;
      for (let attempt = 0; attempt < 20 && !partial; attempt++) {
        const run = await reconcile();
        if (!run.complete) partial = run;
        else await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(partial, 'the DENY ACL never took effect').toBeDefined();
      const run = partial as ReconcileReport;
      expect(run.unreadable, run.unreadable.join('; ')).toHaveLength(1);
      // kafkajs reports the refused FindCoordinator as "coordinator not found".
      expect(run.unreadable[0]).toBe(
        `group ${locked}: describe failed (KafkaJSGroupCoordinatorNotFound: no coordinator answered for it, or this principal may not describe it)`,
      );
      // The readable group is fully reported; the unreadable one is not guessed at.
      expect(groupReport(run, open)?.partitions[0]?.committed).toBe(2);
      expect(groupReport(run, locked)).toBeUndefined();
      expect(run.mappings.removed).toBe(0);
      for (const group of run.groups) {
        expect(group.anomalies.LOST ?? 0, group.group).toBe(0);
        expect(group.anomalies.REWIND ?? 0, group.group).toBe(0);
      }

      await admin.deleteAcls({ filters: [denyLocked] });
      let whole: ReconcileReport | undefined;
      for (let attempt = 0; attempt < 20 && !whole; attempt++) {
        const next = await reconcile();
        if (next.complete) whole = next;
        else await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(whole, 'the group stayed unreadable after the ACL was deleted').toBeDefined();
      const locked3 = groupReport(whole as ReconcileReport, locked);
      expect(locked3?.partitions[0]?.committed).toBe(2);
      expect(locked3?.anomalies.LOST ?? 0).toBe(0);
      expect(locked3?.anomalies.REWIND ?? 0).toBe(0);
    });
  });
});
