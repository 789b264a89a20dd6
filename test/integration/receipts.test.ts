import type { MSKEvent, MSKRecord } from 'aws-lambda';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { mskRecord } from '../helpers/msk-event.js';
import { createTopic, loadHandlers, produceEvent, readBack } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

/** The receipt batches stored for a group and stream. */
async function storedReceipts(group: string, stream: string): Promise<ReceiptBatch[]> {
  const { receiptsRuntime } = await import('../../functions/receipts/runtime.js');
  const batches: ReceiptBatch[] = [];
  await (await receiptsRuntime()).store.forEachBatch(group, stream, (b) => batches.push(b));
  return batches;
}

// Records published through Tally, read back from the real broker and handed to the example
// downstream function in the shape Lambda's MSK event source uses; its receipts land in DynamoDB.
describe('receipts', () => {
  const admin: Admin = testKafka('tally-test-receipts').admin();
  let group: string;

  beforeAll(async () => {
    group = uniqueName('downstream');
    await usePublishEnv({ TALLY_RECEIPTS_GROUP: group });
    await admin.connect();
  });
  afterAll(() => admin.disconnect());

  it('records what an MSK-triggered function processed, and a redelivered batch as suppressed', async () => {
    const topic = await createTopic(admin, 1);
    const api = await loadHandlers();
    const body = ['a', 'b', 'c']
      .map((v) => JSON.stringify({ value: { type: 'STRING', data: v } }))
      .join('');
    expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
    const read = await readBack(topic, 3);
    const records: MSKRecord[] = read.map((r) => mskRecord(topic, r));
    const event: MSKEvent = {
      eventSource: 'aws:kafka',
      eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
      bootstrapServers: inject('kafkaBrokers'),
      records: { [`${topic}-0`]: records },
    };
    const { handler } = await import('../../functions/downstream-example/handler.js');
    expect(await handler(event, lambdaContext())).toEqual({ batchItemFailures: [] });
    expect(await handler(event, lambdaContext())).toEqual({ batchItemFailures: [] });

    // The example acts once (tallyOnce): the batch delivered again is receipted as suppressed.
    const receipts = await storedReceipts(group, topic);
    expect(receipts).toHaveLength(2);
    const common = { group, stream: topic, topic, offsets: [[0, 0, 2]], count: 3 };
    expect(receipts).toContainEqual({ ...common, seqs: [[1, 3]] });
    expect(receipts).toContainEqual({ ...common, seqs: [], suppressed: [[1, 3]] });
  });

  it('takes receipts over HTTP from consumers outside Lambda, validated like every input', async () => {
    const { handler } = await import('../../functions/receipts/http-handler.js');
    const post = async (body: unknown) =>
      (await handler(
        httpEvent({
          pathParameters: { cluster_id: inject('kafkaClusterId') },
          body: JSON.stringify(body),
        }),
        lambdaContext(),
      )) as { statusCode: number; body: string };
    const seqs = await post({
      group,
      stream: 'invoices',
      seqs: [
        [1, 10],
        [12, 12],
      ],
    });
    expect(seqs.statusCode).toBe(202);
    expect(JSON.parse(seqs.body)).toMatchObject({ accepted: 'seqs', records: 11 });
    const buckets = await post({
      group,
      topic: 'invoices',
      buckets: [{ start: '2026-11-29T10:00:00Z', end: '2026-11-29T10:01:00Z', count: 7 }],
    });
    expect(buckets.statusCode).toBe(202);
    const { receiptsRuntime } = await import('../../functions/receipts/runtime.js');
    expect(await (await receiptsRuntime()).store.counts(group, 'invoices')).toEqual([
      { start: '2026-11-29T10:00:00.000Z', end: '2026-11-29T10:01:00.000Z', count: 7 },
    ]);
    const bad = await post({ group, stream: 'invoices', seqs: [[5, 1]] });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).message).toContain('seqs[0]');
    expect(await storedReceipts(group, 'invoices')).toEqual([
      {
        group,
        stream: 'invoices',
        topic: undefined,
        seqs: [
          [1, 10],
          [12, 12],
        ],
        offsets: [],
        count: 11,
      },
    ]);
  });
});
