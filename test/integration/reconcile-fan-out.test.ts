import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Admin, Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createGroupSource } from '../../functions/adapters/kafka/group-reader.js';
import { prefixScope, shardOf } from '../../functions/core/reconcile/group-shards.js';
import { createReconciler } from '../../functions/core/reconcile/reconciler.js';
import type { FanOutSummary } from '../../functions/core/reconcile/shard-summary.js';
import {
  type ReconcileSummary,
  summarizeReconcile,
} from '../../functions/core/reconcile/summary.js';
import { localDynamoDbClient } from '../../infra/local/local-tables.js';
import type { Invoke } from '../../infra/local/payload-limits.js';
import { createLocalStepFunctions, type Execution } from '../../infra/local/step-functions.js';
import { inProcessInvoker } from '../helpers/function-invoker.js';
import { setOffsets, testKafka } from '../helpers/kafka.js';
import { createTopic } from '../helpers/publish-client.js';
import { usePublishEnv } from '../helpers/publish-env.js';
import { memoryHistory, memoryMappings, memoryReports } from '../helpers/reconcile-stores.js';
import { uniqueName } from '../helpers/unique-name.js';

// The reconcile fan-out (infra/state-machines/reconcile-fan-out.asl.json) run by the local Step
// Functions runner, its Distributed Map's children calling our handlers, on consumer groups of
// the real local broker: its merged summary must equal the summary one sequential reconcile of
// the same groups gives, and every group's mappings and offset history must be written by
// exactly one child, once. Each scenario's groups share a fresh prefix (the fan-out's `prefix`
// input), so the other test files' groups on the shared broker are not part of the comparison.

const SHARDS = 4;
const PARTITIONS = 4;
const RECORDS_PER_PARTITION = 20;

describe('reconcile fan-out (Distributed Map)', () => {
  const kafka = testKafka('tally-test-reconcile-fan-out');
  const admin: Admin = kafka.admin();
  const consumers: Consumer[] = [];
  let env: Record<string, string>;
  let documents: DynamoDBDocumentClient;

  beforeAll(async () => {
    env = await usePublishEnv({ TALLY_RECONCILE_WINDOW: '5', TALLY_MAPPING_GRACE_SECONDS: '0' });
    documents = DynamoDBDocumentClient.from(localDynamoDbClient(inject('dynamodbEndpoint')));
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.disconnect()));
    await admin.disconnect();
  });

  /**
   * The state machine's tasks, called in this process as their Lambda would be (serverless.yml's
   * handlers), each call's payload recorded; `around` may fail a call after it ran.
   */
  const invoker = (
    calls: Array<[string, unknown]>,
    around?: (fn: string, payload: unknown, run: () => Promise<unknown>) => Promise<unknown>,
  ): Invoke => {
    const inProcess = inProcessInvoker();
    return async (fn, payload) => {
      calls.push([fn, payload]);
      const run = () => inProcess(fn, payload);
      return around ? around(fn, payload, run) : run();
    };
  };

  /** A consumer that reads the whole topic, commits, and stays in its group (Stable). */
  async function consumeAll(groupId: string, topic: string): Promise<void> {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 1000 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${groupId} consumed ${seen}`)), 30_000);
      consumer
        .run({
          eachMessage: async () => {
            if (++seen === PARTITIONS * RECORDS_PER_PARTITION) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    const ends = await admin.fetchTopicOffsets(topic);
    await consumer.commitOffsets(
      ends.map((o) => ({ topic, partition: o.partition, offset: o.high })),
    );
  }

  /**
   * Twelve groups named `<prefix>…` on one topic: two consuming (Stable, with members to map),
   * six committed at the log end (OK), four committed behind and not moving (ERR: STALL).
   */
  async function scenario() {
    const prefix = `${uniqueName('rfo')}.`;
    const topic = await createTopic(admin, PARTITIONS);
    const producer = kafka.producer();
    await producer.connect();
    for (let p = 0; p < PARTITIONS; p++) {
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: RECORDS_PER_PARTITION }, (_, i) => ({
          partition: p,
          value: `v${i}`,
        })),
      });
    }
    await producer.disconnect();
    const groups = Array.from({ length: 12 }, (_, i) => `${prefix}g${i}`);
    // Ten groups' offsets, set together.
    await Promise.all(
      groups.slice(2).map((groupId, i) => {
        const offset = String(i < 6 ? RECORDS_PER_PARTITION : RECORDS_PER_PARTITION / 2);
        const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({
          partition,
          offset,
        }));
        return setOffsets({ groupId, topic, partitions });
      }),
    );
    await Promise.all(groups.slice(0, 2).map((g) => consumeAll(g, topic)));
    return { prefix, groups };
  }

  /** One reconcile of the prefix's groups on the real broker, into stores of its own. */
  const sequentialSummary = async (prefix: string): Promise<ReconcileSummary> => {
    const source = createGroupSource(kafka);
    try {
      const report = await createReconciler(
        {
          source,
          history: memoryHistory(),
          mappings: memoryMappings(),
          reports: memoryReports(),
        },
        { windowSize: 5, graceMs: 0, retentionMs: 14 * 86_400_000, pruneBudget: 200 },
      ).run(prefixScope(prefix));
      return summarizeReconcile(report, env.TALLY_RECONCILE_REPORTS_TABLE as string);
    } finally {
      await source.close();
    }
  };

  /** What two runs' summaries share: not when they ran, nor how their admin calls split. */
  const comparable = (summary: ReconcileSummary) => {
    const { runAt: _r, adminCalls: _a, reports: _p, ...rest } = summary;
    const { shards: _s, children: _c, ...same } = rest as typeof rest & Partial<FanOutSummary>;
    return same;
  };

  const runFanOut = async (invoke: Invoke, prefix: string) => {
    const sfn = createLocalStepFunctions({ invoke, retryIntervalMs: 200 });
    const started = sfn.start('reconcile-fan-out', { shards: SHARDS, prefix });
    const done: Execution = await sfn.settled('reconcile-fan-out', started.name, 120_000);
    expect(done.status, `${done.error}: ${done.cause}`).toBe('SUCCEEDED');
    return { done, summary: done.output as FanOutSummary };
  };

  const scan = async (table: string) =>
    (await documents.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];

  /** The prefix's groups' offset history items and mappings, as stored. */
  const stored = async (prefix: string) => {
    const history = (await scan(env.TALLY_OFFSET_HISTORY_TABLE as string)).filter((item) =>
      String(item.group).startsWith(prefix),
    );
    const mappings = (await scan(env.TALLY_MAPPINGS_TABLE as string)).filter(
      (item) => String(item.groupId ?? '').startsWith(prefix) || String(item.pk).includes(prefix),
    );
    return { history, mappings };
  };

  it('shards the groups over 4 children whose merged summary is one sequential reconcile’s; each group is written once', async () => {
    const { prefix, groups } = await scenario();
    const sequential = await sequentialSummary(prefix);
    // The scenario shows in the sequential summary: otherwise equality would prove little.
    expect(sequential).toMatchObject({
      complete: true,
      groups: 12,
      partitions: 12 * PARTITIONS,
      statuses: { OK: 8, WARN: 0, ERR: 4 },
      anomalies: { STALL: 4 * PARTITIONS },
    });
    expect(sequential.problems.map((p) => p.group).sort()).toEqual(groups.slice(8).sort());

    const calls: Array<[string, unknown]> = [];
    const { done, summary } = await runFanOut(invoker(calls), prefix);
    const children = calls.filter(([fn]) => fn === 'reconcileFanOutChild');
    expect(children.map(([, p]) => (p as { shard: number }).shard).sort()).toEqual([0, 1, 2, 3]);
    expect(done.history.find((e) => e.type === 'MapRunFinished')?.mapRun).toMatchObject({
      items: SHARDS,
      succeeded: SHARDS,
      failed: 0,
    });
    const planned = new Set(groups.map((g) => shardOf(g, SHARDS)));
    expect(planned.size, 'the groups fall in more than two shards').toBeGreaterThan(2);
    expect(summary.children).toEqual({ planned: SHARDS, failed: 0 });
    expect(comparable(summary)).toEqual(comparable(sequential));
    expect(summary.mappings.written).toBe(sequential.mappings.written);
    expect(summary.mappings.written).toBeGreaterThan(0);

    // Every group's history written by one child, once (version 1: no other child or run wrote it).
    const { history, mappings } = await stored(prefix);
    expect([...new Set(history.map((item) => String(item.group)))].sort()).toEqual(
      [...groups].sort(),
    );
    expect(history.every((item) => Number(item.version) === 1)).toBe(true);
    expect(history).toHaveLength(groups.length);
    // The two consuming groups mapped: client → group and every partition → its owner.
    const mapped = new Set(mappings.map((m) => String(m.groupId ?? '')));
    expect([...mapped].filter((g) => g !== '').sort()).toEqual(groups.slice(0, 2).sort());
    expect(mappings).toHaveLength(summary.mappings.written);
  });

  it("retries a child that failed after writing (the Map's Retry): every group still reported and written once", async () => {
    const { prefix, groups } = await scenario();
    const sequential = await sequentialSummary(prefix);
    const calls: Array<[string, unknown]> = [];
    // The shard of a group that is ERR (not moving): its second observation is the retry's.
    const failing = shardOf(groups[10] as string, SHARDS);
    let failed = false;
    const flaky = invoker(calls, async (fn, payload, run) => {
      const result = await run();
      if (
        fn === 'reconcileFanOutChild' &&
        (payload as { shard: number }).shard === failing &&
        !failed
      ) {
        failed = true;
        // As a Lambda that timed out once its writes were done: the retry must write nothing twice.
        throw Object.assign(new Error('the task did not finish before the Lambda deadline'), {
          name: 'DependencyFailedError',
        });
      }
      return result;
    });
    const { summary } = await runFanOut(flaky, prefix);
    const children = calls.filter(([fn]) => fn === 'reconcileFanOutChild');
    expect(children).toHaveLength(SHARDS + 1);
    expect(children.filter(([, p]) => (p as { shard: number }).shard === failing)).toHaveLength(2);
    // The retry is a later observation of its groups: a commit that still has not moved reads
    // STOP rather than STALL (both ERR). Everything else is the sequential run's.
    expect(summary).toMatchObject({
      complete: true,
      groups: sequential.groups,
      partitions: sequential.partitions,
      statuses: sequential.statuses,
      problemsNotShown: 0,
      children: { planned: SHARDS, failed: 0 },
    });
    expect(summary.problems.map((p) => p.group).sort()).toEqual(
      sequential.problems.map((p) => p.group).sort(),
    );
    const { history, mappings } = await stored(prefix);
    expect(history.map((item) => String(item.group)).sort()).toEqual([...groups].sort());
    for (const item of history) {
      // Groups of other shards were written once; the retried shard's at most once more.
      const limit = shardOf(String(item.group), SHARDS) === failing ? 2 : 1;
      expect(Number(item.version), String(item.group)).toBeLessThanOrEqual(limit);
    }
    expect(mappings).toHaveLength(sequential.mappings.written);
  });
});
