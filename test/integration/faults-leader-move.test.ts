import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel, type Producer, type ProducerConfig } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaClient } from '../../functions/adapters/kafka/client.js';
import { createRecordSender } from '../../functions/adapters/kafka/record-sender.js';
import type { OutgoingRecord } from '../../functions/core/publish/ports.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import type { RecordOutcome } from '../../functions/core/shared/outcomes.js';
import { type KafkaCluster, startKafkaCluster } from '../../infra/local/kafka-cluster.js';
import { headerText, readBack, totalRecords } from '../helpers/publish-client.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 16, seed 1, replayed on purpose on three brokers: one request's records go to two
// partitions led by two brokers. Broker 2 (partition 0's leader) writes its batch and answers;
// broker 3 (partition 1's leader) is paused and does not. Then broker 2 dies and partition 0 moves
// to broker 1; broker 3 is fenced and partition 1 moves there too; then broker 3 is killed, so
// its request fails and the send is retried within the same producer session.
//
// kafkajs 2.2.4 retried such a send whole, regrouped by the new leaders: partition 0's batch went
// to broker 1 under new sequence numbers and was appended a second time — the same seq twice in
// one producer session. Tally now sends each broker its own kafkajs send and never lets an
// attempt go to another broker (adapters/kafka/leader-guard.ts): partition 0 is not sent again,
// and partition 1 goes to its new leader under the sequence numbers it was first sent with.

const CONTROLLER = 1; // the one KRaft controller: it stays up
const WRITER = 2; // leads partition 0, answers, then dies
const STALLED = 3; // leads partition 1, paused, then killed

describe('a partition moves between a partial answer and the retry', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'tally-leader-move-'));
  let cluster: KafkaCluster;
  let admin: Admin;

  beforeAll(async () => {
    cluster = await startKafkaCluster(join(workDir, 'kafka'), {
      nodes: 3,
      controllers: 1,
      heap: '256m',
    });
    // A node that exits by itself while the cluster first starts (on a shared machine: a port
    // taken between its choice and the broker's bind) is started again, as the chaos run does.
    await cluster.waitUntilServing(120_000, (id) =>
      console.warn(`kafka node ${id} exited while the cluster started: started again`),
    );
    // Only the node that stays up: the admin never waits on a paused or dead broker.
    admin = new Kafka({
      clientId: 'tally-test-leader-move',
      brokers: [cluster.node(CONTROLLER).bootstrap],
      logLevel: logLevel.NOTHING,
      requestTimeout: 3000,
    }).admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.disconnect().catch(() => {});
    await cluster?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  const leaders = async (topic: string) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return new Map((topics[0]?.partitions ?? []).map((p) => [p.partitionId, p.leader]));
  };

  it('sends no partition twice in one session, and loses none', async () => {
    const topic = uniqueName('leader-move');
    await createTopicsEverywhere(admin, [
      {
        topic,
        replicaAssignment: [
          { partition: 0, replicas: [WRITER, CONTROLLER] },
          { partition: 1, replicas: [STALLED, CONTROLLER] },
        ],
        // Broker 1 alone may take writes once the others are gone.
        configEntries: [{ name: 'min.insync.replicas', value: '1' }],
      },
    ]);
    expect(await leaders(topic)).toEqual(
      new Map([
        [0, WRITER],
        [1, STALLED],
      ]),
    );

    // Produce answers from the writer, counted from the producer's own instrumentation.
    const writer = cluster.node(WRITER).bootstrap;
    let answers = 0;
    let answered: () => void = () => {};
    const kafka = createKafkaClient({
      clientId: 'tally-test-leader-move',
      connection: {
        brokers: [cluster.node(CONTROLLER).bootstrap],
        tls: false,
        auth: { mechanism: 'none' },
      },
      requestTimeoutMs: 60_000,
      log: () => {},
    });
    const watched = {
      producer(config: ProducerConfig): Producer {
        const producer = kafka.producer(config);
        producer.on(producer.events.REQUEST, ({ payload }) => {
          if (payload.apiName !== 'Produce' || payload.broker !== writer) return;
          answers++;
          answered();
        });
        return producer;
      },
    } as unknown as Kafka;
    const sender = createRecordSender(watched, {
      retries: 5,
      requestTimeoutMs: 60_000,
      maxBatchBytes: async () => 1_048_588,
      log: () => {},
    });
    let seq = 0;
    const records = (...partitions: number[]): OutgoingRecord[] =>
      partitions.map((partition) => {
        seq++;
        return {
          partition,
          key: null,
          value: Buffer.from(`value ${seq}`),
          headers: { 'tally.stream': Buffer.from(topic), 'tally.seq': Buffer.from(String(seq)) },
          timestamp: Date.now(),
        };
      });

    try {
      // A warm session that knows both leaders.
      const warm = await sender.send(topic, records(0, 1), new Deadline(Date.now() + 30_000));
      expect(warm.outcomes.map((o) => o.status)).toEqual(['ACKED', 'ACKED']);

      cluster.pause(STALLED);
      const before = answers;
      const writerAnswered = new Promise<void>((resolve) => {
        answered = () => {
          if (answers > before) resolve();
        };
      });
      const sending = sender.send(
        topic,
        records(0, 1, 0, 1, 0, 1),
        new Deadline(Date.now() + 90_000),
      );
      await writerAnswered;
      await cluster.kill(WRITER);
      // Both partitions are led by broker 1 once the writer is gone and the stalled broker fenced
      // (broker.session.timeout.ms=6000).
      const movedBy = Date.now() + 60_000;
      for (;;) {
        const now = await leaders(topic).catch(() => new Map<number, number>());
        if (now.get(0) === CONTROLLER && now.get(1) === CONTROLLER) break;
        expect(Date.now(), `leaders: ${JSON.stringify([...now])}`).toBeLessThan(movedBy);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // The paused broker's connection breaks: its request fails, and the send is retried.
      await cluster.kill(STALLED);
      const sent = await sending;

      // Partition 0 was answered before any fault; partition 1 is written or unknown, never lost.
      const statuses = sent.outcomes.map((o) => o.status);
      expect([statuses[0], statuses[2], statuses[4]]).toEqual(['ACKED', 'ACKED', 'ACKED']);
      for (const status of [statuses[1], statuses[3], statuses[5]]) {
        expect(['ACKED', 'UNKNOWN']).toContain(status);
      }

      // Read the log back with every broker up (a consumer group needs __consumer_offsets).
      await cluster.start(WRITER);
      await cluster.start(STALLED);
      await cluster.waitUntilServing(120_000);
      const total = await totalRecords(admin, topic);
      const reader = new Kafka({
        clientId: 'tally-test-leader-move-reader',
        brokers: cluster.bootstrap.split(','),
        logLevel: logLevel.NOTHING,
      });
      const log = await readBack(topic, total, 60_000, reader);
      const copies = new Map<string, Array<{ partition: number; offset: string }>>();
      for (const record of log) {
        const key = `${headerText(record.headers, 'tally.seq')}`;
        copies.set(key, [
          ...(copies.get(key) ?? []),
          { partition: record.partition, offset: record.offset },
        ]);
      }
      const twice = [...copies].filter(([, list]) => list.length > 1);
      expect(twice, 'seqs in the log more than once (one producer session)').toEqual([]);
      // Every ACKED record is in the log at its offset; an UNKNOWN one at most once (above).
      sent.outcomes.forEach((outcome: RecordOutcome, i) => {
        if (outcome.status !== 'ACKED') return;
        expect(copies.get(String(seq - 5 + i))).toEqual([
          { partition: outcome.partition, offset: outcome.offset },
        ]);
      });
      console.info(
        `leader move between a partial answer and the retry: outcomes ${statuses.join(' ')}; log ${total} records, ${twice.length} seqs twice`,
      );
    } finally {
      await sender.close().catch(() => {});
    }
  });
});
