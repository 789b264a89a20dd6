import fc from 'fast-check';
import type { Kafka, ProducerBatch, ProducerConfig, ProducerRecord, RecordMetadata } from 'kafkajs';
import { KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import {
  createRecordSender,
  offsetsOf,
  withSession,
} from '../../../../functions/adapters/kafka/record-sender.js';
import { SESSION_ID_MAX_BYTES } from '../../../../functions/core/publish/plan.js';
import type { OutgoingRecord } from '../../../../functions/core/publish/ports.js';
import { bodyBytes, recordBodyBytesOf } from '../../../../functions/core/publish/record-size.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { PROPERTY_SEED } from '../../../helpers/property-seed.js';

// ---------------------------------------------------------------------------------------------
// A fake kafkajs client: every producer() call makes a FakeProducer whose behaviour the test sets.

type SendBehaviour = (record: ProducerRecord) => Promise<RecordMetadata[]>;

interface ProducerBehaviour {
  connect?: () => Promise<void>;
  send?: SendBehaviour;
}

const never = <T>() => new Promise<T>(() => {});

/** Acknowledges every partition of a send at baseOffset 0 unless told otherwise. */
function acknowledge(baseOffsets: Record<number, string> = {}): SendBehaviour {
  return async (record) => {
    const partitions = [...new Set(record.messages.map((m) => m.partition ?? 0))];
    return partitions.map((partition) => ({
      topicName: record.topic,
      partition,
      errorCode: 0,
      baseOffset: baseOffsets[partition] ?? '0',
    }));
  };
}

class FakeProducer {
  readonly sent: ProducerRecord[] = [];
  readonly batches: ProducerBatch[] = [];
  readonly connect: ReturnType<typeof vi.fn<() => Promise<void>>>;
  readonly send: ReturnType<typeof vi.fn<(record: ProducerRecord) => Promise<RecordMetadata[]>>>;
  readonly sendBatch = vi.fn(async (batch: ProducerBatch) => {
    this.batches.push(batch);
    return [] as RecordMetadata[];
  });
  readonly disconnect = vi.fn(async () => {});

  constructor(
    readonly config: ProducerConfig | undefined,
    behaviour: ProducerBehaviour,
  ) {
    this.connect = vi.fn(behaviour.connect ?? (async () => {}));
    const send = behaviour.send ?? acknowledge();
    this.send = vi.fn(async (record: ProducerRecord) => {
      this.sent.push(record);
      return send(record);
    });
  }
}

class FakeKafka {
  readonly producers: FakeProducer[] = [];
  /** Behaviours for the next producers, in order; later producers get the default. */
  readonly upcoming: ProducerBehaviour[] = [];

  constructor(...behaviours: ProducerBehaviour[]) {
    this.upcoming.push(...behaviours);
  }

  producer(config?: ProducerConfig): FakeProducer {
    const producer = new FakeProducer(config, this.upcoming.shift() ?? {});
    this.producers.push(producer);
    return producer;
  }

  asKafka(): Kafka {
    return this as unknown as Kafka;
  }
}

function producerAt(kafka: FakeKafka, index: number): FakeProducer {
  const producer = kafka.producers[index];
  if (!producer) throw new Error(`no producer #${index}`);
  return producer;
}

function senderFor(kafka: FakeKafka, requestTimeoutMs = 10_000, maxBatchBytes = 1_048_588) {
  const log = vi.fn();
  const sender = createRecordSender(kafka.asKafka(), {
    retries: 3,
    requestTimeoutMs,
    maxBatchBytes: async () => maxBatchBytes,
    log,
  });
  return { sender, log };
}

function record(partition: number, text: string, timestamp = 1_700_000_000_000): OutgoingRecord {
  return {
    partition,
    key: Buffer.from(`k-${text}`),
    value: Buffer.from(text),
    headers: { 'tally.stream': Buffer.from('orders'), 'tally.seq': Buffer.from(text) },
    timestamp,
  };
}

const later = () => new Deadline(Date.now() + 10_000);

function protocolError(type: string, code: number, retriable: boolean): KafkaJSProtocolError {
  const entry = { type, code, retriable, message: `broker says ${type}` };
  return new KafkaJSProtocolError(entry as unknown as Error);
}

function statuses(outcomes: readonly RecordOutcome[]): string[] {
  return outcomes.map((outcome) => outcome.status);
}

// ---------------------------------------------------------------------------------------------

describe('createRecordSender: the producer session', () => {
  it('creates no producer until asked, then one idempotent producer reused across sends', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);

    expect(kafka.producers).toHaveLength(0);
    const session = await sender.session();
    const first = await sender.send('orders', [record(0, 'a')], later());
    const second = await sender.send('orders', [record(1, 'b')], later());
    const third = await sender.send('payments', [record(0, 'c')], later());

    expect(kafka.producers).toHaveLength(1);
    expect(session).toMatch(/^s-/);
    expect([first.session, second.session, third.session]).toEqual([session, session, session]);
    expect(await sender.session()).toBe(session);
    const producer = producerAt(kafka, 0);
    expect(producer.connect).toHaveBeenCalledTimes(1);
    expect(producer.send).toHaveBeenCalledTimes(3);
    expect(producer.config).toMatchObject({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: 3 },
    });
  });

  it('shares one producer and one connect among concurrent first sends', async () => {
    let connected = () => {};
    const kafka = new FakeKafka({
      connect: () =>
        new Promise<void>((resolve) => {
          connected = resolve;
        }),
    });
    const { sender } = senderFor(kafka);

    const sends = Array.from({ length: 10 }, (_, i) =>
      sender.send('orders', [record(i % 3, `r${i}`)], later()),
    );
    connected();
    const results = await Promise.all(sends);

    expect(kafka.producers).toHaveLength(1);
    expect(producerAt(kafka, 0).connect).toHaveBeenCalledTimes(1);
    expect(producerAt(kafka, 0).send).toHaveBeenCalledTimes(10);
    expect(new Set(results.map((result) => result.session)).size).toBe(1);
    expect(results.flatMap((result) => statuses(result.outcomes))).toEqual(
      Array.from({ length: 10 }, () => 'ACKED'),
    );
  });

  it('gives different senders different session ids', async () => {
    const one = senderFor(new FakeKafka()).sender;
    const two = senderFor(new FakeKafka()).sender;

    expect(await one.session()).not.toBe(await two.session());
  });
});

describe('createRecordSender: what is sent', () => {
  it('stamps tally.session on every message, with partitions and string timestamps', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);
    const records = [record(2, 'a', 1_700_000_000_001), record(0, 'b', 1_700_000_000_002)];

    const result = await sender.send('orders', records, later());

    const producer = producerAt(kafka, 0);
    expect(producer.sent).toHaveLength(1);
    const sent = producer.sent[0];
    expect(sent?.topic).toBe('orders');
    expect(sent?.acks).toBe(-1);
    expect(sent?.messages).toHaveLength(2);
    sent?.messages.forEach((message, index) => {
      const original = records[index];
      expect(message.partition).toBe(original?.partition);
      expect(message.timestamp).toBe(String(original?.timestamp));
      expect(typeof message.timestamp).toBe('string');
      expect(message.key).toEqual(original?.key);
      expect(message.value).toEqual(original?.value);
      expect(message.headers?.['tally.stream']).toEqual(Buffer.from('orders'));
      expect(message.headers?.['tally.seq']).toEqual(original?.headers['tally.seq']);
      expect(String(message.headers?.['tally.session'])).toBe(result.session);
    });
  });

  it('names sessions within the room the publish plan keeps for tally.session', async () => {
    const session = await senderFor(new FakeKafka()).sender.session();

    expect(Buffer.byteLength(session)).toBeLessThanOrEqual(SESSION_ID_MAX_BYTES);
  });

  it('overrides a tally.session header already on a record', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);
    const forged = { ...record(0, 'a'), headers: { 'tally.session': Buffer.from('forged') } };

    const result = await sender.send('orders', [forged], later());

    const headers = producerAt(kafka, 0).sent[0]?.messages[0]?.headers;
    expect(String(headers?.['tally.session'])).toBe(result.session);
  });

  it('bounds the Kafka produce timeout by the request timeout and by the deadline', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka, 5_000);

    await sender.send('orders', [record(0, 'a')], new Deadline(Date.now() + 60_000));
    await sender.send('orders', [record(0, 'b')], new Deadline(Date.now() + 2_000));

    const [far, near] = producerAt(kafka, 0).sent;
    expect(far?.timeout).toBe(5_000);
    expect(near?.timeout).toBeGreaterThan(1_500);
    expect(near?.timeout).toBeLessThanOrEqual(2_000);
  });

  it('sends nothing for an empty record list (no outcomes to report)', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);

    const result = await sender.send('orders', [], later());

    expect(result.outcomes).toEqual([]);
    for (const producer of kafka.producers) expect(producer.send).not.toHaveBeenCalled();
  });
});

describe('createRecordSender: offsets', () => {
  it('numbers records per partition from its base offset, in record order', async () => {
    const kafka = new FakeKafka({ send: acknowledge({ 0: '10', 1: '5' }) });
    const { sender } = senderFor(kafka);

    const { outcomes } = await sender.send(
      'orders',
      [record(0, 'a'), record(1, 'b'), record(0, 'c')],
      later(),
    );

    expect(outcomes).toEqual([
      { status: 'ACKED', partition: 0, offset: '10' },
      { status: 'ACKED', partition: 1, offset: '5' },
      { status: 'ACKED', partition: 0, offset: '11' },
    ]);
  });

  it('keeps offsets exact past 2^53', async () => {
    const kafka = new FakeKafka({ send: acknowledge({ 3: '9007199254740993' }) });
    const { sender } = senderFor(kafka);

    const { outcomes } = await sender.send('orders', [record(3, 'a'), record(3, 'b')], later());

    expect(outcomes).toEqual([
      { status: 'ACKED', partition: 3, offset: '9007199254740993' },
      { status: 'ACKED', partition: 3, offset: '9007199254740994' },
    ]);
  });

  it('reports UNKNOWN for records of a partition kafkajs did not acknowledge', async () => {
    const kafka = new FakeKafka({
      send: async (sent) => [
        { topicName: sent.topic, partition: 0, errorCode: 0, baseOffset: '7' },
      ],
    });
    const { sender } = senderFor(kafka);

    const { outcomes } = await sender.send('orders', [record(0, 'a'), record(1, 'b')], later());

    expect(outcomes[0]).toEqual({ status: 'ACKED', partition: 0, offset: '7' });
    expect(outcomes[1]?.status).toBe('UNKNOWN');
  });
});

describe('createRecordSender: failures', () => {
  it('a fatal producer error is UNKNOWN and the next send uses a new producer session', async () => {
    const kafka = new FakeKafka({
      send: async () => {
        throw protocolError('OUT_OF_ORDER_SEQUENCE_NUMBER', 45, false);
      },
    });
    const { sender } = senderFor(kafka);

    const failed = await sender.send('orders', [record(0, 'a'), record(0, 'b')], later());
    const retried = await sender.send('orders', [record(0, 'a'), record(0, 'b')], later());

    expect(statuses(failed.outcomes)).toEqual(['UNKNOWN', 'UNKNOWN']);
    expect(failed.outcomes[0]).toMatchObject({
      message: expect.stringContaining('OUT_OF_ORDER_SEQUENCE_NUMBER'),
    });
    expect(kafka.producers).toHaveLength(2);
    expect(producerAt(kafka, 0).disconnect).toHaveBeenCalledTimes(1);
    expect(producerAt(kafka, 1).send).toHaveBeenCalledTimes(1);
    expect(retried.session).not.toBe(failed.session);
    expect(statuses(retried.outcomes)).toEqual(['ACKED', 'ACKED']);
    const stamped = producerAt(kafka, 1).sent[0]?.messages[0]?.headers?.['tally.session'];
    expect(String(stamped)).toBe(retried.session);
    expect(await sender.session()).toBe(retried.session);
  });

  it('a send that outlives its deadline is UNKNOWN by the deadline and retires the producer', async () => {
    const kafka = new FakeKafka({ send: () => never() });
    const { sender } = senderFor(kafka);
    const started = Date.now();

    const result = await sender.send('orders', [record(0, 'a')], new Deadline(started + 50));

    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(300);
    expect(statuses(result.outcomes)).toEqual(['UNKNOWN']);
    expect(producerAt(kafka, 0).disconnect).toHaveBeenCalledTimes(1);

    const next = await sender.send('orders', [record(0, 'a')], later());
    expect(kafka.producers).toHaveLength(2);
    expect(next.session).not.toBe(result.session);
    expect(statuses(next.outcomes)).toEqual(['ACKED']);
  });

  it('a connect that does not finish by the deadline is NOT_SENT, nothing sent', async () => {
    const kafka = new FakeKafka({ connect: () => never() });
    const { sender } = senderFor(kafka);
    const started = Date.now();

    const result = await sender.send(
      'orders',
      [record(0, 'a'), record(1, 'b')],
      new Deadline(started + 50),
    );

    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(45);
    expect(elapsed).toBeLessThan(300);
    expect(statuses(result.outcomes)).toEqual(['NOT_SENT', 'NOT_SENT']);
    expect(producerAt(kafka, 0).send).not.toHaveBeenCalled();
  });

  it('a connect that fails is NOT_SENT and the producer is replaced', async () => {
    const kafka = new FakeKafka({
      connect: async () => {
        throw new Error('Connection error: ECONNREFUSED');
      },
    });
    const { sender } = senderFor(kafka);

    const failed = await sender.send('orders', [record(0, 'a')], later());
    const next = await sender.send('orders', [record(0, 'a')], later());

    expect(statuses(failed.outcomes)).toEqual(['NOT_SENT']);
    expect(failed.outcomes[0]).toMatchObject({ message: expect.stringContaining('ECONNREFUSED') });
    expect(producerAt(kafka, 0).send).not.toHaveBeenCalled();
    expect(producerAt(kafka, 0).disconnect).toHaveBeenCalledTimes(1);
    expect(kafka.producers).toHaveLength(2);
    expect(next.session).not.toBe(failed.session);
    expect(statuses(next.outcomes)).toEqual(['ACKED']);
  });

  it('a single-partition refusal is FAILED and the producer is kept', async () => {
    let calls = 0;
    const kafka = new FakeKafka({
      send: async (sent) => {
        calls += 1;
        if (calls === 1) throw protocolError('MESSAGE_TOO_LARGE', 10, false);
        return acknowledge({ 0: '3' })(sent);
      },
    });
    const { sender } = senderFor(kafka);

    const refused = await sender.send('orders', [record(0, 'a'), record(0, 'b')], later());
    const next = await sender.send('orders', [record(0, 'c')], later());

    expect(refused.outcomes).toEqual([
      expect.objectContaining({ status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE' }),
      expect.objectContaining({ status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE' }),
    ]);
    expect(kafka.producers).toHaveLength(1);
    expect(producerAt(kafka, 0).disconnect).not.toHaveBeenCalled();
    expect(next.session).toBe(refused.session);
    expect(next.outcomes).toEqual([{ status: 'ACKED', partition: 0, offset: '3' }]);
  });

  it('the same refusal over two partitions is UNKNOWN', async () => {
    const kafka = new FakeKafka({
      send: async () => {
        throw protocolError('MESSAGE_TOO_LARGE', 10, false);
      },
    });
    const { sender } = senderFor(kafka);

    const result = await sender.send('orders', [record(0, 'a'), record(1, 'b')], later());

    expect(statuses(result.outcomes)).toEqual(['UNKNOWN', 'UNKNOWN']);
  });
});

describe('createRecordSender: record batches', () => {
  /** Acknowledges in log order per partition, and counts sends that overlap another. */
  function log() {
    const next = new Map<number, number>();
    let inFlight = 0;
    const overlaps: number[] = [];
    const send: SendBehaviour = async (sent) => {
      if (inFlight > 0) overlaps.push(inFlight);
      inFlight++;
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      const counts = new Map<number, number>();
      for (const m of sent.messages)
        counts.set(m.partition ?? 0, (counts.get(m.partition ?? 0) ?? 0) + 1);
      return [...counts].map(([partition, count]) => {
        const base = next.get(partition) ?? 0;
        next.set(partition, base + count);
        return { topicName: sent.topic, partition, errorCode: 0, baseOffset: String(base) };
      });
    };
    return { send, overlaps };
  }
  // A test record alone in a batch is 134 bytes (61 of them the batch's): 250 hold two.
  const small = 250;

  it("cuts each partition's records into batches that fit, sent in rounds, one send at a time", async () => {
    const { send, overlaps } = log();
    const kafka = new FakeKafka({ send });
    const { sender } = senderFor(kafka, 10_000, small);
    const records = ['a', 'b', 'c', 'd', 'e'].map((text, i) => record(i % 2, text));

    const { outcomes } = await sender.send('orders', records, later());

    const sent = producerAt(kafka, 0).sent;
    expect(sent.map((s) => s.messages.map((m) => String(m.value)))).toEqual([
      ['a', 'c', 'b', 'd'],
      ['e'],
    ]);
    expect(overlaps).toEqual([]);
    expect(outcomes).toEqual([
      { status: 'ACKED', partition: 0, offset: '0' },
      { status: 'ACKED', partition: 1, offset: '0' },
      { status: 'ACKED', partition: 0, offset: '1' },
      { status: 'ACKED', partition: 1, offset: '1' },
      { status: 'ACKED', partition: 0, offset: '2' },
    ]);
  });

  it('after a batch that is not acknowledged, sends no later batch of its partition; others go on', async () => {
    const { send } = log();
    let round = 0;
    const kafka = new FakeKafka({
      send: async (sent) => {
        round++;
        const acked = await send(sent);
        // The first round's answer has no word on partition 0.
        return round === 1 ? acked.filter((entry) => entry.partition !== 0) : acked;
      },
    });
    const { sender } = senderFor(kafka, 10_000, small);
    const records = [
      ...['a', 'b', 'c', 'd'].map((text) => record(0, text)),
      ...['w', 'x', 'y', 'z'].map((text) => record(1, text)),
    ];

    const { outcomes } = await sender.send('orders', records, later());

    expect(statuses(outcomes)).toEqual([
      'UNKNOWN',
      'UNKNOWN',
      'NOT_SENT',
      'NOT_SENT',
      'ACKED',
      'ACKED',
      'ACKED',
      'ACKED',
    ]);
    expect(outcomes[2]).toMatchObject({
      message:
        'not sent: an earlier record batch of partition 0 was not acknowledged (UNKNOWN); later ones would overtake it',
    });
    const sent = producerAt(kafka, 0).sent.map((s) => s.messages.map((m) => String(m.value)));
    expect(sent).toEqual([
      ['a', 'b', 'w', 'x'],
      ['y', 'z'],
    ]);
  });

  it("a refusal of a round with one partition's batch is FAILED for it alone, the rest NOT_SENT", async () => {
    const { send } = log();
    const kafka = new FakeKafka({
      send: async (sent) => {
        if (String(sent.messages[0]?.value) === 'c') {
          throw protocolError('INVALID_RECORD', 87, false);
        }
        return send(sent);
      },
    });
    const { sender } = senderFor(kafka, 10_000, small);
    const records = [...['a', 'b', 'c', 'd', 'e'].map((text) => record(0, text)), record(1, 'x')];

    const { outcomes } = await sender.send('orders', records, later());

    expect(statuses(outcomes)).toEqual(['ACKED', 'ACKED', 'FAILED', 'FAILED', 'NOT_SENT', 'ACKED']);
    expect(outcomes[2]).toMatchObject({ kafkaError: 'INVALID_RECORD' });
    expect(kafka.producers).toHaveLength(1);
  });

  it('a fatal error is UNKNOWN for its round, the later batches NOT_SENT, and retires the session', async () => {
    const kafka = new FakeKafka({
      send: async () => {
        throw protocolError('UNKNOWN_PRODUCER_ID', 59, false);
      },
    });
    const { sender } = senderFor(kafka, 10_000, small);
    const records = [record(0, 'a'), record(0, 'b'), record(0, 'c'), record(1, 'x')];

    const { outcomes } = await sender.send('orders', records, later());

    expect(statuses(outcomes)).toEqual(['UNKNOWN', 'UNKNOWN', 'NOT_SENT', 'UNKNOWN']);
    expect(producerAt(kafka, 0).send).toHaveBeenCalledTimes(1);
    expect(producerAt(kafka, 0).disconnect).toHaveBeenCalledTimes(1);
  });

  it('a batch still in flight at the deadline is UNKNOWN, the batches after it NOT_SENT', async () => {
    const kafka = new FakeKafka({ send: () => never() });
    const { sender } = senderFor(kafka, 10_000, small);

    const { outcomes } = await sender.send(
      'orders',
      ['a', 'b', 'c', 'd'].map((text) => record(0, text)),
      new Deadline(Date.now() + 50),
    );

    expect(statuses(outcomes)).toEqual(['UNKNOWN', 'UNKNOWN', 'NOT_SENT', 'NOT_SENT']);
    expect(producerAt(kafka, 0).send).toHaveBeenCalledTimes(1);
  });

  it("sends nothing when the topic's max.message.bytes cannot be read", async () => {
    const kafka = new FakeKafka();
    const sender = createRecordSender(kafka.asKafka(), {
      retries: 3,
      requestTimeoutMs: 10_000,
      maxBatchBytes: async () => {
        throw new Error('describeConfigs failed');
      },
      log: vi.fn(),
    });

    const { outcomes } = await sender.send('orders', [record(0, 'a')], later());

    expect(outcomes).toEqual([
      { status: 'NOT_SENT', message: expect.stringContaining('describeConfigs failed') },
    ]);
    expect(producerAt(kafka, 0).send).not.toHaveBeenCalled();
  });
});

describe('createRecordSender: warm', () => {
  it('loads metadata with an empty sendBatch per topic on the one producer', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);

    await sender.warm(['orders', 'payments'], later());
    const { session } = await sender.send('orders', [record(0, 'a')], later());

    expect(kafka.producers).toHaveLength(1);
    const producer = producerAt(kafka, 0);
    expect(producer.sendBatch).toHaveBeenCalledTimes(1);
    expect(producer.batches[0]?.topicMessages).toEqual([
      { topic: 'orders', messages: [] },
      { topic: 'payments', messages: [] },
    ]);
    expect(producer.send).toHaveBeenCalledTimes(1);
    expect(await sender.session()).toBe(session);
  });

  it('does nothing without topics', async () => {
    const kafka = new FakeKafka();
    const { sender } = senderFor(kafka);

    await sender.warm([], later());

    expect(kafka.producers).toHaveLength(0);
  });

  it('does not wait past its deadline', async () => {
    const kafka = new FakeKafka({ connect: () => never() });
    const { sender } = senderFor(kafka);
    const started = Date.now();

    await expect(sender.warm(['orders'], new Deadline(started + 50))).rejects.toThrow(/warming/);
    expect(Date.now() - started).toBeLessThan(300);
    expect(producerAt(kafka, 0).sendBatch).not.toHaveBeenCalled();
  });
});

describe('offsetsOf', () => {
  const messages = [0, 1, 0, 0, 1].map((partition) => ({ partition, value: null }));
  const acked = (partition: number, baseOffset: string) => ({
    topicName: 't',
    partition,
    errorCode: 0,
    baseOffset,
  });

  it("counts each partition's records up from its base offset, in order", () => {
    expect(offsetsOf(messages, [acked(0, '41'), acked(1, '0')])).toEqual([
      { status: 'ACKED', partition: 0, offset: '41' },
      { status: 'ACKED', partition: 1, offset: '0' },
      { status: 'ACKED', partition: 0, offset: '42' },
      { status: 'ACKED', partition: 0, offset: '43' },
      { status: 'ACKED', partition: 1, offset: '1' },
    ]);
  });

  it('stays exact past 2^53, where a number would round', () => {
    const outcomes = offsetsOf(messages, [
      acked(0, '9007199254740990'),
      acked(1, '9223372036854775806'),
    ]);
    expect(outcomes.map((o) => (o.status === 'ACKED' ? o.offset : o.status))).toEqual([
      '9007199254740990',
      '9223372036854775806',
      '9007199254740991',
      '9007199254740992',
      '9223372036854775807',
    ]);
  });

  it('leaves records of a partition without an answer UNKNOWN', () => {
    const outcomes = offsetsOf(messages, [acked(0, '5')]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'ACKED',
      'UNKNOWN',
      'ACKED',
      'ACKED',
      'UNKNOWN',
    ]);
  });
});

describe('withSession', () => {
  const bytes = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
  const name = fc.oneof(
    fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }),
    fc.constantFrom('__proto__', 'constructor', 'toString', 'tally.session', 'tally.seq', '0', '7'),
  );
  /** Headers as stamp makes them: own data properties (__proto__ included), Buffer or Buffer[]. */
  const headers = fc
    .array(fc.tuple(name, fc.oneof(bytes, fc.array(bytes, { minLength: 1, maxLength: 3 }))), {
      maxLength: 6,
    })
    .map((entries) => {
      const made: Record<string, Buffer | Buffer[]> = {};
      for (const [key, value] of entries) {
        Object.defineProperty(made, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return made;
    });

  it('copies like {...headers, tally.session} and sizes like recordBodyBytesOf', () => {
    fc.assert(
      fc.property(headers, bytes, (given, session) => {
        const size = { count: -1, bytes: -1 };
        const copy = withSession(given, session, size);
        const spread = { ...given, 'tally.session': session };
        expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
        expect(Object.keys(copy)).toEqual(Object.keys(spread));
        for (const key of Object.keys(spread)) {
          expect(Object.getOwnPropertyDescriptor(copy, key)?.value).toBe(
            Object.getOwnPropertyDescriptor(spread, key)?.value,
          );
        }
        const key = Buffer.from('k');
        expect(bodyBytes(key, null, size.count, size.bytes)).toBe(
          recordBodyBytesOf(key, null, spread),
        );
      }),
      { seed: PROPERTY_SEED },
    );
  });
});
