import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { localDynamoDbClient, tableEnvironment } from '../../infra/local/local-tables.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { httpEvent, lambdaContext, testAuthEnv } from '../helpers/http-event.js';
import { headerText, loadHandlers, readBack, reportLines } from '../helpers/publish-client.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Seed 003: a broker that stops answering (a GC pause, here SIGSTOP) must turn into a definite
// answer inside the request's deadline — UNKNOWN for a record that was sent, NOT_SENT for one
// that never left — and a retry with the same Idempotency-Key must reuse the same seqs.
// This file runs a stack of its own: pausing the shared broker would stall other test files.
// Both ways publish runs: ledger first (TALLY_AUDIT_HORIZON_SECONDS=0, no leases) and the
// default fast path (the ledger written after the send, seqs leased per container).
describe('deadlines with a paused broker', () => {
  let stack: LocalStack;
  let brokerPid: number;
  let clusterId: string;
  let documents: DynamoDBDocumentClient;

  beforeAll(async () => {
    stack = await startLocalStack({ env: {}, tablePrefix: `${uniqueName('deadline')}-` });
    brokerPid = stack.processes.find((p) => p.name === 'kafka broker')?.pid as number;
    clusterId = stack.kafkaClusterId;
    Object.assign(process.env, {
      KAFKA_BROKERS: stack.kafkaBrokers,
      DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
      ...tableEnvironment(stack.tables),
      ...testAuthEnv(),
    });
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(stack.dynamodbEndpoint));
  });

  afterAll(async () => {
    if (brokerPid) process.kill(brokerPid, 'SIGCONT');
    documents?.destroy();
    await stack?.stop();
  });

  /** The stream's counter: the last seq handed out, to any container. */
  const counter = async (topic: string) =>
    (
      await documents.send(
        new GetCommand({
          TableName: process.env.TALLY_STREAMS_TABLE,
          Key: { stream: topic },
          ConsistentRead: true,
        }),
      )
    ).Item?.lastSeq as number | undefined;

  /** Until the request with `key` holds its reservation: a repeat from now on is concurrent. */
  const reserved = async (key: string, timeoutMs = 2000) => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const { Items } = await documents.send(
        new ScanCommand({ TableName: process.env.TALLY_RESERVATIONS_TABLE, ConsistentRead: true }),
      );
      if (Items?.some((item) => String(item.idempotencyKey).includes(key))) return;
      if (performance.now() > deadline)
        throw new Error(`no reservation for ${key} in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  describe.each([
    ['ledger first', { TALLY_AUDIT_HORIZON_SECONDS: '0' }],
    ['on the default fast path', {}],
  ])('%s', (_mode, modeEnv: Record<string, string>) => {
    let topic: string;
    let api: Awaited<ReturnType<typeof loadHandlers>>;
    const record = {
      key: { type: 'STRING', data: 'k' },
      value: { type: 'STRING', data: 'paused' },
    };
    const event = (headers: Record<string, string>) =>
      httpEvent({
        pathParameters: { cluster_id: clusterId, topic_name: topic },
        headers,
        body: JSON.stringify(record),
      });
    /** Seq's outcome, read from the ledger table itself: the lookup route asks Kafka first. */
    const ledger = async (seq: number) => {
      const block = await createLedger(documents, process.env.TALLY_LEDGER_TABLE as string).find(
        topic,
        seq,
      );
      return block?.outcomes[seq - block.firstSeq];
    };

    beforeAll(async () => {
      delete process.env.TALLY_AUDIT_HORIZON_SECONDS;
      Object.assign(process.env, modeEnv);
      topic = uniqueName('paused');
      const admin = new Kafka({
        brokers: [stack.kafkaBrokers],
        logLevel: logLevel.NOTHING,
      }).admin();
      await admin.connect();
      await createTopicsEverywhere(admin, [{ topic, numPartitions: 1 }]);
      await admin.disconnect();
      vi.resetModules();
      api = await loadHandlers();
      const warm = await api.produce(event({}));
      expect(warm.statusCode).toBe(200);
      expect(reportLines(warm)[0]).toMatchObject({ seq: 1 });
    });

    it('answers UNKNOWN by the deadline, 409 to a concurrent repeat, and re-sends with the same seq later', async () => {
      process.kill(brokerPid, 'SIGSTOP');
      const key = uniqueName('key');
      const started = performance.now();
      const first = api.produce(event({ 'Idempotency-Key': key, 'Tally-Timeout-Ms': '2500' }));
      await reserved(key);
      const repeat = await api.produce(
        event({ 'Idempotency-Key': key, 'Tally-Timeout-Ms': '2500' }),
      );
      expect(repeat.statusCode).toBe(409);
      const unknown = await first;
      const elapsed = performance.now() - started;
      expect(unknown.statusCode).toBe(504);
      const [report] = reportLines(unknown);
      expect(report).toMatchObject({
        error_code: 504,
        outcome: 'UNKNOWN',
        retriable: true,
        seq: 2,
      });
      expect(elapsed).toBeGreaterThan(2000);
      expect(elapsed).toBeLessThan(3500);
      expect(await ledger(2)).toMatchObject({ status: 'UNKNOWN' });

      // No Tally-Timeout-Ms: Lambda's own deadline (3 s left, less the 1 s margin) bounds it,
      // through the middy stack the handler runs in.
      const lambdaKey = uniqueName('lambda-deadline');
      const lambdaStarted = performance.now();
      const cut = await api.produce(event({ 'Idempotency-Key': lambdaKey }), lambdaContext(3000));
      const cutMs = performance.now() - lambdaStarted;
      // The warm producer lost its connection with the first request: this one is either sent
      // (504 UNKNOWN) or not (503 NOT_SENT), but answered by the deadline, as the ledger says.
      const [cutReport] = reportLines(cut);
      const cutOutcome = cut.statusCode === 504 ? 'UNKNOWN' : 'NOT_SENT';
      expect([504, 503], cut.body).toContain(cut.statusCode);
      expect(cutReport).toMatchObject({ outcome: cutOutcome, retriable: true, seq: 3 });
      expect(cutMs).toBeGreaterThan(1500);
      expect(cutMs).toBeLessThan(3000);
      expect(await ledger(3)).toMatchObject({ status: cutOutcome });

      // A new container cannot even load metadata: 503, nothing sent, no seq spent.
      const before = await counter(topic);
      vi.resetModules();
      const cold = await loadHandlers();
      const coldStarted = performance.now();
      const notSent = await cold.produce(event({ 'Tally-Timeout-Ms': '1500' }));
      expect(performance.now() - coldStarted).toBeLessThan(2500);
      expect(notSent.statusCode).toBe(503);
      expect(notSent.headers['retry-after']).toBe('1');
      expect(JSON.parse(notSent.body).message).toContain('nothing was sent');
      expect(await counter(topic)).toBe(before);

      process.kill(brokerPid, 'SIGCONT');
      const retry = await api.produce(event({ 'Idempotency-Key': key }));
      expect(retry.statusCode).toBe(200);
      expect(reportLines(retry)[0]).toMatchObject({ error_code: 200, seq: 2 });
      const again = await api.produce(event({ 'Idempotency-Key': key }));
      expect(again.body).toBe(retry.body);
      const lambdaRetry = await api.produce(event({ 'Idempotency-Key': lambdaKey }));
      expect(reportLines(lambdaRetry)[0]).toMatchObject({ error_code: 200, seq: 3 });

      // The log holds seq 1 once and seqs 2 and 3 once or twice (the paused sends may have
      // landed too): every copy carries the same seq, so the audit can tell it is the same record.
      expect(await ledger(2)).toMatchObject({
        status: 'ACKED',
        offset: String(reportLines(retry)[0]?.offset),
      });
      const total = Number(reportLines(lambdaRetry)[0]?.offset) + 1;
      const kafka = new Kafka({ brokers: [stack.kafkaBrokers], logLevel: logLevel.NOTHING });
      const records = await readBack(topic, total, 30_000, kafka);
      const seqs = records.map((r) => headerText(r.headers, 'tally.seq'));
      const copies = (seq: string) => seqs.filter((s) => s === seq).length;
      expect(copies('1')).toBe(1);
      expect([1, 2]).toContain(copies('2'));
      expect(cutOutcome === 'UNKNOWN' ? [1, 2] : [1]).toContain(copies('3'));
      expect(seqs.filter((s) => s === undefined || !['1', '2', '3'].includes(s))).toEqual([]);

      // The audit explains it: nothing lost, no UNKNOWN left, and a seq twice is a producer-side
      // duplicate naming both copies and their sessions.
      const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
      const audited = await auditNow(
        httpEvent({ pathParameters: { cluster_id: clusterId }, body: JSON.stringify({ topic }) }),
        lambdaContext(),
      );
      expect(audited.statusCode, audited.body).toBe(200);
      const findings = (JSON.parse(audited.body ?? '{}') as AuditReport).streams.find(
        (s) => s.stream === topic,
      );
      expect(findings).toMatchObject({ lost: [], unknownAbsent: [] });
      const twice = ['2', '3'].filter((seq) => copies(seq) === 2).map(Number);
      expect(findings?.producerDuplicates.map((d) => [d.seq, d.times])).toEqual(
        twice.map((seq) => [seq, 2]),
      );
      for (const duplicate of findings?.producerDuplicates ?? []) {
        expect(duplicate.copies).toHaveLength(2);
        expect(new Set(duplicate.copies.map((c) => c.session)).size).toBe(2);
      }
    });
  });
});
