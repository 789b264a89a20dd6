import type { MSKEvent, MSKRecord } from 'aws-lambda';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { MskBatchResponse } from '../../functions/consumer/tally-once.js';
import type { BucketRow } from '../../functions/core/audit/stream-audit.js';
import type { ReceiptBatch } from '../../functions/core/receipts/msk-receipts.js';
import { auditNow, resend } from '../helpers/audit-client.js';
import { lambdaContext } from '../helpers/http-event.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { mskRecord } from '../helpers/msk-event.js';
import {
  createTopic,
  headerText,
  loadHandlers,
  produceEvent,
  type ReadRecord,
  readBack,
} from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The example MSK-triggered consumer with the once guard, fed from the real broker the way
// Lambda's event source mapping does it: from the group's committed offsets, in batches per
// partition, committing past what the partial batch response did not report failed. Effects are
// counted per (group, seq): the guard holds when every seq acts exactly once per group.

type Handler = (event: MSKEvent, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;

describe('once guard (example consumer, real broker)', () => {
  const admin: Admin = testKafka('tally-test-once').admin();
  let group: string;

  beforeAll(async () => {
    group = uniqueName('once');
    await usePublishEnv({ TALLY_RECEIPTS_GROUP: group, TALLY_ONCE_CLAIM_SECONDS: '2' });
    await admin.connect();
  });
  afterAll(() => admin.disconnect());

  async function publish(topic: string, count: number): Promise<void> {
    const api = await loadHandlers();
    for (let i = 0; i < count; i += 50) {
      const body = Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        JSON.stringify({
          key: { type: 'STRING', data: `k${(i + j) % 7}` },
          value: { type: 'STRING', data: `v${i + j}` },
        }),
      ).join('');
      expect((await api.produce(produceEvent(topic, body))).statusCode).toBe(200);
    }
  }

  /** Lambda's event source mapping for one group, on the broker's committed offsets. */
  async function deliver(handler: Handler, groupId: string, topic: string, log: ReadRecord[]) {
    let delivered = 0;
    for (let round = 0; round < 40; round++) {
      const committed = new Map(
        (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions.map((p) => [
          p.partition,
          Math.max(0, Number(p.offset)),
        ]),
      );
      const batch: Record<string, MSKRecord[]> = {};
      for (const r of log) {
        if (Number(r.offset) < (committed.get(r.partition) ?? 0)) continue;
        const list = batch[`${topic}-${r.partition}`] ?? [];
        if (list.length < 25) list.push(mskRecord(topic, r));
        batch[`${topic}-${r.partition}`] = list;
      }
      if (Object.keys(batch).length === 0) return delivered;
      for (const list of Object.values(batch)) list.sort((a, b) => a.offset - b.offset);
      delivered += Object.values(batch).flat().length;
      const event: MSKEvent = {
        eventSource: 'aws:kafka',
        eventSourceArn: 'arn:aws:kafka:eu-west-1:123456789012:cluster/local/1',
        bootstrapServers: inject('kafkaBrokers'),
        records: batch,
      };
      let response: MskBatchResponse | undefined;
      try {
        response = (await handler(event, lambdaContext())) as MskBatchResponse;
      } catch {
        continue; // A failed invocation: the whole batch comes again.
      }
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const partitions = Object.values(batch).map((list) => {
        const first = list.find((r) => failed.has(`${topic}-${r.partition}-${r.offset}`));
        const last = list[list.length - 1] as MSKRecord;
        return { partition: last.partition, offset: String(first?.offset ?? last.offset + 1) };
      });
      await setOffsets({ groupId, topic, partitions });
    }
    return delivered; // Not caught up: the caller waits (a claim to lapse) and delivers again.
  }

  /** The example's handler for `groupId`, counting effects per seq. */
  async function consumer(
    groupId: string,
    effects: Map<string, number>,
    fail?: (r: MSKRecord) => boolean,
  ) {
    const { downstreamHandler } = await import('../../functions/downstream-example/handler.js');
    return downstreamHandler(async (record) => {
      if (fail?.(record)) throw new Error('crashed mid-batch');
      const seq = Buffer.from(
        record.headers.find((h) => h['tally.seq'])?.['tally.seq'] ?? [],
      ).toString();
      effects.set(`${groupId}/${seq}`, (effects.get(`${groupId}/${seq}`) ?? 0) + 1);
    }, groupId) as Handler;
  }

  async function receipts(groupId: string, stream: string): Promise<ReceiptBatch[]> {
    const { receiptsRuntime } = await import('../../functions/receipts/runtime.js');
    const batches: ReceiptBatch[] = [];
    await (await receiptsRuntime()).store.forEachBatch(groupId, stream, (b) => batches.push(b));
    return batches;
  }
  const seqCount = (runs: ReadonlyArray<readonly [number, number]> | undefined) =>
    (runs ?? []).reduce((sum, [from, to]) => sum + to - from + 1, 0);

  it('acts once on a producer-side duplicate: the same seq re-sent by a new session', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, 5);
    const [third] = (await readBack(topic, 5)).filter(
      (r) => headerText(r.headers, 'tally.seq') === '3',
    );
    // What a retry from another producer session writes: the record again, its tally.* kept.
    await resend(testKafka('tally-test-once-resend'), topic, third, 'a-new-session');
    const log = await readBack(topic, 6);
    const effects = new Map<string, number>();
    const groupId = uniqueName('dup');
    expect(await deliver(await consumer(groupId, effects), groupId, topic, log)).toBe(6);
    expect([...effects.values()]).toEqual([1, 1, 1, 1, 1]);
    const stored = await receipts(groupId, topic);
    expect(stored.reduce((n, b) => n + seqCount(b.seqs), 0)).toBe(5);
    expect(stored.flatMap((b) => b.suppressed ?? [])).toEqual([[3, 3]]);
  });

  it('a group rewound by 60 records gets 60 again and acts on none of them twice', async () => {
    const topic = await createTopic(admin, 1);
    await publish(topic, 100);
    const log = await readBack(topic, 100);
    const effects = new Map<string, number>();
    const groupId = uniqueName('rewind');
    const handler = await consumer(groupId, effects);
    expect(await deliver(handler, groupId, topic, log)).toBe(100);
    await setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '40' }] });
    expect(await deliver(handler, groupId, topic, log)).toBe(60);
    expect(effects.size).toBe(100);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    const stored = await receipts(groupId, topic);
    expect(stored.reduce((n, b) => n + seqCount(b.suppressed), 0)).toBe(60);
    expect(stored.reduce((n, b) => n + seqCount(b.seqs), 0)).toBe(100);
    // The audit says it per group: redelivered 60, suppressed 60, acted twice 0.
    const [stream] = (await auditNow(topic, [groupId])).streams;
    const total = (pick: (b: BucketRow) => Readonly<Record<string, number>> | undefined) =>
      (stream?.buckets ?? []).reduce((n, b) => n + (pick(b)?.[groupId] ?? 0), 0);
    expect(total((b) => b.processed)).toBe(100);
    expect(total((b) => b.redelivered)).toBe(60);
    expect(total((b) => b.suppressed)).toBe(60);
    expect(total((b) => b.actedTwice)).toBe(0);
  });

  it('a handler that crashes mid-batch, or whose container dies holding a claim, is retried: every record acts exactly once', async () => {
    const topic = await createTopic(admin, 3);
    await publish(topic, 90);
    const log = await readBack(topic, 90);
    const effects = new Map<string, number>();
    const groupId = uniqueName('crash');
    // A container that claimed one record and died before marking it done: its claim lapses.
    const victim = log.find((r) => r.partition === 1 && Number(r.offset) === 3) as ReadRecord;
    const { onceStore } = await import('../../functions/consumer/once-store-runtime.js');
    expect(
      await (await onceStore()).claim(
        { group: groupId, stream: topic, seq: Number(headerText(victim.headers, 'tally.seq')) },
        { token: 'dead', lane: `${topic}-1`, expiresAt: Date.now() + 1500, now: Date.now() },
      ),
    ).toBe('claimed');
    let crashes = 0;
    // The 13th record of partition 0 crashes the handler the first time it is acted on.
    const handler = await consumer(groupId, effects, (r) => {
      const crash = r.partition === 0 && r.offset === 12 && crashes === 0;
      if (crash) crashes++;
      return crash;
    });
    const started = Date.now();
    let delivered = await deliver(handler, groupId, topic, log);
    // Partition 1 waits for the dead claim to lapse; its records come again after.
    while (effects.size < 90 && Date.now() - started < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      delivered += await deliver(handler, groupId, topic, log);
    }
    expect(crashes).toBe(1);
    expect(delivered).toBeGreaterThan(90);
    expect(effects.size).toBe(90);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });

  it('two consumers of different groups each act once', async () => {
    const topic = await createTopic(admin, 2);
    await publish(topic, 40);
    const log = await readBack(topic, 40);
    const effects = new Map<string, number>();
    const [a, b] = [uniqueName('group-a'), uniqueName('group-b')];
    const [first, second] = [await consumer(a, effects), await consumer(b, effects)];
    await Promise.all([deliver(first, a, topic, log), deliver(second, b, topic, log)]);
    // Both groups rewound to the start: every record comes again to each, none acts again.
    for (const groupId of [a, b])
      await setOffsets({
        groupId,
        topic,
        partitions: [0, 1].map((partition) => ({ partition, offset: '0' })),
      });
    expect(await deliver(first, a, topic, log)).toBe(40);
    expect(await deliver(second, b, topic, log)).toBe(40);
    expect(effects.size).toBe(80);
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });
});
