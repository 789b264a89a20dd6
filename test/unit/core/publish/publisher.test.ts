import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { checkTopic, fingerprint } from '../../../../functions/core/publish/plan.js';
import type {
  Allocation,
  KeyedPublish,
  KeyedPublishes,
  Ledger,
  LedgerBlock,
  OutgoingRecord,
  PublishRequest,
  PublishResult,
  RecordResult,
  RecordSender,
  SequenceAllocator,
  TopicCatalog,
  TopicDescription,
} from '../../../../functions/core/publish/ports.js';
import { createPublisher, isSettledResult } from '../../../../functions/core/publish/publisher.js';
import type { RecordInput } from '../../../../functions/core/publish/record.js';
import { createSeqLeases } from '../../../../functions/core/publish/seq-leases.js';
import { Deadline } from '../../../../functions/core/shared/deadline.js';
import {
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  PayloadTooLargeError,
  type TallyError,
  UnprocessableInputError,
} from '../../../../functions/core/shared/errors.js';
import { partitionForKey } from '../../../../functions/core/shared/murmur2.js';
import type { RecordOutcome } from '../../../../functions/core/shared/outcomes.js';
import { topicAllowList } from '../../../../functions/core/shared/topic-names.js';

// ---------------------------------------------------------------------------------------------
// In-memory fakes of the publish ports.

class FakeCatalog implements TopicCatalog {
  readonly described: string[] = [];
  constructor(private readonly topics: Readonly<Record<string, TopicDescription>>) {}
  async describe(topic: string): Promise<TopicDescription | undefined> {
    this.described.push(topic);
    return this.topics[topic];
  }
}

/** Every call a publish makes to DynamoDB (allocator, ledger, key items), in order. */
type DynamoCalls = string[];

class FakeAllocator implements SequenceAllocator {
  readonly counters = new Map<string, number>();
  readonly calls: Array<{ stream: string; count: number }> = [];
  constructor(private readonly dynamo: DynamoCalls = []) {}
  readonly homes = new Map<string, string>();
  async allocate(
    stream: string,
    count: number,
    topic: string,
    _deadline?: Deadline,
  ): Promise<Allocation> {
    this.dynamo.push('allocate');
    this.calls.push({ stream, count });
    const last = this.counters.get(stream) ?? 0;
    this.counters.set(stream, last + count);
    if (!this.homes.has(stream)) this.homes.set(stream, topic);
    return { firstSeq: last + 1, homeTopic: this.homes.get(stream), allocatedAt: Date.now() };
  }
}

class FakeLedger implements Ledger {
  readonly blocks = new Map<string, LedgerBlock>();
  /** Every write, in order, as it was written. */
  readonly writes: LedgerBlock[] = [];
  /** Throws for the write with this 1-based number. */
  failWrite: number | undefined;
  /**
   * The call of `write` (not `open`) with this 1-based number is slow: its caller's deadline
   * passes (it sees a timeout), while the store applies it later, when `landLate` is called.
   */
  lateWrite: number | undefined;
  #late: (() => Promise<string | undefined>) | undefined;
  #writeCalls = 0;
  #versions = 0;
  constructor(
    private readonly events: string[],
    private readonly dynamo: DynamoCalls = [],
  ) {}

  /** Like DynamoDB's conditional put on the block's version (see Ledger.write). */
  async write(
    block: LedgerBlock,
    _deadline?: Deadline,
    over?: string,
  ): Promise<string | undefined> {
    this.dynamo.push('ledger.write');
    const apply = async () => {
      const there = this.blocks.get(`${block.stream}/${block.firstSeq}`);
      if (over === 'absent' ? there !== undefined : over !== undefined && there?.version !== over) {
        return undefined;
      }
      return this.store(block);
    };
    if (++this.#writeCalls === this.lateWrite) {
      this.#late = apply;
      throw new Error('DynamoDB: the request deadline passed');
    }
    return apply();
  }

  /** Applies the late write now, as the store finally does: its version, or undefined if refused. */
  async landLate(): Promise<string | undefined> {
    const late = this.#late;
    this.#late = undefined;
    return late?.();
  }

  private async store(block: LedgerBlock): Promise<string> {
    const number = this.writes.length + 1;
    this.events.push(`ledger.write#${number}`);
    this.writes.push({ ...block, outcomes: [...block.outcomes] });
    if (this.failWrite === number) throw new Error('DynamoDB is down');
    const version = `v${++this.#versions}`;
    this.blocks.set(`${block.stream}/${block.firstSeq}`, {
      ...block,
      outcomes: [...block.outcomes],
      version,
    });
    return version;
  }

  /** Like DynamoDB's conditional put: refused when a VOID block starts at the same seq. */
  /** Each open's `judgedFrom`: when the audit may first judge its seqs. */
  readonly judgedFrom: Array<number | undefined> = [];

  async open(
    block: LedgerBlock,
    _deadline?: Deadline,
    judgedFrom?: number,
  ): Promise<{ version: string } | 'voided'> {
    const there = this.blocks.get(`${block.stream}/${block.firstSeq}`);
    this.dynamo.push('ledger.open');
    this.judgedFrom.push(judgedFrom);
    if (there?.outcomes.every((o) => o.status === 'VOID')) return 'voided';
    return { version: await this.store(block) };
  }

  async void(block: LedgerBlock): Promise<number> {
    this.dynamo.push('ledger.void');
    if (this.blocks.has(`${block.stream}/${block.firstSeq}`)) return 0;
    await this.store(block);
    return block.outcomes.length;
  }

  async fill(block: LedgerBlock): Promise<boolean> {
    this.dynamo.push('ledger.fill');
    if (this.blocks.has(`${block.stream}/${block.firstSeq}`)) return false;
    await this.store(block);
    return true;
  }

  async find(stream: string, seq: number): Promise<LedgerBlock | undefined> {
    this.dynamo.push('ledger.find');
    return this.blockAt(stream, seq);
  }

  blockAt(stream: string, seq: number): LedgerBlock | undefined {
    for (const block of this.blocks.values()) {
      if (
        block.stream === stream &&
        seq >= block.firstSeq &&
        seq < block.firstSeq + block.outcomes.length
      ) {
        return block;
      }
    }
    return undefined;
  }

  async forEachBlock(stream: string, onBlock: (block: LedgerBlock) => void): Promise<void> {
    [...this.blocks.values()]
      .filter((block) => block.stream === stream)
      .sort((a, b) => a.firstSeq - b.firstSeq)
      .forEach(onBlock);
  }

  /** The outcome the ledger holds for one seq. */
  async outcome(stream: string, seq: number): Promise<RecordOutcome | undefined> {
    const block = this.blockAt(stream, seq);
    return block?.outcomes[seq - block.firstSeq];
  }
}

/** The key items, with DynamoDB's conditions; `stored` is what the table holds. */
class FakeKeyed implements KeyedPublishes {
  readonly stored = new Map<string, KeyedPublish>();
  constructor(private readonly dynamo: DynamoCalls = []) {}
  async get(idempotencyKey: string): Promise<KeyedPublish | undefined> {
    this.dynamo.push('key.get');
    return this.stored.get(idempotencyKey);
  }
  async claim(item: KeyedPublish): Promise<KeyedPublish> {
    this.dynamo.push('key.claim');
    const existing = this.stored.get(item.idempotencyKey);
    if (existing) return existing;
    this.stored.set(item.idempotencyKey, item);
    return item;
  }
  async lock(idempotencyKey: string, seenUntil: number, until: number): Promise<boolean> {
    this.dynamo.push('key.lock');
    const item = this.stored.get(idempotencyKey);
    if (!item || item.answer !== undefined || item.lockedUntil !== seenUntil) return false;
    this.stored.set(idempotencyKey, { ...item, lockedUntil: until });
    return true;
  }
  async finish(idempotencyKey: string, heldUntil: number, answer: unknown): Promise<boolean> {
    this.dynamo.push(answer === undefined ? 'key.release' : 'key.answer');
    const item = this.stored.get(idempotencyKey);
    if (!item || item.lockedUntil !== heldUntil) return false;
    this.stored.set(idempotencyKey, {
      ...item,
      lockedUntil: 0,
      ...(answer !== undefined && { answer }),
    });
    return true;
  }
}

type Respond = (records: readonly OutgoingRecord[], call: number) => RecordOutcome[];

interface SendCall {
  readonly topic: string;
  readonly records: readonly OutgoingRecord[];
  /** What the ledger said about each record's seq when send was called. */
  readonly ledgerAtSend: ReadonlyArray<RecordOutcome | undefined>;
}

class FakeSender implements RecordSender {
  readonly calls: SendCall[] = [];
  /** One response per call; after the last, every record is ACKED. */
  readonly responses: Respond[] = [];
  private readonly offsets = new Map<number, number>();
  constructor(
    private readonly events: string[],
    private readonly ledger: FakeLedger,
  ) {}

  async session(): Promise<string> {
    return 'session-1';
  }

  async send(
    topic: string,
    records: readonly OutgoingRecord[],
    _deadline?: Deadline,
  ): Promise<{ session: string; outcomes: RecordOutcome[] }> {
    this.events.push('sender.send');
    const ledgerAtSend: Array<RecordOutcome | undefined> = [];
    for (const record of records) {
      const stream = String(record.headers['tally.stream']);
      ledgerAtSend.push(
        await this.ledger.outcome(stream, Number(String(record.headers['tally.seq']))),
      );
    }
    this.calls.push({ topic, records, ledgerAtSend });
    const respond = this.responses[this.calls.length - 1] ?? ((r) => r.map((x) => this.ack(x)));
    return { session: 'session-2', outcomes: respond(records, this.calls.length) };
  }

  ack(record: OutgoingRecord): RecordOutcome {
    const offset = this.offsets.get(record.partition) ?? 0;
    this.offsets.set(record.partition, offset + 1);
    return { status: 'ACKED', partition: record.partition, offset: String(offset) };
  }

  /** Every record sent so far, with its seq. */
  sentSeqs(): number[] {
    return this.calls.flatMap((c) => c.records.map((r) => Number(String(r.headers['tally.seq']))));
  }
}

const TOPICS: Record<string, TopicDescription> = {
  orders: { partitions: 3, maxMessageBytes: 1_000 },
  single: { partitions: 1, maxMessageBytes: 1_000_000 },
  wide: { partitions: 12, maxMessageBytes: 1_000_000 },
};

/**
 * `auditHorizonMs` 0: every block is opened before its send (the write-ahead path). `leased`:
 * the allocator leases seqs, as the publish runtime's does.
 */
function setup(allow: readonly string[] = [], auditHorizonMs = 0, leased = false) {
  const events: string[] = [];
  const catalog = new FakeCatalog(TOPICS);
  const dynamo: DynamoCalls = [];
  const allocator = new FakeAllocator(dynamo);
  const ledger = new FakeLedger(events, dynamo);
  const keyed = new FakeKeyed(dynamo);
  const sender = new FakeSender(events, ledger);
  const leases = leased
    ? createSeqLeases(allocator, { horizonMs: auditHorizonMs, maxLease: 100, windowMs: 1000 })
    : undefined;
  const publisher = createPublisher({
    catalog,
    sender,
    allocator: leases ?? allocator,
    ledger,
    keyed,
    auditHorizonMs,
    allowTopic: topicAllowList(allow),
  });
  /**
   * Single-record requests until the container holds `count` seqs of the stream at hand (spare
   * seqs are at most 3 % of those it handed out, so a lease takes a few dozen requests).
   */
  const warmLease = async (count: number) => {
    for (let i = 0; i < 1000; i++) {
      if (leases?.peek('orders-stream', count, new Deadline(Date.now() + 10_000))) return;
      await publisher.publish(request([rec()]));
    }
    throw new Error(`no lease of ${count} seqs after 1,000 requests`);
  };
  return { events, dynamo, catalog, allocator, ledger, keyed, sender, publisher, warmLease };
}

interface RecordSpec {
  readonly key?: string | null;
  readonly value?: string | null;
  readonly partition?: number;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly timestamp?: number;
}

function rec(spec: RecordSpec = {}): RecordInput {
  const data = (text: string | null | undefined) =>
    text === undefined
      ? undefined
      : { type: 'STRING' as const, bytes: text === null ? null : Buffer.from(text) };
  return {
    partition: spec.partition,
    key: data(spec.key),
    value: data(spec.value),
    headers: (spec.headers ?? []).map(([name, value]) => ({ name, value: Buffer.from(value) })),
    timestamp: spec.timestamp,
  };
}

const NOW = Date.UTC(2026, 10, 29, 16);

function request(
  records: ReadonlyArray<RecordInput | TallyError>,
  options: { topic?: string; stream?: string; idempotencyKey?: string } = {},
): PublishRequest {
  return {
    topic: options.topic ?? 'orders',
    stream: options.stream ?? 'orders-stream',
    idempotencyKey: options.idempotencyKey,
    records,
    deadline: new Deadline(Date.now() + 10_000),
    now: NOW,
  };
}

type Published = Extract<RecordResult, { kind: 'published' }>;

function publishedAt(result: PublishResult, i: number): Published {
  const r = result.results[i];
  if (r?.kind !== 'published') throw new Error(`result ${i} is ${r?.kind ?? 'missing'}`);
  return r;
}

function rejectedAt(result: PublishResult, i: number): TallyError {
  const r = result.results[i];
  if (r?.kind !== 'rejected') throw new Error(`result ${i} is ${r?.kind ?? 'missing'}`);
  return r.error;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** A header as text (undefined when absent), to compare with plain values. */
function headerText(value: OutgoingRecord['headers'][string] | undefined) {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map((v) => v.toString()) : value.toString();
}

/** The VOID block the audit writes for a hole at `seq` of orders-stream. */
function auditVoid(seq: number): LedgerBlock {
  return {
    stream: 'orders-stream',
    firstSeq: seq,
    topic: 'orders',
    session: '',
    idempotencyKey: undefined,
    outcomes: [{ status: 'VOID', message: 'a hole past the horizon' }],
  };
}

// ---------------------------------------------------------------------------------------------

describe('checkTopic', () => {
  const all = () => true;

  it('accepts a legal, non-internal, allowed topic', () => {
    expect(() => checkTopic('orders', all)).not.toThrow();
  });

  it('rejects an illegal name with InvalidInputError on topic_name', () => {
    for (const name of [
      '',
      '.',
      'a b',
      'fincx.repayment.status （wpk-reactor-web）',
      'x'.repeat(250),
    ]) {
      const error = (() => {
        try {
          checkTopic(name, all);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, name).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).field).toBe('topic_name');
    }
  });

  it('forbids internal topics even when the allow-list would allow them', () => {
    expect(() => checkTopic('__consumer_offsets', all)).toThrow(ForbiddenError);
    expect(() => checkTopic('__transaction_state', all)).toThrow(/internal/);
  });

  it('forbids topics outside the allow-list', () => {
    expect(() => checkTopic('payments', topicAllowList(['orders.*']))).toThrow(ForbiddenError);
    expect(() => checkTopic('orders.eu', topicAllowList(['orders.*']))).not.toThrow();
  });
});

describe('publish: topic checks', () => {
  it('rejects an illegal topic name before describing it', async () => {
    const { publisher, catalog, sender } = setup();
    const error = await rejection(publisher.publish(request([rec()], { topic: 'bad topic' })));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).status).toBe(400);
    expect(catalog.described).toEqual([]);
    expect(sender.calls).toEqual([]);
  });

  it('forbids __consumer_offsets', async () => {
    const { publisher, catalog } = setup();
    const error = await rejection(
      publisher.publish(request([rec()], { topic: '__consumer_offsets' })),
    );
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).status).toBe(403);
    expect(catalog.described).toEqual([]);
  });

  it('forbids a topic the allow-list refuses', async () => {
    const { publisher, sender, allocator } = setup(['payments.*']);
    const error = await rejection(publisher.publish(request([rec({ value: 'v' })])));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect((error as ForbiddenError).message).toContain('allow-list');
    expect(sender.calls).toEqual([]);
    expect(allocator.calls).toEqual([]);
  });

  it('reports a missing topic as NotFoundError 40403', async () => {
    const { publisher, sender, allocator, ledger } = setup();
    const error = await rejection(publisher.publish(request([rec()], { topic: 'nope' })));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).errorCode).toBe(40403);
    expect((error as NotFoundError).status).toBe(404);
    expect((error as NotFoundError).field).toBe('topic_name');
    expect(sender.calls).toEqual([]);
    expect(allocator.calls).toEqual([]);
    expect(ledger.writes).toEqual([]);
  });
});

describe('publish: record checks', () => {
  it('rejects a partition_id the topic does not have with 40402, publishing the others', async () => {
    const { publisher, sender } = setup();
    const result = await publisher.publish(
      request([
        rec({ value: 'a' }),
        rec({ value: 'b', partition: 3 }),
        rec({ value: 'c', partition: 2 }),
      ]),
    );
    const error = rejectedAt(result, 1);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.errorCode).toBe(40402);
    expect(error.field).toBe('partition_id');
    expect(publishedAt(result, 0).outcome.status).toBe('ACKED');
    expect(publishedAt(result, 2).partition).toBe(2);
    expect(publishedAt(result, 2).outcome.status).toBe('ACKED');
    expect(sender.calls).toHaveLength(1);
    expect(sender.calls[0]?.records.map((r) => r.value?.toString())).toEqual(['a', 'c']);
  });

  it('rejects only the oversized record with PayloadTooLargeError', async () => {
    const { publisher, sender } = setup();
    // orders accepts 1000 bytes. Alone in a record batch (61), stamped with orders-stream, the
    // widest seq and room for a 32-byte session, a keyless record takes 171 bytes besides its
    // value: 829 fit.
    const result = await publisher.publish(
      request([
        rec({ value: 'x'.repeat(829) }),
        rec({ value: 'x'.repeat(830) }),
        rec({ value: 'small' }),
      ]),
    );
    expect(publishedAt(result, 0).outcome.status).toBe('ACKED');
    const error = rejectedAt(result, 1);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.status).toBe(413);
    expect(error.message).toContain('1000');
    expect(publishedAt(result, 2).outcome.status).toBe('ACKED');
    expect(sender.calls[0]?.records).toHaveLength(2);
  });

  it('keeps parse errors in their place and gives the others dense seqs', async () => {
    const { publisher, allocator } = setup();
    const parseError = new InvalidInputError('value.data: is required', { field: 'value.data' });
    const result = await publisher.publish(
      request([rec({ value: 'a' }), parseError, rec({ value: 'b' })]),
    );
    expect(rejectedAt(result, 1)).toBe(parseError);
    expect(publishedAt(result, 0).seq).toBe(1);
    expect(publishedAt(result, 2).seq).toBe(2);
    expect(allocator.calls).toEqual([{ stream: 'orders-stream', count: 2 }]);
  });

  it('allocates no seqs and calls no sender when every record is invalid', async () => {
    const { publisher, allocator, sender, ledger, keyed } = setup();
    const parseError = new InvalidInputError('value.type: bad', { field: 'value.type' });
    const result = await publisher.publish(
      request([parseError, rec({ partition: 99 }), rec({ value: 'x'.repeat(5_000) })], {
        idempotencyKey: 'k-all-bad',
      }),
    );
    expect(result.results.map((r) => r.kind)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(rejectedAt(result, 0)).toBe(parseError);
    expect(rejectedAt(result, 1).errorCode).toBe(40402);
    expect(rejectedAt(result, 2)).toBeInstanceOf(PayloadTooLargeError);
    expect(result.warnings).toEqual([]);
    expect(allocator.calls).toEqual([]);
    expect(sender.calls).toEqual([]);
    expect(ledger.writes).toEqual([]);
    expect(keyed.stored.size).toBe(0);
  });
});

describe('publish: sequence numbers and partitions', () => {
  it('numbers records densely per stream across calls', async () => {
    const { publisher } = setup();
    const first = await publisher.publish(request([rec(), rec(), rec()]));
    const second = await publisher.publish(request([rec(), rec()]));
    const other = await publisher.publish(request([rec()], { stream: 'other' }));
    const third = await publisher.publish(request([rec()]));
    expect([0, 1, 2].map((i) => publishedAt(first, i).seq)).toEqual([1, 2, 3]);
    expect([0, 1].map((i) => publishedAt(second, i).seq)).toEqual([4, 5]);
    expect(publishedAt(other, 0).seq).toBe(1);
    expect(publishedAt(third, 0).seq).toBe(6);
    expect(first.stream).toBe('orders-stream');
    expect(other.stream).toBe('other');
  });

  it('sends keyed records to partitionForKey(key, partitions)', async () => {
    const { publisher, sender } = setup();
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
    const result = await publisher.publish(
      request(
        keys.map((key) => rec({ key, value: 'v' })),
        { topic: 'wide' },
      ),
    );
    const expected = keys.map((key) => partitionForKey(Buffer.from(key), 12));
    expect(keys.map((_, i) => publishedAt(result, i).partition)).toEqual(expected);
    expect(sender.calls[0]?.records.map((r) => r.partition)).toEqual(expected);
    expect(new Set(expected).size).toBeGreaterThan(1);
  });

  it('gives keyless records the partition of their block of 100 seqs, whatever the request', async () => {
    const { publisher, sender } = setup();
    const keyless = (n: number) => Array.from({ length: n }, () => rec());
    // seqs 1..150: block 0 (1..100) on partition 0, block 1 (101..200) on partition 1
    const first = await publisher.publish(request(keyless(150)));
    // seqs 151..350: the rest of block 1, then block 2 on partition 2, block 3 on partition 0
    const second = await publisher.publish(request(keyless(200)));
    const partitionsOf = (result: PublishResult) =>
      result.results.map((_, i) => publishedAt(result, i).partition);
    const blockPartition = (seq: number) => Math.floor((seq - 1) / 100) % 3;
    expect(partitionsOf(first)).toEqual(
      Array.from({ length: 150 }, (_, i) => blockPartition(i + 1)),
    );
    expect(partitionsOf(second)).toEqual(
      Array.from({ length: 200 }, (_, i) => blockPartition(i + 151)),
    );
    expect(new Set(partitionsOf(second))).toEqual(new Set([0, 1, 2]));
    expect(sender.calls[1]?.records.map((r) => r.partition)).toEqual(partitionsOf(second));
  });

  it('sends keyless records of a retry to the partitions their first attempt chose', async () => {
    const { publisher, sender } = setup();
    const records = Array.from({ length: 250 }, () => rec());
    sender.responses.push((sent) => sent.map(() => ({ status: 'NOT_SENT', message: 'down' })));
    const first = await publisher.publish(request(records, { idempotencyKey: 'again' }));
    const retry = await publisher.publish(request(records, { idempotencyKey: 'again' }));
    const places = (result: PublishResult) =>
      result.results.map((_, i) => [publishedAt(result, i).seq, publishedAt(result, i).partition]);
    expect(places(retry)).toEqual(places(first));
    expect(sender.calls[1]?.records.map((r) => r.partition)).toEqual(
      sender.calls[0]?.records.map((r) => r.partition),
    );
    expect(new Set(sender.calls[1]?.records.map((r) => r.partition)).size).toBe(3);
  });

  it('honours an explicit partition_id over the key', async () => {
    const { publisher, sender } = setup();
    const result = await publisher.publish(request([rec({ key: 'alpha', partition: 0 })]));
    expect(publishedAt(result, 0).partition).toBe(0);
    expect(sender.calls[0]?.records[0]?.partition).toBe(0);
  });

  it('sends key, value and timestamp (the record’s own, else the request’s)', async () => {
    const { publisher, sender } = setup();
    const own = Date.UTC(2020, 0, 1);
    const result = await publisher.publish(
      request([rec({ key: 'k', value: 'v', timestamp: own }), rec({ value: null })]),
    );
    const [a, b] = sender.calls[0]?.records ?? [];
    expect(a?.key?.toString()).toBe('k');
    expect(a?.value?.toString()).toBe('v');
    expect(a?.timestamp).toBe(own);
    expect(b?.key).toBeNull();
    expect(b?.value).toBeNull();
    expect(b?.timestamp).toBe(NOW);
    expect(publishedAt(result, 0).timestamp).toBe(own);
    expect(publishedAt(result, 1).timestamp).toBe(NOW);
  });
});

describe('publish: headers', () => {
  it('stamps tally.stream and tally.seq and keeps client headers', async () => {
    const { publisher, sender } = setup();
    await publisher.publish(
      request([
        rec({
          headers: [
            ['trace', 't-1'],
            ['empty', ''],
          ],
        }),
        rec({
          headers: [
            ['dup', 'a'],
            ['dup', ''],
            ['dup', 'c'],
            ['pair', '1'],
            ['pair', '2'],
          ],
        }),
      ]),
    );
    const [a, b] = sender.calls[0]?.records ?? [];
    expect(
      Object.fromEntries(Object.entries(a?.headers ?? {}).map(([k, v]) => [k, headerText(v)])),
    ).toEqual({
      trace: 't-1',
      empty: '',
      'tally.stream': 'orders-stream',
      'tally.seq': '1',
    });
    expect(headerText(b?.headers.dup)).toEqual(['a', '', 'c']);
    expect(headerText(b?.headers.pair)).toEqual(['1', '2']);
    expect(headerText(b?.headers['tally.seq'])).toBe('2');
    expect(b?.headers['tally.idempotency-key']).toBeUndefined();
  });

  it('stamps tally.idempotency-key only when there is one', async () => {
    const { publisher, sender } = setup();
    await publisher.publish(request([rec()], { idempotencyKey: 'key-1' }));
    await publisher.publish(request([rec()]));
    expect(headerText(sender.calls[0]?.records[0]?.headers['tally.idempotency-key'])).toBe('key-1');
    expect('tally.idempotency-key' in (sender.calls[1]?.records[0]?.headers ?? {})).toBe(false);
  });
});

describe('publish: ledger', () => {
  it('records every record UNKNOWN before sending, and the outcomes after', async () => {
    const { publisher, sender, ledger, events } = setup();
    sender.responses.push((records) => [
      sender.ack(records[0] as OutgoingRecord),
      { status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'too big' },
      { status: 'NOT_SENT', message: 'no connection' },
    ]);
    const result = await publisher.publish(request([rec(), rec(), rec()]));
    expect(events).toEqual(['ledger.write#1', 'sender.send', 'ledger.write#2']);

    const [before, after] = ledger.writes;
    expect(before?.stream).toBe('orders-stream');
    expect(before?.firstSeq).toBe(1);
    expect(before?.topic).toBe('orders');
    expect(before?.session).toBe('session-1');
    expect(before?.idempotencyKey).toBeUndefined();
    expect(before?.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'UNKNOWN', 'UNKNOWN']);
    expect(sender.calls[0]?.ledgerAtSend.map((o) => o?.status)).toEqual([
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
    ]);

    expect(after?.firstSeq).toBe(1);
    expect(after?.session).toBe('session-2');
    expect(after?.outcomes).toEqual([
      { status: 'ACKED', partition: 0, offset: '0' },
      { status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'too big' },
      { status: 'NOT_SENT', message: 'no connection' },
    ]);
    expect(result.results.map((r) => (r.kind === 'published' ? r.outcome : undefined))).toEqual(
      after?.outcomes,
    );
    expect(result.warnings).toEqual([]);
  });

  it('treats an outcome the sender did not return as UNKNOWN', async () => {
    const { publisher, sender, ledger } = setup();
    sender.responses.push((records) => [sender.ack(records[0] as OutgoingRecord)]);
    const result = await publisher.publish(request([rec(), rec()]));
    expect(publishedAt(result, 0).outcome.status).toBe('ACKED');
    expect(publishedAt(result, 1).outcome.status).toBe('UNKNOWN');
    expect(ledger.writes[1]?.outcomes.map((o) => o.status)).toEqual(['ACKED', 'UNKNOWN']);
  });

  it('returns the outcomes with a warning when the final ledger write fails', async () => {
    const { publisher, ledger } = setup();
    ledger.failWrite = 2;
    const result = await publisher.publish(request([rec(), rec()]));
    expect(result.results.map((r) => (r.kind === 'published' ? r.outcome.status : r.kind))).toEqual(
      ['ACKED', 'ACKED'],
    );
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toContain('ledger');
    expect(result.warnings[0]).toContain('DynamoDB is down');
    expect(result.warnings[0]).toContain('it says UNKNOWN unless this write lands late');
    expect((await ledger.outcome('orders-stream', 1))?.status).toBe('UNKNOWN');
  });

  it('sends nothing when the first ledger write fails, and records its seqs VOID', async () => {
    const { publisher, ledger, sender } = setup();
    ledger.failWrite = 1;
    const error = await rejection(publisher.publish(request([rec(), rec()])));
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('DynamoDB is down');
    expect(sender.calls).toEqual([]);
    expect((await ledger.outcome('orders-stream', 1))?.status).toBe('VOID');
    expect((await ledger.outcome('orders-stream', 2))?.status).toBe('VOID');
  });

  it('keeps the seqs of a key whose first ledger write failed for its retry, not VOID', async () => {
    const { publisher, ledger, sender } = setup();
    ledger.failWrite = 1;
    await rejection(publisher.publish(request([rec()], { idempotencyKey: 'k1' })));
    expect(await ledger.outcome('orders-stream', 1)).toBeUndefined();
    const retry = await publisher.publish(request([rec()], { idempotencyKey: 'k1' }));
    expect(publishedAt(retry, 0)).toMatchObject({ seq: 1, outcome: { status: 'ACKED' } });
    expect(sender.sentSeqs()).toEqual([1]);
  });

  it('never sends seqs the audit has voided', async () => {
    const { publisher, ledger, sender } = setup();
    await ledger.void(auditVoid(1));
    const error = await rejection(publisher.publish(request([rec()])));
    expect(error).toMatchObject({ name: 'DependencyUnavailableError', status: 503 });
    expect(sender.calls).toEqual([]);
    expect((await ledger.outcome('orders-stream', 1))?.status).toBe('VOID');
  });

  it('refuses a key whose seqs were voided (422: a new key sends with new seqs)', async () => {
    const { publisher, ledger, sender } = setup();
    ledger.failWrite = 1;
    await rejection(publisher.publish(request([rec()], { idempotencyKey: 'k2' })));
    await ledger.void(auditVoid(1));
    const error = await rejection(publisher.publish(request([rec()], { idempotencyKey: 'k2' })));
    expect(error).toMatchObject({ name: 'UnprocessableInputError', field: 'Idempotency-Key' });
    expect(sender.calls).toEqual([]);
  });

  it('allocates under the request deadline and sends under one that keeps 250 ms back for the writes after', async () => {
    const { publisher, allocator, sender } = setup();
    const seen: Record<string, Deadline> = {};
    const allocate = allocator.allocate.bind(allocator);
    allocator.allocate = async (stream, count, topic, deadline) => {
      seen.allocate = deadline as Deadline;
      return allocate(stream, count, topic, deadline);
    };
    const send = sender.send.bind(sender);
    sender.send = async (topic, records, deadline?: Deadline) => {
      if (deadline) seen.send = deadline;
      return send(topic, records, deadline);
    };
    const req = request([rec()]);
    await publisher.publish(req);
    expect(seen.allocate).toBe(req.deadline);
    expect(seen.send?.at).toBeLessThanOrEqual(req.deadline.at - 250);
  });
});

describe('publish: Idempotency-Key', () => {
  it('reuses the seqs, skips ACKED records and resends the others on a retry', async () => {
    const { publisher, sender, ledger, allocator } = setup();
    const records = [
      rec({ value: 'a' }),
      rec({ value: 'b' }),
      rec({ value: 'c' }),
      rec({ key: 'k', value: 'd' }),
    ];
    const ackAll: Respond = (sent) => sent.map((r) => sender.ack(r));
    const partly: Respond = (sent) => [
      sender.ack(sent[0] as OutgoingRecord),
      { status: 'UNKNOWN', message: 'timed out' },
      { status: 'NOT_SENT', message: 'no connection' },
      sender.ack(sent[3] as OutgoingRecord),
    ];
    sender.responses.push(ackAll, partly, ackAll, ackAll);
    // Other requests on the same stream before and after take seqs 1..2 and 7.
    await publisher.publish(request([rec(), rec()]));
    const first = await publisher.publish(request(records, { idempotencyKey: 'retry-me' }));
    await publisher.publish(request([rec()]));
    expect(publishedAt(first, 1).outcome.status).toBe('UNKNOWN');
    expect(publishedAt(first, 2).outcome.status).toBe('NOT_SENT');

    const firstSeqs = [0, 1, 2, 3].map((i) => publishedAt(first, i).seq);
    expect(firstSeqs).toEqual([3, 4, 5, 6]);
    const retry = await publisher.publish(request(records, { idempotencyKey: 'retry-me' }));
    expect([0, 1, 2, 3].map((i) => publishedAt(retry, i).seq)).toEqual(firstSeqs);
    // No new seqs for the retry.
    expect(allocator.calls).toEqual([
      { stream: 'orders-stream', count: 2 },
      { stream: 'orders-stream', count: 4 },
      { stream: 'orders-stream', count: 1 },
    ]);

    const resend = sender.calls[sender.calls.length - 1];
    expect(resend?.records.map((r) => r.value?.toString())).toEqual(['b', 'c']);
    expect(resend?.records.map((r) => headerText(r.headers['tally.seq']))).toEqual(['4', '5']);
    // Same partitions as the first time.
    expect(resend?.records.map((r) => r.partition)).toEqual([
      publishedAt(first, 1).partition,
      publishedAt(first, 2).partition,
    ]);
    // The ACKED records keep the outcome the ledger holds.
    expect(publishedAt(retry, 0).outcome).toEqual(publishedAt(first, 0).outcome);
    expect(publishedAt(retry, 3).outcome).toEqual(publishedAt(first, 3).outcome);
    expect(publishedAt(retry, 1).outcome.status).toBe('ACKED');
    expect(publishedAt(retry, 2).outcome.status).toBe('ACKED');
    // The record for ACKED seqs stays ACKED in the ledger before and after the resend.
    const [before, after] = ledger.writes.slice(-2);
    expect(before?.outcomes.map((o) => o.status)).toEqual(['ACKED', 'UNKNOWN', 'UNKNOWN', 'ACKED']);
    expect(after?.outcomes.map((o) => o.status)).toEqual(['ACKED', 'ACKED', 'ACKED', 'ACKED']);
    expect(after?.idempotencyKey).toBe('retry-me');
    expect(after?.firstSeq).toBe(3);
  });

  it('resends nothing when every record was already ACKED', async () => {
    const { publisher, sender } = setup();
    const records = [rec({ value: 'a' }), rec({ value: 'b' })];
    await publisher.publish(request(records, { idempotencyKey: 'done' }));
    const retry = await publisher.publish(request(records, { idempotencyKey: 'done' }));
    expect(sender.sentSeqs()).toEqual([1, 2]);
    expect([0, 1].map((i) => publishedAt(retry, i).outcome.status)).toEqual(['ACKED', 'ACKED']);
  });

  it('writes no ledger block and sends nothing again when every record was already ACKED', async () => {
    const { publisher, sender, ledger } = setup();
    const records = [rec({ value: 'a' })];
    await publisher.publish(request(records, { idempotencyKey: 'settled' }));
    const writes = ledger.writes.length;
    await publisher.publish(request(records, { idempotencyKey: 'settled' }));
    expect(sender.calls).toHaveLength(1);
    expect(ledger.writes.length).toBe(writes);
  });

  it('keeps a refusal that a resend would repeat (MESSAGE_TOO_LARGE) and resends the retriable ones', async () => {
    const { publisher, sender } = setup();
    const records = [rec({ value: 'a' }), rec({ value: 'b' })];
    sender.responses.push(() => [
      { status: 'FAILED', kafkaError: 'MESSAGE_TOO_LARGE', message: 'too big' },
      { status: 'FAILED', kafkaError: 'NOT_ENOUGH_REPLICAS', message: 'not enough replicas' },
    ]);
    await publisher.publish(request(records, { idempotencyKey: 'partly-refused' }));
    const retry = await publisher.publish(request(records, { idempotencyKey: 'partly-refused' }));
    const resend = sender.calls[sender.calls.length - 1];
    expect(resend?.records.map((r) => r.value?.toString())).toEqual(['b']);
    expect(publishedAt(retry, 0).outcome).toMatchObject({
      status: 'FAILED',
      kafkaError: 'MESSAGE_TOO_LARGE',
    });
    expect(publishedAt(retry, 1).outcome.status).toBe('ACKED');
  });

  it("resends a record without its own timestamp with the first attempt's time", async () => {
    const { publisher, sender } = setup();
    const records = [rec({ value: 'a' })];
    sender.responses.push(() => [{ status: 'UNKNOWN', message: 'timed out' }]);
    await publisher.publish(request(records, { idempotencyKey: 'same-time' }));
    await publisher.publish({
      ...request(records, { idempotencyKey: 'same-time' }),
      now: NOW + 60_000,
    });
    const [first, second] = sender.calls.map((call) => call.records[0]?.timestamp);
    expect(first).toBe(NOW);
    expect(second).toBe(NOW);
  });

  it('refuses the same key with different records (422) and sends nothing', async () => {
    const { publisher, sender, allocator } = setup();
    await publisher.publish(request([rec({ value: 'a' })], { idempotencyKey: 'k' }));
    for (const other of [
      request([rec({ value: 'b' })], { idempotencyKey: 'k' }),
      request([rec({ value: 'a' }), rec({ value: 'a' })], { idempotencyKey: 'k' }),
      request([rec({ value: 'a' })], { idempotencyKey: 'k', stream: 'elsewhere' }),
      request([rec({ value: 'a' })], { idempotencyKey: 'k', topic: 'wide' }),
    ]) {
      const error = await rejection(publisher.publish(other));
      expect(error).toBeInstanceOf(UnprocessableInputError);
      expect((error as UnprocessableInputError).status).toBe(422);
      expect((error as UnprocessableInputError).field).toBe('Idempotency-Key');
    }
    expect(sender.calls).toHaveLength(1);
    expect(allocator.calls.filter((c) => c.stream === 'orders-stream')).toHaveLength(1);
  });

  it('stores one item per key: the fingerprint, the seqs and the lock, freed at the end', async () => {
    const { publisher, keyed } = setup();
    const req = request([rec({ value: 'a' }), rec({ value: 'b' })], { idempotencyKey: 'r' });
    await publisher.publish(req);
    expect(keyed.stored.get('r')).toEqual({
      idempotencyKey: 'r',
      fingerprint: fingerprint(req),
      stream: 'orders-stream',
      topic: 'orders',
      firstSeq: 1,
      count: 2,
      timestamp: req.now,
      lockedUntil: 0,
    });
  });

  it('stores no reservation without a key', async () => {
    const { publisher, keyed } = setup();
    await publisher.publish(request([rec()]));
    expect(keyed.stored.size).toBe(0);
  });
});

describe('publish: the fast path (a request ending within the audit horizon of its seqs)', () => {
  const seqsOf = (result: PublishResult) => ({
    answer: result.results.map((r) => (r.kind === 'published' ? r.seq : 0)),
    settled: isSettledResult(result),
  });

  it('no key: allocate, [send], outcomes — no block opened before the send', async () => {
    const { publisher, dynamo, events } = setup([], 60_000);
    const result = await publisher.publish(request([rec()]));
    expect(publishedAt(result, 0).outcome.status).toBe('ACKED');
    expect(dynamo).toEqual(['allocate', 'ledger.write']);
    expect(events.indexOf('sender.send')).toBeLessThan(
      events.findIndex((e) => e.startsWith('ledger')),
    );
  });

  it('opens the block first when the deadline reaches past the horizon, or for another topic', async () => {
    const late = setup([], 5_000);
    await late.publisher.publish(request([rec()])); // its deadline is 10 s away
    expect(late.dynamo).toEqual(['allocate', 'ledger.open', 'ledger.write']);
    const other = setup([], 60_000);
    await other.publisher.publish(request([rec()], { topic: 'single' }));
    other.dynamo.length = 0;
    // The stream's home is `single` (its first allocation's): another topic waits for the block.
    await other.publisher.publish(request([rec()], { topic: 'orders' }));
    expect(other.dynamo).toEqual(['allocate', 'ledger.open', 'ledger.write']);
  });

  it('tells the ledger when the audit may first judge the seqs it opens: their allocation plus the horizon, less clock skew', async () => {
    const { publisher, ledger } = setup([], 5_000);
    const before = Date.now();
    await publisher.publish(request([rec()])); // its deadline is 10 s away: opened first
    const [judgedFrom] = ledger.judgedFrom;
    expect(judgedFrom).toBeGreaterThanOrEqual(before + 5_000 - 2_000);
    expect(judgedFrom).toBeLessThanOrEqual(Date.now() + 5_000 - 2_000);
  });

  it('key, seqs leased: the claim is the one call before the send, and a replay is answered from the refused claim', async () => {
    const { publisher, dynamo, sender, warmLease } = setup([], 60_000, true);
    await warmLease(3); // a lease with seqs left
    dynamo.length = 0;
    const req = request([rec()], { idempotencyKey: 'k' });
    const first = await publisher.publishAnswered(req, seqsOf);
    expect(dynamo).toEqual(['key.claim', 'ledger.write', 'key.answer']);
    dynamo.length = 0;
    const sent = sender.calls.length;
    const again = await publisher.publishAnswered(req, seqsOf);
    expect(again).toEqual({ answer: first.answer, replayed: true, warnings: [] });
    expect(dynamo).toEqual(['key.claim']);
    expect(sender.calls).toHaveLength(sent);
    // The seqs the refused claim took go to the next request: no hole.
    const next = await publisher.publish(request([rec()]));
    expect(publishedAt(next, 0).seq).toBe(((first.answer as number[])[0] as number) + 1);
  });

  it('key used for another request, seqs leased: 422, nothing sent', async () => {
    const { publisher, sender, warmLease } = setup([], 60_000, true);
    await warmLease(3); // a lease with seqs left
    await publisher.publish(request([rec({ value: 'a' })], { idempotencyKey: 'k' }));
    const sent = sender.calls.length;
    const error = await rejection(
      publisher.publish(request([rec({ value: 'b' })], { idempotencyKey: 'k' })),
    );
    expect(error).toMatchObject({ name: 'UnprocessableInputError', field: 'Idempotency-Key' });
    expect(sender.calls).toHaveLength(sent);
  });
});

describe('publish: DynamoDB calls per request, write-ahead path (one item per Idempotency-Key)', () => {
  /** A transport's shape: the answer is the result's seqs; settled when all are final. */
  const seqsOf = (result: PublishResult) => ({
    answer: result.results.map((r) => (r.kind === 'published' ? r.seq : 0)),
    settled: isSettledResult(result),
  });

  it('no key: allocate, ledger open, ledger outcomes', async () => {
    const { publisher, dynamo } = setup();
    await publisher.publishAnswered(request([rec()]), seqsOf);
    expect(dynamo).toEqual(['allocate', 'ledger.open', 'ledger.write']);
  });

  it('a batch makes the same calls as one record', async () => {
    const { publisher, dynamo } = setup();
    await publisher.publishAnswered(request(Array.from({ length: 50 }, () => rec())), seqsOf);
    expect(dynamo).toEqual(['allocate', 'ledger.open', 'ledger.write']);
  });

  it('key, first attempt: get, allocate, claim ∥ open, outcomes ∥ answer (6 calls, 4 steps)', async () => {
    const { publisher, dynamo, keyed } = setup();
    const first = await publisher.publishAnswered(
      request([rec()], { idempotencyKey: 'k' }),
      seqsOf,
    );
    expect(first).toEqual({ answer: [1], replayed: false, warnings: [] });
    expect(dynamo).toEqual([
      'key.get',
      'allocate',
      'ledger.open',
      'key.claim',
      'ledger.write',
      'key.answer',
    ]);
    expect(keyed.stored.get('k')).toMatchObject({ firstSeq: 1, lockedUntil: 0, answer: [1] });
  });

  it('key, answered: one read replays the stored answer, nothing sent or written', async () => {
    const { publisher, dynamo, sender } = setup();
    const req = request([rec()], { idempotencyKey: 'k' });
    await publisher.publishAnswered(req, seqsOf);
    dynamo.length = 0;
    const again = await publisher.publishAnswered(req, seqsOf);
    expect(again).toEqual({ answer: [1], replayed: true, warnings: [] });
    expect(dynamo).toEqual(['key.get']);
    expect(sender.calls).toHaveLength(1);
  });

  it('key, unsettled: the retry locks, finds the ledger block, resends only what is not ACKED', async () => {
    const { publisher, dynamo, sender, keyed } = setup();
    const req = request([rec({ value: 'a' }), rec({ value: 'b' })], { idempotencyKey: 'k' });
    sender.responses.push((records) => [
      sender.ack(records[0] as OutgoingRecord),
      { status: 'UNKNOWN', message: 'timed out' },
    ]);
    const first = await publisher.publishAnswered(req, seqsOf);
    expect(keyed.stored.get('k')?.answer).toBeUndefined();
    expect(dynamo.slice(-1)).toEqual(['key.release']);
    expect(first.replayed).toBe(false);
    dynamo.length = 0;
    const retry = await publisher.publishAnswered(req, seqsOf);
    expect(retry.answer).toEqual([1, 2]);
    expect(dynamo).toEqual([
      'key.get',
      'key.lock',
      'ledger.find',
      'ledger.open',
      'ledger.write',
      'key.answer',
    ]);
    expect(sender.sentSeqs()).toEqual([1, 2, 2]);
  });

  it('keeps an earlier UNKNOWN when the resend is refused or not sent (the first copy may have landed)', async () => {
    // Chaos seed 1: attempt 1 timed out (its records landed), the retry could not connect.
    const { publisher, sender, ledger } = setup();
    const req = request([rec({ value: 'a' }), rec({ value: 'b' })], { idempotencyKey: 'k' });
    sender.responses.push((records) =>
      records.map(() => ({ status: 'UNKNOWN', message: 'timed out' })),
    );
    await publisher.publish(req);
    sender.responses.push((records) => [
      { status: 'NOT_SENT', message: 'no connection' },
      sender.ack(records[1] as OutgoingRecord),
    ]);
    const retry = await publisher.publish(req);
    expect(publishedAt(retry, 0).outcome).toMatchObject({
      status: 'UNKNOWN',
      message: expect.stringContaining('an earlier attempt may have written it'),
    });
    expect(publishedAt(retry, 1).outcome.status).toBe('ACKED');
    const recorded = [...ledger.blocks.values()].at(-1);
    expect(recorded?.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'ACKED']);
  });

  it('keeps UNKNOWN when an earlier attempt left no ledger block and the resend is not sent', async () => {
    // Chaos seed 109: on the fast path a keyed first attempt sends before any ledger write; its
    // records landed, its outcome write did not. The retry could not connect.
    const { publisher, sender, ledger } = setup();
    const req = request([rec({ value: 'a' }), rec({ value: 'b' })], { idempotencyKey: 'k109' });
    sender.responses.push((records) =>
      records.map(() => ({ status: 'UNKNOWN', message: 'timed out' })),
    );
    await publisher.publish(req);
    ledger.blocks.clear(); // the first attempt's outcome write never happened
    sender.responses.push((records) =>
      records.map(() => ({ status: 'NOT_SENT', message: 'no connection' })),
    );
    const retry = await publisher.publish(req);
    for (const i of [0, 1]) {
      expect(publishedAt(retry, i).outcome).toMatchObject({
        status: 'UNKNOWN',
        message: expect.stringContaining('left no outcome in the ledger'),
      });
    }
    const recorded = [...ledger.blocks.values()].at(-1);
    expect(recorded?.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'UNKNOWN']);
  });

  it("an attempt's outcome write that lands after its retry opened the block changes nothing", async () => {
    // Attempts 1 and 2 could not connect; attempt 2's outcome write (NOT_SENT) was still on its
    // way when attempt 3 opened the block and sent (its records landed, its answer did not). When
    // attempt 2's write lands late it must not put "not sent" over attempt 3's "may have landed":
    // attempt 4, which cannot connect either, would then say NOT_SENT for records in the log.
    const { publisher, sender, ledger } = setup();
    const req = request([rec({ value: 'a' }), rec({ value: 'b' })], { idempotencyKey: 'late' });
    const notSent = (records: readonly OutgoingRecord[]): RecordOutcome[] =>
      records.map(() => ({ status: 'NOT_SENT', message: 'not connected to Kafka' }));
    sender.responses.push(notSent, notSent);
    sender.responses.push((records) =>
      records.map(() => ({ status: 'UNKNOWN', message: 'timed out' })),
    );
    sender.responses.push(notSent);
    await publisher.publish(req);
    ledger.lateWrite = 2; // attempt 2's outcome write
    const second = await publisher.publish(req);
    expect(second.warnings.join()).toContain('outcomes not recorded');
    await publisher.publish(req); // attempt 3: opens the block, sends, UNKNOWN
    expect(await ledger.landLate()).toBeUndefined(); // refused: the block is attempt 3's now
    expect((await ledger.outcome('orders-stream', 1))?.status).toBe('UNKNOWN');
    const fourth = await publisher.publish(req);
    for (const i of [0, 1]) {
      expect(publishedAt(fourth, i).outcome).toMatchObject({
        status: 'UNKNOWN',
        message: expect.stringContaining('an earlier attempt may have written it'),
      });
    }
    const recorded = [...ledger.blocks.values()].at(-1);
    expect(recorded?.outcomes.map((o) => o.status)).toEqual(['UNKNOWN', 'UNKNOWN']);
  });

  it('an outcome write on the fast path lands only where no block is yet', async () => {
    // The fast path sends before any ledger write: its outcome write expects no block. One that
    // arrives after a retry opened the block (or the audit filled it) changes nothing.
    const { publisher, sender, ledger } = setup([], 60_000, true);
    const req = request([rec({ value: 'a' })], { idempotencyKey: 'fast' });
    sender.responses.push((records) =>
      records.map(() => ({ status: 'UNKNOWN', message: 'timed out' })),
    );
    ledger.lateWrite = 1;
    const first = await publisher.publish(req);
    expect(first.warnings.join()).toContain('no block holds these seqs yet');
    expect(ledger.blocks.size).toBe(0);
    sender.responses.push((records) => records.map(() => ({ status: 'NOT_SENT', message: 'no' })));
    await publisher.publish(req); // the retry: opens UNKNOWN, cannot connect, keeps UNKNOWN
    const before = await ledger.outcome('orders-stream', 1);
    expect(await ledger.landLate()).toBeUndefined();
    expect(await ledger.outcome('orders-stream', 1)).toEqual(before);
  });

  it('refuses a key another request holds (409, retriable) and sends nothing', async () => {
    const { publisher, keyed, sender } = setup();
    keyed.stored.set('busy', {
      idempotencyKey: 'busy',
      fingerprint: fingerprint(request([rec()], { idempotencyKey: 'busy' })),
      stream: 'orders-stream',
      topic: 'orders',
      firstSeq: 7,
      count: 1,
      timestamp: NOW,
      lockedUntil: Date.now() + 60_000,
    });
    const error = await rejection(
      publisher.publishAnswered(request([rec()], { idempotencyKey: 'busy' }), seqsOf),
    );
    expect(error).toMatchObject({ name: 'ConflictError', status: 409, retriable: true });
    expect(sender.calls).toEqual([]);
  });

  it('a first attempt that loses the race for its key sends nothing and records its seqs VOID', async () => {
    const { publisher, keyed, sender, ledger } = setup();
    const req = request([rec()], { idempotencyKey: 'race' });
    // The other attempt claims the key between this one's read and its claim.
    const claim = keyed.claim.bind(keyed);
    keyed.claim = async (item) => {
      await claim({ ...item, firstSeq: 99, lockedUntil: Date.now() + 60_000 });
      return claim(item);
    };
    const error = await rejection(publisher.publishAnswered(req, seqsOf));
    expect(error).toMatchObject({ name: 'ConflictError', status: 409 });
    expect(sender.calls).toEqual([]);
    expect((await ledger.outcome('orders-stream', 1))?.status).toBe('VOID');
  });

  it('an answer that could not be stored is a warning: the retry keeps the seqs and sends nothing again', async () => {
    const { publisher, keyed, sender } = setup();
    const finish = keyed.finish.bind(keyed);
    keyed.finish = async (key, held, answer) => {
      if (answer !== undefined) throw new Error('DynamoDB is down');
      return finish(key, held, answer);
    };
    const req = request([rec()], { idempotencyKey: 'lost-answer' });
    const first = await publisher.publishAnswered(req, seqsOf);
    expect(first.answer).toEqual([1]);
    expect(first.warnings.join()).toContain('answer was not stored');
    keyed.finish = finish;
    // Its lock lasts until the first attempt's deadline, when it can no longer send.
    const item = keyed.stored.get('lost-answer') as KeyedPublish;
    keyed.stored.set('lost-answer', { ...item, lockedUntil: Date.now() - 1 });
    const retry = await publisher.publishAnswered(req, seqsOf);
    expect(retry).toEqual({ answer: [1], replayed: false, warnings: [] });
    expect(sender.sentSeqs()).toEqual([1]);
    expect(keyed.stored.get('lost-answer')?.answer).toEqual([1]);
  });

  it('frees the key when the request fails after taking it, so a retry need not wait', async () => {
    const { publisher, keyed, ledger } = setup();
    ledger.failWrite = 1;
    const req = request([rec()], { idempotencyKey: 'free' });
    await rejection(publisher.publishAnswered(req, seqsOf));
    expect(keyed.stored.get('free')).toMatchObject({ firstSeq: 1, lockedUntil: 0 });
    expect((await publisher.publishAnswered(req, seqsOf)).answer).toEqual([1]);
  });
});

describe('fingerprint', () => {
  const base = () =>
    request([
      rec({ key: 'k', value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
      rec({ value: 'w' }),
    ]);

  it('is stable for equal requests', () => {
    expect(fingerprint(base())).toBe(fingerprint(base()));
    expect(fingerprint(base())).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('ignores the idempotency key, deadline and request time', () => {
    const a = base();
    const b: PublishRequest = {
      ...a,
      idempotencyKey: 'other',
      now: a.now + 1,
      deadline: new Deadline(0),
    };
    expect(fingerprint(b)).toBe(fingerprint(a));
  });

  it('differs when any byte, header, partition, timestamp, topic or stream differs', () => {
    const original = fingerprint(base());
    const variants: Array<[string, PublishRequest]> = [
      [
        'value byte',
        request([
          rec({ key: 'k', value: 'V', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'key byte',
        request([
          rec({ key: 'K', value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'no key',
        request([
          rec({ value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'null key',
        request([
          rec({ key: null, value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'header value',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['h', 'y']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'header name',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['g', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'empty header value',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['h', '']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'no header',
        request([rec({ key: 'k', value: 'v', partition: 1, timestamp: 5 }), rec({ value: 'w' })]),
      ],
      [
        'partition',
        request([
          rec({ key: 'k', value: 'v', partition: 2, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'no partition',
        request([
          rec({ key: 'k', value: 'v', headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'timestamp',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 6 }),
          rec({ value: 'w' }),
        ]),
      ],
      [
        'second record',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'W' }),
        ]),
      ],
      [
        'extra record',
        request([
          rec({ key: 'k', value: 'v', partition: 1, headers: [['h', 'x']], timestamp: 5 }),
          rec({ value: 'w' }),
          rec(),
        ]),
      ],
      ['stream', { ...base(), stream: 'other-stream' }],
      ['topic', { ...base(), topic: 'wide' }],
    ];
    const prints = variants.map(([what, req]) => [what, fingerprint(req)] as const);
    for (const [what, print] of prints) expect(print, what).not.toBe(original);
    expect(new Set(prints.map(([, p]) => p)).size).toBe(variants.length);
  });

  it('distinguishes a null value from an empty one and STRING from BINARY', () => {
    const empty = request([rec({ value: '' })]);
    const nullValue = request([rec({ value: null })]);
    const absent = request([rec()]);
    const binary = request([{ ...rec(), value: { type: 'BINARY', bytes: Buffer.from('v') } }]);
    const string = request([rec({ value: 'v' })]);
    const prints = [empty, nullValue, absent, binary, string].map(fingerprint);
    expect(new Set(prints).size).toBe(5);
  });

  it('distinguishes a byte moved from the key to the value', () => {
    expect(fingerprint(request([rec({ key: 'ab', value: 'c' })]))).not.toBe(
      fingerprint(request([rec({ key: 'a', value: 'bc' })])),
    );
  });
});
