import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, type ISocketFactory, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransactionalProducer } from '../../functions/adapters/kafka/transactional-producer.js';
import {
  kafkaErrorType,
  TransactionInDoubtError,
  TransactionNotCommittedError,
} from '../../functions/adapters/kafka/txn-errors.js';
import type { OutgoingRecord } from '../../functions/core/publish/ports.js';
import { Deadline } from '../../functions/core/shared/deadline.js';
import { type KafkaCluster, startKafkaCluster } from '../../infra/local/kafka-cluster.js';
import { createTopicsEverywhere } from '../helpers/topics.js';
import { uniqueName } from '../helpers/unique-name.js';

// Issue 33: the transactional producer adapter's failure paths on three brokers (replication
// factor 3, min ISR 2, the transaction state log replicated the same way: infra/local/kafka/
// cluster.properties). Faults are injected at the moment a request goes out: every client of an
// adapter here connects through a wiretap (its socketFactory) that sees each request's API key as
// it is written, and can hold the write, pause (SIGSTOP) or kill (SIGKILL) the broker it goes to,
// or drop the broker's answer. What a read_committed consumer sees is read back after each case by
// a plain kafkajs consumer (readUncommitted: false) that reads until a committed marker written
// last to every partition by a plain kafkajs transactional producer: an open transaction left
// behind would hold the markers back and the read would fail on its bound.

const CONTROLLER = 1; // the one KRaft controller, never faulted; clients bootstrap from it
const API = { PRODUCE: 0, INIT_PRODUCER_ID: 22, END_TXN: 26 } as const;
const PARTITIONS = [0, 1, 2];
const STATE_TOPIC = '__transaction_state';
const STATE_PARTITIONS = 10; // transaction.state.log.num.partitions
const REQUEST_TIMEOUT_MS = 5000;

interface Tap {
  readonly apiKey: number;
  /** Only requests to this broker. */
  readonly node?: number;
  /** Runs before the request is written; the write waits for a promise it answers. */
  readonly before?: (node: number) => Promise<unknown> | undefined;
  /** Runs right after the request is written. */
  readonly after?: (node: number) => void;
  /** The broker's answer is dropped (and everything after it on that connection), then this runs. */
  readonly onAnswer?: (node: number, socket: Socket) => void;
}

/** A socketFactory whose sockets let one-shot taps act on the requests written to them. */
function createWiretap(nodeOfPort: (port: number) => number) {
  const taps: Tap[] = [];
  /** Every request written, in order: its API key and when (performance.now()). */
  const written: Array<{ readonly apiKey: number; readonly at: number }> = [];
  const factory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    const node = nodeOfPort(port);
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    let answerTap: Tap | undefined;
    let dropping = false;
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      // kafkajs writes each request whole: size (int32), api key (int16), version, correlation id.
      const apiKey = Buffer.isBuffer(chunk) && chunk.length >= 6 ? chunk.readInt16BE(4) : -1;
      written.push({ apiKey, at: performance.now() });
      const at = taps.findIndex(
        (t) => t.apiKey === apiKey && (t.node === undefined || t.node === node),
      );
      if (at < 0) return write(chunk, ...rest);
      const tap = taps.splice(at, 1)[0] as Tap;
      const go = () => {
        if (tap.onAnswer) answerTap = tap;
        write(chunk, ...rest);
        tap.after?.(node);
      };
      const held = tap.before?.(node);
      if (held) held.then(go, go);
      else go();
      return true;
    }) as typeof socket.write;
    const emit = socket.emit.bind(socket) as (
      event: string | symbol,
      ...args: unknown[]
    ) => boolean;
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event === 'data' && (dropping || answerTap)) {
        const tap = answerTap;
        answerTap = undefined;
        dropping = true;
        tap?.onAnswer?.(node, socket);
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
    return socket;
  };
  return {
    factory,
    written,
    /** Acts on the next request with `tap.apiKey` (to `tap.node`), once. */
    next(tap: Tap) {
      taps.push(tap);
    },
    get armed() {
      return taps.length;
    },
  };
}

/** Java's String.hashCode: the transaction coordinator of an id leads its state partition. */
function statePartitionOf(txnId: string): number {
  let hash = 0;
  for (let i = 0; i < txnId.length; i++) hash = (Math.imul(31, hash) + txnId.charCodeAt(i)) | 0;
  return (hash === -2147483648 ? 0 : Math.abs(hash)) % STATE_PARTITIONS;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const within = (ms: number) => new Deadline(Date.now() + ms);
const record = (partition: number, value: string): OutgoingRecord => ({
  partition,
  key: null,
  value: Buffer.from(value),
  headers: {},
  timestamp: Date.now(),
});

type Seen = Map<string, Array<{ partition: number; offset: string }>>;

describe('transactions on three brokers under faults', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'tally-txn-faults-'));
  let cluster: KafkaCluster;
  let admin: Admin;
  const topics: string[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  const started = Date.now();

  const nodeOfPort = (port: number) =>
    cluster.nodes.find((n) => n.bootstrap.endsWith(`:${port}`))?.id ?? -1;
  const plainKafka = (clientId: string, socketFactory?: ISocketFactory) =>
    new Kafka({
      clientId,
      brokers: [cluster.node(CONTROLLER).bootstrap],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: REQUEST_TIMEOUT_MS,
      ...(socketFactory ? { socketFactory } : {}),
    });

  /** An adapter of `txnId` on a client of its own, tapped. */
  function adapterOf(txnId: string) {
    const tap = createWiretap(nodeOfPort);
    const logged: string[] = [];
    const producer = createTransactionalProducer(plainKafka(uniqueName('txn'), tap.factory), {
      txnId,
      transactionTimeoutMs: 30_000,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      log: (_level, message, extra) => logged.push(`${message} ${JSON.stringify(extra ?? {})}`),
    });
    closers.push(() => producer.close());
    return { producer, tap, logged };
  }

  /** Leader and ISR of each partition of the transaction state log. */
  async function stateLeaders() {
    const { topics: [state] = [] } = await admin.fetchTopicMetadata({ topics: [STATE_TOPIC] });
    return new Map((state?.partitions ?? []).map((p) => [p.partitionId, p]));
  }

  /** A fresh transactional id whose coordinator is `node`, on a state partition fully in sync. */
  async function txnIdCoordinatedBy(nodes: number | number[], purpose: string): Promise<string> {
    const leaders = await stateLeaders();
    const among = new Set([nodes].flat());
    for (let i = 0; i < 10_000; i++) {
      const txnId = uniqueName(purpose);
      const p = leaders.get(statePartitionOf(txnId));
      if (p && among.has(p.leader) && p.isr.length === 3) return txnId;
    }
    throw new Error(
      `no state partition led by ${[...among]} with 3 in sync: ${JSON.stringify([...leaders])}`,
    );
  }

  /** Leader of `partition` of `topic`, as node 1 says. */
  async function leaderOf(topic: string, partition: number): Promise<number> {
    const { topics: [t] = [] } = await admin.fetchTopicMetadata({ topics: [topic] });
    return t?.partitions.find((p) => p.partitionId === partition)?.leader ?? -1;
  }

  /** Until `check` holds (polled), or fails with `what` after `ms`. */
  async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
    const bound = Date.now() + ms;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > bound) throw new Error(`${what}: not within ${ms} ms`);
      await sleep(200);
    }
  }

  /**
   * What a read_committed consumer sees in `topic`: each value with every place it was seen. A
   * plain kafkajs transactional producer first commits a marker to every partition; the consumer
   * reads from the beginning until it has every marker.
   */
  async function committedRead(topic: string): Promise<Seen> {
    const kafka = plainKafka(uniqueName('reader'));
    const marker = `marker-${uniqueName('m')}`;
    const markers = kafka.producer({
      transactionalId: uniqueName('marker'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await markers.connect();
    try {
      // After a broker was killed the transaction coordinator may be unavailable a while (seen in
      // a full run: InitProducerId 'The group coordinator is not available' past kafkajs's
      // retries): this reader's own marker transaction is asked again, for 60 s.
      const until = Date.now() + 60_000;
      for (;;) {
        try {
          const txn = await markers.transaction();
          await txn.send({
            topic,
            messages: PARTITIONS.map((partition) => ({ partition, value: marker })),
          });
          await txn.commit();
          break;
        } catch (error) {
          if ((error as { retriable?: boolean }).retriable !== true || Date.now() > until)
            throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    } finally {
      await markers.disconnect();
    }
    const consumer = kafka.consumer({
      groupId: uniqueName('reader'),
      readUncommitted: false,
      maxWaitTimeInMs: 100,
    });
    await consumer.connect();
    const seen: Seen = new Map();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const done = new Set<number>();
      await new Promise<void>((resolve, reject) => {
        const bound = setTimeout(
          () =>
            reject(
              new Error(`read_committed: markers of partitions ${[...done]} only, after 60 s`),
            ),
          60_000,
        );
        consumer
          .run({
            eachMessage: async ({ partition, message }) => {
              const value = message.value?.toString() ?? '';
              if (value === marker) done.add(partition);
              else if (!value.startsWith('marker-'))
                seen.set(value, [
                  ...(seen.get(value) ?? []),
                  { partition, offset: message.offset },
                ]);
              if (done.size === PARTITIONS.length) {
                clearTimeout(bound);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return seen;
  }

  /** Each value seen once, at the place given (when given). */
  function expectOnce(
    seen: Seen,
    values: readonly string[],
    places?: ReadonlyArray<{ partition: number; offset: string }>,
  ) {
    values.forEach((value, i) => {
      expect(seen.get(value), `${value} seen by read_committed`).toEqual([
        places?.[i] ?? expect.anything(),
      ]);
    });
  }

  /**
   * An in-doubt transaction, settled (its id initialised again): either every record is seen once
   * at the offsets the error gave, or none is seen and nothing is at those offsets. Answers which.
   */
  function settled(
    seen: Seen,
    values: readonly string[],
    error: TransactionInDoubtError,
  ): 'committed' | 'aborted' {
    expect(error.offsets).toHaveLength(values.length);
    const atOffsets = new Set([...seen.values()].flat().map((p) => `${p.partition}@${p.offset}`));
    const found = values.filter((v) => seen.has(v));
    if (found.length === 0) {
      for (const place of error.offsets)
        expect(atOffsets.has(`${place.partition}@${place.offset}`)).toBe(false);
      return 'aborted';
    }
    expectOnce(seen, values, error.offsets);
    return 'committed';
  }

  beforeAll(async () => {
    cluster = await startKafkaCluster(join(workDir, 'kafka'), {
      nodes: 3,
      controllers: 1,
      heap: '256m',
    });
    await cluster.waitUntilServing(120_000, (id) =>
      console.warn(`kafka node ${id} exited while the cluster started: started again`),
    );
    admin = plainKafka('tally-test-txn-faults-admin').admin();
    await admin.connect();
    // Every topic now, while all three brokers are up (createTopicsEverywhere asks each of them).
    for (let i = 0; i < 7; i++) topics.push(uniqueName(`txn-faults-${i}`));
    await createTopicsEverywhere(
      admin,
      topics.map((topic) => ({
        topic,
        // Each broker leads one partition.
        replicaAssignment: [
          { partition: 0, replicas: [1, 2, 3] },
          { partition: 1, replicas: [2, 3, 1] },
          { partition: 2, replicas: [3, 1, 2] },
        ],
      })),
    );
    // The transaction state log is created at the first FindCoordinator of a transactional id.
    const first = plainKafka('tally-test-txn-faults-first').producer({
      transactionalId: uniqueName('first'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await first.connect();
    await (await first.transaction()).abort();
    await first.disconnect();
    await until('every state partition led with 3 in sync', 60_000, async () => {
      const leaders = await stateLeaders();
      return (
        leaders.size === STATE_PARTITIONS &&
        [...leaders.values()].every((p) => p.leader > 0 && p.isr.length === 3)
      );
    });
    console.info(`txn-faults: cluster serving after ${Date.now() - started} ms`);
  });

  afterAll(async () => {
    for (const close of closers) await close().catch(() => {});
    await admin?.disconnect().catch(() => {});
    await cluster?.stop();
    rmSync(workDir, { recursive: true, force: true });
    console.info(`txn-faults: ${Date.now() - started} ms in all`);
  });

  it('fencing an id whose transaction is open: its time, printed (docs/transactions.md, defect 5)', async () => {
    const topic = topics[0] as string;
    const times: number[] = [];
    const retries: string[] = [];
    for (let i = 0; i < 5; i++) {
      const txnId = await txnIdCoordinatedBy([1, 2, 3], 'fence-time');
      const zombie = plainKafka(uniqueName('zombie')).producer({
        transactionalId: txnId,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      closers.push(() => zombie.disconnect());
      await zombie.connect();
      const open = await zombie.transaction();
      await open.send({ topic, messages: [{ partition: i % 3, value: `open-${i}` }] });
      const { producer, tap } = adapterOf(txnId);
      const t0 = performance.now();
      await producer.fence(within(20_000));
      times.push(performance.now() - t0);
      // The transactional id's InitProducerId attempts (the first request of this kind went for
      // connect()'s idempotent producer id): the gaps are kafkajs's retry backoffs.
      const inits = tap.written.filter((w) => w.apiKey === API.INIT_PRODUCER_ID).slice(1);
      retries.push(
        `${inits.length} attempts over ${((inits.at(-1)?.at ?? 0) - (inits[0]?.at ?? 0)).toFixed(0)} ms`,
      );
      expect(kafkaErrorType(await open.commit().catch((e: unknown) => e))).toBe(
        'INVALID_PRODUCER_EPOCH',
      );
    }
    const sorted = [...times].sort((x, y) => x - y);
    console.info(
      `txn-faults: fencing an id with an open transaction (NODE_ENV=${process.env.NODE_ENV}): ${times.map((t) => t.toFixed(0)).join(', ')} ms; median ${sorted[2]?.toFixed(0)} ms; InitProducerId ${retries.join(', ')}`,
    );
    const seen = await committedRead(topic);
    for (let i = 0; i < 5; i++) expect(seen.has(`open-${i}`)).toBe(false);
  });

  it('2. fenced by another holder between send and commit: FENCED, nothing of it seen; the new holder seen once', async () => {
    const topic = topics[0] as string;
    const txnId = await txnIdCoordinatedBy(2, 'fenced');
    const a = adapterOf(txnId);
    const b = adapterOf(txnId);
    let fencedIn = -1;
    a.tap.next({
      apiKey: API.END_TXN,
      before: async () => {
        const t0 = performance.now();
        await b.producer.fence(within(20_000));
        fencedIn = performance.now() - t0;
      },
    });
    const error = await a.producer
      .send(topic, [record(0, 'a0'), record(1, 'a1'), record(2, 'a2')], within(20_000))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionNotCommittedError);
    expect(error).toMatchObject({ reason: 'FENCED', txnId });
    const sent = await b.producer.send(topic, [record(0, 'b0'), record(2, 'b2')], within(20_000));
    const seen = await committedRead(topic);
    expect([...seen.keys()].sort()).toEqual(['b0', 'b2']);
    expectOnce(seen, ['b0', 'b2'], sent.offsets);
    console.info(
      `txn-faults 2: fence of an id with an open transaction took ${fencedIn.toFixed(0)} ms`,
    );
  });

  it('3. a zombie thaws after a take-over: its commit fails INVALID_PRODUCER_EPOCH, its records never seen', async () => {
    const topic = topics[1] as string;
    const txnId = await txnIdCoordinatedBy(3, 'zombie');
    const zombie = adapterOf(txnId);
    const successor = adapterOf(txnId);
    let thaw: () => void = () => {};
    const frozen = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    let commitGoing: () => void = () => {};
    const atCommit = new Promise<void>((resolve) => {
      commitGoing = resolve;
    });
    zombie.tap.next({
      apiKey: API.END_TXN,
      before: () => {
        commitGoing();
        return frozen; // the container freezes with its EndTxn about to go
      },
    });
    const failing = zombie.producer
      .send(topic, [record(1, 'z1'), record(2, 'z2')], within(30_000))
      .catch((e: unknown) => e);
    await atCommit;
    await successor.producer.fence(within(20_000)); // the lease was taken over
    const taken = await successor.producer.send(topic, [record(1, 's1')], within(20_000));
    thaw();
    const error = await failing;
    expect(error).toBeInstanceOf(TransactionNotCommittedError);
    expect(error).toMatchObject({ reason: 'FENCED' });
    expect(kafkaErrorType(error)).toBe('INVALID_PRODUCER_EPOCH');
    const seen = await committedRead(topic);
    expect([...seen.keys()].sort()).toEqual(['s1']);
    expectOnce(seen, ['s1'], taken.offsets);
  });

  it('4. back-to-back transactions while the state partition leader moves: each committed within its deadline, or in doubt at the move (kafkajs defect 1) and settled by a fence', async () => {
    const topic = topics[2] as string;
    const from = 2;
    const txnId = await txnIdCoordinatedBy(from, 'b2b');
    const partition = statePartitionOf(txnId);
    const { producer } = adapterOf(txnId);
    const DEADLINE_MS = 10_000;
    const committed: Array<{
      value: string;
      ms: number;
      offsets: Array<{ partition: number; offset: string }>;
    }> = [];
    const failures: string[] = [];
    // EndTxn answered by a coordinator still loading the moved partition
    // (COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR) is in doubt: kafkajs never sends EndTxn
    // again (docs/transactions.md, defect 1), where Kafka's Java client would. Seen in 1 of 3 full
    // runs. Such a transaction must still end definite: settled by a fence below.
    const inDoubt: Array<{ value: string; error: TransactionInDoubtError }> = [];
    let moved = false;
    let movedAfter = -1;
    let movedAt = -1;
    const moving = (async () => {
      await until(
        '5 transactions before the move',
        60_000,
        async () => committed.length + failures.length >= 5,
      );
      movedAfter = committed.length + failures.length;
      // The coordinator leaves the partition's replicas: leadership goes to another broker, which
      // loads the partition's transactions while this producer keeps committing.
      await admin.alterPartitionReassignments({
        topics: [{ topic: STATE_TOPIC, partitionAssignment: [{ partition, replicas: [3, 1] }] }],
      });
      await until('the state partition led elsewhere', 60_000, async () => {
        const p = (await stateLeaders()).get(partition);
        return p !== undefined && p.leader !== from && p.leader > 0;
      });
      movedAt = committed.length + failures.length;
      moved = true;
    })();
    moving.catch(() => {});
    let after = 0;
    for (let i = 0; after < 10 && i < 500; i++) {
      const value = `t${i}`;
      const t0 = performance.now();
      try {
        const sent = await producer.send(topic, [record(i % 3, value)], within(DEADLINE_MS));
        committed.push({ value, ms: performance.now() - t0, offsets: [...sent.offsets] });
      } catch (error) {
        const why = `${value}: ${(error as Error).name} ${(error as { reason?: string }).reason} after ${(performance.now() - t0).toFixed(0)} ms (${kafkaErrorType(error)})`;
        if (
          error instanceof TransactionInDoubtError &&
          /COORDINATOR|LOAD_IN_PROGRESS/.test(kafkaErrorType(error))
        ) {
          inDoubt.push({ value, error });
          console.info(`txn-faults 4: in doubt (kafkajs defect 1): ${why}`);
        } else failures.push(why);
      }
      if (moved) after++;
    }
    await moving;
    // An in-doubt commit leaves kafkajs's producer unusable (defect 1): the adapter retires it, and
    // a fence of the id makes the transaction's fate final before the read.
    if (inDoubt.length > 0) await producer.fence(within(20_000));
    const times = committed.map((c) => c.ms).sort((x, y) => x - y);
    console.info(
      `txn-faults 4: ${committed.length} committed, ${failures.length} failed; move asked after ${movedAfter}, seen after ${movedAt}; p50 ${times[Math.floor(times.length / 2)]?.toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms ${failures.join('; ')}`,
    );
    expect(failures).toEqual([]);
    // The move is crossed by transactions that commit: at most one is in doubt at the move.
    expect(inDoubt.length).toBeLessThanOrEqual(1);
    expect(committed.length).toBeGreaterThanOrEqual(14);
    for (const c of committed) expect(c.ms).toBeLessThan(DEADLINE_MS);
    const seen = await committedRead(topic);
    for (const c of committed) expectOnce(seen, [c.value], c.offsets);
    for (const d of inDoubt) settled(seen, [d.value], d.error);
  });

  it('6. a partition leader paused mid-send until its partition moves: never a committed duplicate', async () => {
    const topic = topics[3] as string;
    const paused = 2; // leads partition 1
    expect(await leaderOf(topic, 1)).toBe(paused);
    const txnId = await txnIdCoordinatedBy(CONTROLLER, 'paused-leader');
    const { producer, tap } = adapterOf(txnId);
    await producer.send(topic, [record(0, 'warm')], within(20_000));
    tap.next({
      apiKey: API.PRODUCE,
      node: paused,
      before: () => {
        cluster.pause(paused);
        return undefined;
      },
    });
    const values = ['p0', 'p1', 'p2', 'p1b'];
    const sending = producer
      .send(
        topic,
        [record(0, 'p0'), record(1, 'p1'), record(2, 'p2'), record(1, 'p1b')],
        within(30_000),
      )
      .then(
        (sent) => ({ sent }),
        (error: unknown) => ({ error }),
      );
    try {
      await until('partition 1 led elsewhere', 60_000, async () => {
        const leader = await leaderOf(topic, 1);
        return leader > 0 && leader !== paused;
      });
    } finally {
      cluster.resume(paused);
    }
    const outcome = await sending;
    const next = await producer.send(topic, [record(1, 'after')], within(20_000));
    const seen = await committedRead(topic);
    expectOnce(seen, ['warm', 'after']);
    expect(seen.get('after')).toEqual([next.offsets[0]]);
    if ('sent' in outcome) {
      expectOnce(seen, values, outcome.sent.offsets);
    } else {
      expect(outcome.error).toBeInstanceOf(TransactionNotCommittedError);
      for (const value of values) expect(seen.get(value), value).toBeUndefined();
    }
    console.info(
      `txn-faults 6: the send ${'sent' in outcome ? 'committed' : `failed ${(outcome.error as { reason?: string }).reason} (${kafkaErrorType(outcome.error)})`}`,
    );
    // Node 2 registered again and caught up before the next case pauses or kills another node.
    await until('every replica back in sync', 90_000, async () => {
      const { topics: all } = await admin.fetchTopicMetadata({ topics: [STATE_TOPIC, ...topics] });
      return all.every((t) => t.partitions.every((p) => p.isr.length === p.replicas.length));
    });
  });

  it('5. the coordinator paused past the request deadline: in doubt within the deadline, then settled by fence', async () => {
    const topic = topics[4] as string;
    const coordinator = 3;
    const txnId = await txnIdCoordinatedBy(coordinator, 'commit-timeout');
    const { producer, tap } = adapterOf(txnId);
    await producer.send(topic, [record(0, 'warm')], within(20_000));
    let pausedNode = -1;
    tap.next({
      apiKey: API.END_TXN,
      before: (node) => {
        pausedNode = node;
        cluster.pause(node);
        return undefined;
      },
    });
    const DEADLINE_MS = 3000;
    const MARGIN_MS = 1000;
    const values = ['c0', 'c1', 'c2'];
    const t0 = Date.now();
    const error = await producer
      .send(
        topic,
        values.map((v, i) => record(i, v)),
        within(DEADLINE_MS),
      )
      .catch((e: unknown) => e);
    const took = Date.now() - t0;
    cluster.resume(coordinator);
    expect(pausedNode).toBe(coordinator);
    expect(error).toBeInstanceOf(TransactionInDoubtError);
    expect(error).toMatchObject({ reason: 'COMMIT_TIMEOUT', txnId });
    expect(took).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    const settler = adapterOf(txnId);
    const f0 = performance.now();
    await settler.producer.fence(within(30_000));
    const fate = settled(await committedRead(topic), values, error as TransactionInDoubtError);
    console.info(
      `txn-faults 5: in doubt after ${took} ms (deadline ${DEADLINE_MS} ms); fence settled it in ${(performance.now() - f0).toFixed(0)} ms: ${fate}`,
    );
  });

  it('1b. the commit answer lost with its connection: in doubt; fence settles it committed, each record once', async () => {
    const topic = topics[5] as string;
    const txnId = await txnIdCoordinatedBy(3, 'answer-lost');
    const { producer, tap } = adapterOf(txnId);
    await producer.send(topic, [record(0, 'warm')], within(20_000));
    tap.next({ apiKey: API.END_TXN, onAnswer: (_node, socket) => socket.destroy() });
    const values = ['l0', 'l1', 'l2'];
    const error = await producer
      .send(
        topic,
        values.map((v, i) => record(i, v)),
        within(20_000),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionInDoubtError);
    await adapterOf(txnId).producer.fence(within(30_000));
    expect(settled(await committedRead(topic), values, error as TransactionInDoubtError)).toBe(
      'committed',
    );
  });

  it('1. the coordinator killed as EndTxn goes out: in doubt with offsets; after fence, seen once or not at all, as the offsets say', async () => {
    const topic = topics[6] as string;
    // Whichever of nodes 2 and 3 leads a state partition (case 6 moved node 2's leaderships away).
    const txnId = await txnIdCoordinatedBy([2, 3], 'killed');
    const coordinator = (await stateLeaders()).get(statePartitionOf(txnId))?.leader;
    const { producer, tap } = adapterOf(txnId);
    await producer.send(topic, [record(0, 'warm')], within(20_000));
    let killed = -1;
    tap.next({
      apiKey: API.END_TXN,
      after: (node) => {
        killed = node;
        cluster.kill(node).catch(() => {});
      },
    });
    const values = ['k0', 'k1', 'k2'];
    const error = await producer
      .send(
        topic,
        values.map((v, i) => record(i, v)),
        within(20_000),
      )
      .catch((e: unknown) => e);
    expect(killed).toBe(coordinator);
    expect(error).toBeInstanceOf(TransactionInDoubtError);
    expect(error).toMatchObject({ txnId });
    const f0 = performance.now();
    await adapterOf(txnId).producer.fence(within(45_000));
    const fenceMs = performance.now() - f0;
    const fate = settled(await committedRead(topic), values, error as TransactionInDoubtError);
    console.info(
      `txn-faults 1: in doubt (${(error as TransactionInDoubtError).reason}, ${kafkaErrorType(error)}); fence on the new coordinator took ${fenceMs.toFixed(0)} ms: ${fate}`,
    );
  });
});
