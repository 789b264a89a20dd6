import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { tableEnvironment } from '../../infra/local/local-tables.js';
import { type LocalStack, startLocalStack } from '../../infra/local/stack.js';
import { httpEvent, lambdaContext, testAuthEnv } from '../helpers/http-event.js';
import { loadHandlers, reportLines } from '../helpers/publish-client.js';
import { expectOneFateEach, seqFates } from '../helpers/seq-fates.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// DynamoDB stopped (its process paused with SIGSTOP) while Kafka is fine: publish refuses with
// 503 before sending anything (no record without a sequence number), reconcile and audit fail
// loudly, and once DynamoDB is back the next runs work on state nothing corrupted, and every seq
// has one fate: no hole the audit cannot explain.
// A stack of its own: pausing the shared DynamoDB API would stall other test files. Both ways
// publish runs: ledger first (TALLY_AUDIT_HORIZON_SECONDS=0, no leases) and the default fast
// path (a warm container's leased seqs, the ledger written after the send).
describe('DynamoDB stopped', () => {
  let stack: LocalStack;
  let dynamoPid: number;

  beforeAll(async () => {
    stack = await startLocalStack({ env: {}, tablePrefix: `${uniqueName('ddbfault')}-` });
    dynamoPid = stack.processes.find((p) => /dynamo/i.test(p.name))?.pid as number;
    expect(dynamoPid).toBeTypeOf('number');
    Object.assign(process.env, {
      KAFKA_BROKERS: stack.kafkaBrokers,
      DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
      ...tableEnvironment(stack.tables),
      ...testAuthEnv(),
      TALLY_DYNAMODB_TIMEOUT_MS: '500',
    });
  });

  afterAll(async () => {
    if (dynamoPid) process.kill(dynamoPid, 'SIGCONT');
    await stack?.stop();
  });

  describe.each([
    ['ledger first', true],
    ['on the default fast path', false],
  ])('%s', (_mode, ledgerFirst: boolean) => {
    let topic: string;
    let kafka: Kafka;
    let api: Awaited<ReturnType<typeof loadHandlers>>;
    const produce = () =>
      api.produce(
        httpEvent({
          pathParameters: { cluster_id: stack.kafkaClusterId, topic_name: topic },
          body: JSON.stringify({ value: { type: 'STRING', data: 'v' } }),
        }),
      );
    const highWatermark = async () => {
      const admin = kafka.admin();
      await admin.connect();
      const [offsets] = await admin.fetchTopicOffsets(topic);
      await admin.disconnect();
      return Number(offsets?.high);
    };

    beforeAll(async () => {
      if (ledgerFirst) process.env.TALLY_AUDIT_HORIZON_SECONDS = '0';
      else delete process.env.TALLY_AUDIT_HORIZON_SECONDS;
      kafka = new Kafka({ brokers: [stack.kafkaBrokers], logLevel: logLevel.NOTHING });
      topic = uniqueName('ddbfault');
      const admin = kafka.admin();
      await admin.connect();
      await createTopicsEverywhere(admin, [{ topic, numPartitions: 1 }]);
      await admin.disconnect();
      vi.resetModules();
      api = await loadHandlers();
      expect((await produce()).statusCode).toBe(200);
    });

    it('publish answers 503 before sending; reconcile and audit fail loudly; all recover after', async () => {
      const reconcile = (await import('../../functions/reconcile/task-handler.js')).handler;
      const auditTask = (await import('../../functions/audit/task-handler.js')).handler;
      const auditNow = (await import('../../functions/audit/http-handler.js')).handler;
      const before = await highWatermark();
      // A healthy audit first, so a checkpoint exists that a failed run must not damage.
      const first = (await auditTask({ topic }, lambdaContext())) as {
        audits: Array<{ scanned: number }>;
      };
      expect(first.audits[0]?.scanned).toBe(1);

      process.kill(dynamoPid, 'SIGSTOP');
      try {
        const refusedAt = performance.now();
        const refused = await produce();
        // Two attempts of TALLY_DYNAMODB_TIMEOUT_MS (500 ms) each, then the answer: not Lambda's
        // deadline (29 s here), which a stalled call once held the request to.
        expect(performance.now() - refusedAt).toBeLessThan(2500);
        expect(refused.statusCode, refused.body).toBe(503);
        expect(refused.headers['retry-after']).toBeDefined();
        expect(JSON.parse(refused.body).message).toMatch(/DynamoDB|nothing was sent/);
        expect(await highWatermark()).toBe(before); // nothing reached Kafka
        await expect(reconcile({}, lambdaContext())).rejects.toMatchObject({
          name: 'DependencyUnavailableError',
        });
        await expect(auditTask({ topic }, lambdaContext())).rejects.toMatchObject({
          name: 'DependencyUnavailableError',
        });
      } finally {
        process.kill(dynamoPid, 'SIGCONT');
      }

      // Back: publishing continues with the next seq, reconcile runs, and the audit resumes from
      // its checkpoint and finds every record once, nothing lost.
      const after = await produce();
      expect(after.statusCode).toBe(200);
      // The refused request's allocation may still have been applied when DynamoDB woke up (its
      // attempts were queued): those seqs were never sent, and are never reused.
      const [published] = reportLines(after);
      expect(published).toMatchObject({ error_code: 200 });
      expect(published?.seq).toBeGreaterThanOrEqual(2);
      await expect(reconcile({}, lambdaContext())).resolves.toMatchObject({ complete: true });
      const response = await auditNow(
        httpEvent({
          pathParameters: { cluster_id: stack.kafkaClusterId },
          body: JSON.stringify({ topic }),
        }),
        lambdaContext(),
      );
      expect(response.statusCode, response.body).toBe(200);
      const report = JSON.parse(response.body ?? '{}') as AuditReport;
      expect(report).toMatchObject({ complete: true, scanned: 1, scannedTotal: 2 });
      if (!ledgerFirst) {
        // Within the default horizon (5 min) the audit leaves the lease's unused seqs unrecorded;
        // none has two fates, and the two records are ACKED once each.
        const { fates } = await seqFates(stack.dynamodbEndpoint, topic);
        expect(fates.filter((f) => f.length > 1)).toEqual([]);
        expect(fates.filter((f) => f[0] === 'ACKED')).toHaveLength(2);
        expect(report.streams.find((s) => s.stream === topic)).toMatchObject({
          produced: 2,
          inLog: 2,
          lost: [],
          producerDuplicates: [],
          unknownAbsent: [],
        });
        return;
      }
      // No unexplained hole: the audit (horizon 0) recorded VOID whatever was allocated and
      // never sent, so every seq up to the counter has exactly one fate.
      const fates = await expectOneFateEach(stack.dynamodbEndpoint, topic);
      expect(fates.filter((f) => f === 'ACKED')).toHaveLength(2);
      expect(fates.filter((f) => f !== 'ACKED').every((f) => f === 'VOID')).toBe(true);
      expect(report.streams.find((s) => s.stream === topic)).toMatchObject({
        produced: 2,
        inLog: 2,
        lost: [],
        producerDuplicates: [],
        unknownAbsent: [],
        allocated: fates.length,
        void: fates.length - 2,
        unrecorded: [],
      });
    });
  });
});
