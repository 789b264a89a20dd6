import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createCanaryTopic } from '../../functions/adapters/kafka/canary-topic.js';
import type { AuditReport } from '../../functions/core/audit/ports.js';
import { type CanaryReport, runCanary } from '../../functions/core/canary/run-canary.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import { cleanCanaryRun } from '../helpers/canary-report.js';
import { httpEvent, lambdaContext } from '../helpers/http-event.js';
import { testKafka } from '../helpers/kafka.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { uniqueName } from '../helpers/unique-name.js';

// The canary on the real broker: its topic created on first use, records published through the
// real publish path, read back by a consumer of its own, metrics emitted; the audit of the same
// topic agrees; and the read-back names a record answered ACKED that the log does not hold.
describe('canary', () => {
  const topic = uniqueName('tally-canary');
  let run: () => Promise<{ report: CanaryReport; emf: Array<Record<string, unknown>> }>;

  beforeAll(async () => {
    await usePublishEnv({
      TALLY_CANARY_TOPIC: topic,
      TALLY_CANARY_PARTITIONS: '3',
      TALLY_CANARY_RECORDS_PER_PARTITION: '2',
    });
    vi.resetModules();
    const { handler } = await import('../../functions/canary/handler.js');
    run = async () => {
      const lines: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
        const text = String(chunk);
        if (text.startsWith('{"_aws"')) {
          lines.push(text);
          return true;
        }
        return (write as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
      }) as typeof process.stdout.write;
      try {
        const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event' };
        const report = (await handler(scheduled, lambdaContext(60_000) as Context)) as CanaryReport;
        return { report, emf: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
      } finally {
        process.stdout.write = write;
      }
    };
  });

  it('creates its topic, publishes to every partition, reads every record back, and says so', async () => {
    const first = await run();
    expect(first.report).toMatchObject({ topic, ...cleanCanaryRun(3, 2) });
    expect(first.report.publishLatencyMs?.p50).toBeGreaterThan(0);
    const metric = (name: string) => first.emf.find((blob) => name in blob)?.[name];
    expect(metric('CanaryAvailability')).toBe(100);
    expect(metric('CanaryLost')).toBe(0);
    expect(metric('CanaryDuplicated')).toBe(0);
    expect(metric('CanaryPublishLatencyP99')).toBeGreaterThan(0);

    const admin = testKafka('canary-admin').admin();
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    await admin.disconnect();
    expect(topics[0]?.partitions).toHaveLength(3);

    // The next run finds the topic and goes on numbering the same stream.
    const second = await run();
    expect(second.report).toMatchObject(cleanCanaryRun(3, 2));

    // The audit of the canary topic judges the same twelve records: nothing lost or duplicated.
    const { handler: auditNow } = await import('../../functions/audit/http-handler.js');
    const response = await auditNow(
      httpEvent({
        pathParameters: { cluster_id: inject('kafkaClusterId') },
        body: JSON.stringify({ topic }),
      }),
      lambdaContext(),
    );
    expect(response.statusCode, response.body).toBe(200);
    const audit = JSON.parse(response.body ?? '{}') as AuditReport;
    const stream = audit.streams.find((s) => s.stream === topic);
    // (Seqs the container leased and has not used yet are `unrecorded` until the horizon voids them.)
    expect(stream).toMatchObject({
      produced: 12,
      inLog: 12,
      lost: [],
      producerDuplicates: [],
      unknownAbsent: [],
    });
    expect(audit.scanned).toBe(12);
  });

  it('names a record answered ACKED that its partition does not hold, and not one it holds', async () => {
    const kafka = testKafka('canary-read-back');
    // A record of the stream written by a plain producer: answered ACKED at its real offset.
    const producer = kafka.producer();
    await producer.connect();
    const [written] = await producer.send({
      topic,
      messages: [
        {
          partition: 0,
          value: 'v',
          headers: { 'tally.stream': topic, 'tally.seq': '999003' },
        },
      ],
    });
    await producer.disconnect();
    const side = createCanaryTopic(kafka, { partitions: 3, replicationFactor: 1 });
    try {
      // Two answers the log contradicts: seq 999,001 "at" offset 0 of partition 1, where the
      // first run wrote another seq, and 999,002 past the end of partition 2.
      const answers = [
        {
          status: 'ACKED' as const,
          seq: 999_003,
          partition: 0,
          offset: Number(written?.baseOffset),
        },
        { status: 'ACKED' as const, seq: 999_001, partition: 1, offset: 0 },
        { status: 'ACKED' as const, seq: 999_002, partition: 2, offset: 10_000 },
      ];
      let i = 0;
      const report = await runCanary(
        {
          partitions: async () => 3,
          publish: async () => answers[i++] ?? { status: 'NOT_SENT' },
          readBack: side.readBack,
          now: () => performance.now(),
        },
        { topic, stream: topic, recordsPerPartition: 1 },
        new Deadline(Date.now() + 30_000),
      );
      expect(report).toMatchObject({ attempted: 3, acked: 3, readBackComplete: true });
      expect(report.lost).toEqual([999_001, 999_002]);
      expect(report.duplicated).toEqual([]);
    } finally {
      await side.close();
    }
  });

  afterAll(async () => {
    vi.resetModules();
  });
});
