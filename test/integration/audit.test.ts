import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createLedger } from '../../functions/adapters/dynamodb/ledger.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import { auditNow, resend as resendAs } from '../helpers/audit-client.js';
import {
  type DynamoDbCall,
  type DynamoDbProxy,
  startDynamoDbProxy,
} from '../helpers/dynamodb-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  type ReadRecord,
  readBack,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { seqFates } from '../helpers/seq-fates.js';
import { uniqueName } from '../helpers/unique-name.js';

// Each situation is created for real on the local broker; the report must name it and its layer.
// Both ways publish runs: ledger first (TALLY_AUDIT_HORIZON_SECONDS=0, no leases: every seq is
// judged at once) and the default fast path (a 5-minute horizon, seqs leased per container, the
// ledger written after the send: a lease's unused rest is a hole the audit leaves unjudged, and
// an UNKNOWN absent from the log stays UNKNOWN, until the horizon has passed).
describe.each([
  ['ledger first', true],
  ['on the default fast path', false],
])('audit, %s', (_mode, ledgerFirst: boolean) => {
  const kafka = testKafka('tally-test-audit');
  const admin: Admin = kafka.admin();
  let env: Record<string, string>;
  let api: Awaited<ReturnType<typeof loadHandlers>>;
  const audit = auditNow;
  const resend = (topic: string, record: ReadRecord | undefined, session: string) =>
    resendAs(kafka, topic, record, session);

  let proxy: DynamoDbProxy;

  beforeAll(async () => {
    // Through a proxy that passes every call on, so that one test can hold the checkpoint writes.
    proxy = await startDynamoDbProxy(inject('dynamodbEndpoint'));
    delete process.env.TALLY_AUDIT_HORIZON_SECONDS;
    env = await usePublishEnv({
      ...(ledgerFirst && { TALLY_AUDIT_HORIZON_SECONDS: '0' }),
      DYNAMODB_ENDPOINT: proxy.endpoint,
    });
    await admin.connect();
    // The audit's handlers too are imported after this: each mode reads its own configuration.
    vi.resetModules();
    api = await loadHandlers();
  });
  afterAll(async () => {
    await admin.disconnect();
    await proxy?.close();
  });

  const publish = async (topic: string, values: string[]) => {
    const body = values.map((v) => JSON.stringify({ value: { type: 'STRING', data: v } })).join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
  };

  it('finds nothing wrong when ledger, log and receipts agree', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c']);
    const report = await audit(topic);
    expect(report.scanned).toBe(3);
    expect(report.streams).toEqual([
      expect.objectContaining({
        stream: topic,
        produced: 3,
        inLog: 3,
        producerDuplicates: [],
        lost: [],
        // A container's first request to a stream leases nothing beyond its own seqs: no hole.
        allocated: 3,
        void: 0,
        unrecorded: [],
      }),
    ]);
    // Written after the send on the fast path, before it ledger first: one fate each, ACKED.
    expect((await seqFates(inject('dynamodbEndpoint'), topic)).fates).toEqual([
      ['ACKED'],
      ['ACKED'],
      ['ACKED'],
    ]);
  });

  it('names a cross-session duplicate with both offsets and both sessions (producer side)', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b']);
    const [first] = await readBack(topic, 1);
    await resend(topic, first, 's-retry');
    const report = await audit(topic);
    const findings = report.streams.find((s) => s.stream === topic);
    expect(findings?.producerDuplicates).toEqual([
      {
        seq: Number(headerText(first?.headers, 'tally.seq')),
        times: 2,
        copies: [
          { partition: 0, offset: 0, session: headerText(first?.headers, 'tally.session') },
          { partition: 0, offset: 2, session: 's-retry' },
        ],
      },
    ]);
  });

  it('names a group that processed records twice (consumer side), linked to the rewind reconcile saw', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c', 'd']);
    const group = uniqueName('downstream');
    // The group committed up to 3, then its offset was reset to 1: reconcile records a REWIND.
    const reconcile = (await import('../../functions/reconcile/task-handler.js')).handler;
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '3' }] });
    await reconcile({}, lambdaContext());
    await setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }] });
    await reconcile({}, lambdaContext());
    // …and it processed seqs 2..3 again.
    const { handler } = await import('../../functions/receipts/http-handler.js');
    const receipt = async (seqs: number[][]) =>
      handler(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId') },
          body: JSON.stringify({ group, stream: topic, seqs }),
        }),
        lambdaContext(),
      );
    await receipt([[1, 3]]);
    await receipt([[2, 3]]);
    const findings = (await audit(topic, [group])).streams.find((s) => s.stream === topic);
    expect(findings?.consumerDuplicates).toEqual([
      {
        group,
        from: 2,
        to: 3,
        times: 2,
        reconcileEvents: [
          expect.objectContaining({
            partition: 0,
            status: 'REWIND',
            detail: { from: 3, to: 1, recordsToReconsume: 2 },
          }),
        ],
      },
    ]);
    expect(findings?.pending).toEqual([{ group, from: 4, to: 4 }]);
    expect(findings?.processed).toEqual({ [group]: 3 });
  });

  it('names records acknowledged but gone from the log as lost', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c', 'd', 'e']);
    await admin.fetchTopicOffsets(topic);
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] });
    const findings = (await audit(topic)).streams.find((s) => s.stream === topic);
    expect(findings?.lost).toEqual([
      {
        from: 1,
        to: 2,
        acked: { partition: 0, offset: 0 },
        ackedEach: [
          { seq: 1, partition: 0, offset: 0 },
          { seq: 2, partition: 0, offset: 1 },
        ],
      },
    ]);
    expect(findings?.inLog).toBe(3);
  });

  it('settles UNKNOWN outcomes both ways in the ledger, so the lookup answers', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b']);
    // The ledger says seqs 1..3 have unknown outcomes: 1 and 2 are in the log, 3 is not.
    const documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    const ledger = createLedger(documents, env.TALLY_LEDGER_TABLE as string);
    const unknown = { status: 'UNKNOWN' as const, message: 'no answer in time' };
    await ledger.write({
      stream: topic,
      firstSeq: 1,
      topic,
      session: 's-x',
      idempotencyKey: undefined,
      outcomes: [unknown, unknown],
    });
    await ledger.write({
      stream: topic,
      firstSeq: 3,
      topic,
      session: 's-x',
      idempotencyKey: undefined,
      outcomes: [unknown],
    });
    const report = await audit(topic);
    // Landed is settled at once. Absent is settled only past the horizon: with a horizon of 0 at
    // once; on the default fast path (5 minutes) seq 3 stays UNKNOWN, named as absent, since the
    // request that wrote it may still be sending it.
    expect(report.settled).toEqual({ landed: 2, notWritten: ledgerFirst ? 1 : 0 });
    const lookup = async (seq: number) =>
      JSON.parse(
        (
          await api.lookup(
            httpEvent({
              pathParameters: { cluster_id: inject('kafkaClusterId') },
              query: { stream: topic, seq: String(seq) },
            }),
          )
        ).body,
      ).records[0];
    expect(await lookup(2)).toMatchObject({ outcome: 'ACKED', partition_id: 0, offset: 1 });
    if (ledgerFirst) {
      expect(await lookup(3)).toMatchObject({ outcome: 'NOT_SENT' });
    } else {
      expect((await ledger.find(topic, 3))?.outcomes).toEqual([unknown]);
      expect(report.streams.find((s) => s.stream === topic)?.unknownAbsent).toEqual([[3, 3]]);
    }
    documents.destroy();
  });

  it('resumes from its checkpoint: a second run reads only the new records', async () => {
    const topic = await createTopic(admin, 2);
    await publish(topic, ['a', 'b', 'c']);
    const first = await audit(topic);
    expect(first).toMatchObject({ complete: true, scanned: 3, scannedTotal: 3 });
    await publish(topic, ['d', 'e']);
    const second = await audit(topic);
    expect(second).toMatchObject({ complete: true, scanned: 2, scannedTotal: 5 });
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(second.checkpoint).toEqual(
      expect.arrayContaining(
        offsets.map((o) => ({ partition: o.partition, next: Number(o.high) })),
      ),
    );
    const findings = second.streams.find((s) => s.stream === topic);
    expect(findings).toMatchObject({ produced: 5, inLog: 5, lost: [], producerDuplicates: [] });
    // The second request of the container: on the fast path it leased seqs beyond its own (about
    // the demand of the last second), and their rest is a hole the audit leaves unrecorded within
    // the horizon (the container may still use it), never VOID early. Ledger first: none.
    const { allocated, fates } = await seqFates(inject('dynamodbEndpoint'), topic);
    expect(fates.slice(0, 5)).toEqual(fates.slice(0, 5).map(() => ['ACKED']));
    expect(fates.slice(5)).toEqual(fates.slice(5).map(() => []));
    if (ledgerFirst) expect(allocated).toBe(5);
    else expect(allocated).toBeGreaterThan(5);
    expect(findings).toMatchObject({
      allocated,
      void: 0,
      voidedNow: 0,
      unrecorded: allocated > 5 ? [[6, allocated]] : [],
    });
    const buckets = findings?.buckets ?? [];
    expect(buckets.reduce((sum, b) => sum + b.inLog, 0)).toBe(5);
    expect(buckets.reduce((sum, b) => sum + b.produced, 0)).toBe(5);
    expect((await audit(topic)).scanned).toBe(0);
  });

  it('sets count-only receipts beside the records the log holds in their time bucket', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c']);
    const group = uniqueName('counter');
    const bucket = new Date(Math.floor(Date.now() / 300_000) * 300_000);
    const { handler } = await import('../../functions/receipts/http-handler.js');
    const posted = await handler(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        body: JSON.stringify({
          group,
          topic,
          buckets: [
            {
              start: bucket.toISOString(),
              end: new Date(bucket.getTime() + 300_000).toISOString(),
              count: 2,
            },
          ],
        }),
      }),
      lambdaContext(),
    );
    expect(posted.statusCode).toBe(202);
    const report = await audit(topic, [group]);
    const row = report.topicBuckets.find((b) => b.start === bucket.toISOString());
    // Unless the records were stamped in the previous bucket (a boundary crossed mid-test).
    const inLog = report.topicBuckets.reduce((sum, b) => sum + b.inLog, 0);
    expect(inLog).toBe(3);
    expect(row?.counted).toEqual({ [group]: 2 });
  });

  it('names the earlier copy of a duplicate a previous run read, by re-reading where it lies', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c']);
    expect((await audit(topic)).scanned).toBe(3);
    const [first] = await readBack(topic, 1);
    await resend(topic, first, 's-late-retry');
    const report = await audit(topic);
    expect(report.scanned).toBe(1);
    expect(report.streams.find((s) => s.stream === topic)?.producerDuplicates).toEqual([
      {
        seq: Number(headerText(first?.headers, 'tally.seq')),
        times: 2,
        copies: [
          { partition: 0, offset: 0, session: headerText(first?.headers, 'tally.session') },
          { partition: 0, offset: 3, session: 's-late-retry' },
        ],
      },
    ]);
    expect(report.timingsMs?.lookup).toBeGreaterThan(0);
  });

  it('stops at a checkpoint when out of time, judging nothing lost, and the next run continues', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c']);
    // 2 s left in the invocation: all of it is kept for comparing and saving, none for reading.
    const cut = await audit(topic, undefined, 2000);
    expect(cut).toMatchObject({ complete: false, scanned: 0 });
    expect(cut.streams.find((s) => s.stream === topic)).toMatchObject({ produced: 3, lost: [] });
    const next = await audit(topic);
    expect(next).toMatchObject({ complete: true, scanned: 3, scannedTotal: 3 });
    expect(next.streams.find((s) => s.stream === topic)).toMatchObject({ inLog: 3, lost: [] });
  });

  it('answers 404 at once for a topic that does not exist (retrying cannot help)', async () => {
    const { handler } = await import('../../functions/audit/http-handler.js');
    const started = Date.now();
    const response = (await handler(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        body: JSON.stringify({ topic: uniqueName('no-such-topic') }),
      }),
      lambdaContext(),
    )) as { statusCode: number; body: string };
    expect(Date.now() - started).toBeLessThan(3000);
    expect(response.statusCode, response.body).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error_code: 404, retriable: false });
  });

  it('lets only one of several audits of a topic at once save its checkpoint; the rest answer 409', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, ['a', 'b', 'c']);
    const { handler } = await import('../../functions/audit/http-handler.js');
    const run = () =>
      handler(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId') },
          body: JSON.stringify({ topic }),
        }),
        lambdaContext(),
      ) as Promise<{ statusCode: number; body: string }>;
    // Truly at once: no checkpoint write reaches DynamoDB before all three runs have read the
    // checkpoint, so all three read the same version and only the conditional write can stop
    // two of them (three 200s here would mean two findings lost).
    const checkpoint = (operation: string) => (call: DynamoDbCall) =>
      call.operation === operation &&
      call.table === env.TALLY_AUDITS_TABLE &&
      JSON.stringify(call.input).includes(`"checkpoint#${topic}"`);
    proxy.holdUntil(checkpoint('PutItem'), proxy.answered(checkpoint('GetItem'), 3));
    const answers = await Promise.all([run(), run(), run()]);
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses, answers.map((a) => a.body).join('\n')).toEqual([200, 409, 409]);
    for (const conflict of answers.filter((a) => a.statusCode === 409)) {
      expect(JSON.parse(conflict.body)).toMatchObject({ error_code: 409, retriable: true });
      expect(JSON.parse(conflict.body).message).toContain('saved its checkpoint first');
    }
    expect(proxy.calls.filter(checkpoint('PutItem'))).toHaveLength(3);
    // The checkpoint one of them saved is whole: the next run reads nothing again.
    const next = await audit(topic);
    expect(next).toMatchObject({ complete: true, scanned: 0, scannedTotal: 3 });
    expect(next.streams.find((s) => s.stream === topic)).toMatchObject({
      inLog: 3,
      producerDuplicates: [],
    });
  });
});
